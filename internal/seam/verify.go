package seam

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// FindingClass says what a verify finding is about. A check reports the
// class; the verify mode the user chose maps it to a severity (note,
// warning or error), so backends never decide how strict a user is.
type FindingClass int

const (
	// ClassNote is a fact, never a problem: an open tail turn that dsh
	// closes on resume, older generations kept beside the live log.
	ClassNote FindingClass = iota
	// ClassIrregular is something dsh tolerates but its writer never
	// leaves behind: a stray temp file, a frame without a checksum.
	ClassIrregular
	// ClassTail is a torn or uncommitted tail: bytes after the committed
	// log that readers ignore and the write path removes (store.md 4).
	ClassTail
	// ClassDamage is damaged committed data, or anything else that makes
	// dsh refuse the session.
	ClassDamage
)

// Finding is one thing a verifier found in stored data.
type Finding struct {
	Class FindingClass
	// Code names the check, stable for scripts: "frame-checksum",
	// "seq-gap", "torn-tail", ...
	Code    string
	Message string
	Pos     Pos
	// FileType is what a file that is not a regular file is ("a FIFO",
	// "a symbolic link"), in findings about one; else "".
	FileType string
}

// UnitEnd says how a storage unit whose records were provisional ended
// (see LogVisitor.BeginUnit).
type UnitEnd int

const (
	// UnitComplete confirms the unit's records.
	UnitComplete UnitEnd = iota
	// UnitDamaged withdraws them: the unit failed its check (a Finding
	// says how) and none of its records is committed.
	UnitDamaged
	// UnitTorn withdraws them as the torn final unit: its records were
	// never committed, but a salvage can re-append the complete ones.
	UnitTorn
)

// LogVisitor receives, in storage order, what a LogVerifier finds in one
// session's log: layout and header findings first, then Header, then the
// body's records and findings.
type LogVisitor interface {
	// Header gives the log's header. valid is false when it is missing or
	// invalid (a Finding said why); h then holds only the format version
	// the body is read as.
	Header(h Header, valid bool)
	// Record gives one complete physical record that decodes as a row of
	// the log's version (envelope, packed-row, surfaceOp and
	// sourceEventSeqs rules hold).
	Record(r *Record, p Pos)
	// BadRecord gives a complete record that does not decode; turnEnd is
	// set when it is nonetheless a turn/end event, which commits every
	// record before it (store.md 4).
	BadRecord(p Pos, cause error, turnEnd bool)
	// BeginUnit marks the records that follow as provisional: they come
	// from a storage unit (a zstd frame) that is read before it is
	// verified whole. EndUnit confirms or withdraws them.
	BeginUnit(p Pos)
	EndUnit(end UnitEnd)
	// TornTail reports size bytes at p.Offset, after the last complete
	// record or unit, that readers never serve.
	TornTail(p Pos, size int64)
	// Finding reports anything else: damaged frames, layout, facts.
	Finding(f Finding)
}

// ErrNotChecked matches the cause a LogVerifier gives BadRecord for a
// complete record it did not check (one too large to hold), a
// *NotCheckedError: nothing says it is sound, so the commit rule treats it
// as a record that may not decode.
var ErrNotChecked = errors.New("record not checked")

// NotCheckedError is the cause a LogVerifier gives BadRecord for a
// record it did not check: it matches ErrNotChecked, and ErrLimit too
// when OverLimit.
type NotCheckedError struct {
	Why       string // why it was not checked: "record of N bytes, more than ..."
	OverLimit bool   // the record is over the reader's own record limit
}

func (e *NotCheckedError) Error() string { return e.Why + ": " + ErrNotChecked.Error() }

func (e *NotCheckedError) Unwrap() []error {
	if e.OverLimit {
		return []error{ErrNotChecked, ErrLimit}
	}
	return []error{ErrNotChecked}
}

// LogSummary is what a LogVerifier read.
type LogSummary struct {
	Location Location
	// Size is the log's size in bytes.
	Size int64
	// Frames counts the complete zstd frames (0 for other encodings), and
	// Lines the complete records (lines of decoded text); the header's
	// included in both.
	Frames, Lines int64
}

// LogVerifier is implemented by backends that can check a session's
// stored bytes or rows themselves, below the events a Handle serves:
// frames, checksums, physical records, the layout of its files.
type LogVerifier interface {
	// VerifyLog reads the storage of session id once, front to back, with
	// memory bounded whatever it holds, and tells v what it finds. The
	// error is operational only (not found, I/O, cancellation): problems
	// with the data go to v.
	VerifyLog(ctx context.Context, id string, v LogVisitor) (LogSummary, error)
}

// StoreLayout is what a LayoutVerifier found in a whole store.
type StoreLayout struct {
	// Sessions are the ids whose logs VerifyLog checks, each once.
	Sessions []string
	// Strays are entries that look like sessions but are not readable
	// ones (a log in the old flat layout, a folder name that is not an
	// encoded id, an id stored twice), with what is wrong with them.
	Strays []Stray
}

// Stray is an entry of a store that is not a readable session.
type Stray struct {
	Name     string // the id, or the entry's file name when it names none
	Path     string
	Findings []Finding
}

// LayoutVerifier is implemented by backends that can check how a whole
// store is laid out, beyond each session's own storage.
type LayoutVerifier interface {
	VerifyLayout(ctx context.Context) (StoreLayout, error)
}

// TrimResult is what TrimTail did.
type TrimResult struct {
	// Repairs lists the tails removed, with the backup of their bytes;
	// empty when the log had no tail.
	Repairs []Repair
	// Salvaged counts the events re-appended from a torn final unit,
	// from seq SalvagedFrom on.
	Salvaged     int64
	SalvagedFrom int64
}

// TrimPlan is the tail a caller verified, with the session's write lock
// held, and asks TrimTail to remove: the cut comes from that verification,
// never from the handle's own reading alone.
type TrimPlan struct {
	// Tails are the tails to remove, in log order, as the verification
	// located them (Path, Backup and Rewritten unset): an uncommitted tail,
	// a torn one, or both.
	Tails []Repair
	// Rewrite counts the committed records before the first uncommitted
	// one in its storage unit (a zstd frame), which the trim writes back.
	Rewrite int
	// Salvage, when above 0, is how many events of the complete records of
	// a torn final unit the trim re-appends after the cut.
	Salvage int64
}

// SameTails reports whether two lists of tails locate the same bytes or
// rows: offsets, sizes, kinds and seqs agree.
func SameTails(a, b []Repair) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.Offset != y.Offset || x.Bytes != y.Bytes || x.Kind != y.Kind || (x.Seq == nil) != (y.Seq == nil) || x.Seq != nil && *x.Seq != *y.Seq {
			return false
		}
	}
	return true
}

// DescribeTails words a list of tails for a message: "an uncommitted tail
// of 40 bytes at byte 100 and a torn tail of 16 bytes at byte 140", or "no
// tail".
func DescribeTails(tails []Repair) string {
	if len(tails) == 0 {
		return "no tail"
	}
	var b strings.Builder
	for i, t := range tails {
		if i > 0 {
			b.WriteString(" and ")
		}
		article := "a"
		if t.Kind == RepairUncommitted {
			article = "an"
		}
		fmt.Fprintf(&b, "%s %s tail of %d bytes", article, t.Kind, t.Bytes)
		switch {
		case t.Seq != nil && t.Offset < 0:
			fmt.Fprintf(&b, " in row seq %d", *t.Seq)
		default:
			fmt.Fprintf(&b, " at byte %d", t.Offset)
		}
	}
	return b.String()
}

// TailTrimmer is implemented by the write handles of backends that can
// remove a torn or uncommitted tail without appending (verify --repair).
type TailTrimmer interface {
	// TrimTail removes the tail plan describes: it saves its bytes to a
	// backup outside the store and fsyncs it, then cuts them from the log
	// and fsyncs; committed data is never changed. With plan.Salvage, the
	// complete records of a torn final unit that continue the log are
	// re-appended after the cut, as a unit of their own. When the
	// handle's own reading of the log does not find exactly the tail,
	// rewrite and salvage of plan, it changes nothing and fails with
	// ErrTailMismatch, saying what each found. An empty plan on a log
	// without a tail does nothing.
	TrimTail(ctx context.Context, plan TrimPlan) (TrimResult, error)
}
