package seam

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Sentinel errors a consumer can match with errors.Is.
var (
	ErrNotFound          = errors.New("not found")
	ErrAlreadyExists     = errors.New("already exists")
	ErrAlreadyOwned      = errors.New("session is in use by another writer")
	ErrReadOnly          = errors.New("handle is read-only")
	ErrOwnershipLost     = errors.New("write ownership lost; close and reopen")
	ErrHandleClosed      = errors.New("handle is closed")
	ErrCorrupt           = errors.New("corrupt session log")
	ErrUnsupportedFormat = errors.New("unsupported session log")
	ErrSeqMismatch       = errors.New("append seq mismatch")
	// ErrInvalid rejects a value a caller passed (a header or a batch) before
	// anything is stored.
	ErrInvalid = errors.New("invalid")
	// ErrScanBudget ends a Scan that reached its MaxBytes bound.
	ErrScanBudget = errors.New("scan budget exhausted")
	// ErrLimit reports stored data beyond a limit of the reader (a record
	// or a compressed frame larger than it holds in memory or decodes):
	// not a verdict on the data, which the backend's options can let it
	// read.
	ErrLimit = errors.New("exceeds a reader limit")
	// ErrIO reports a failed file or database operation (the cause says
	// which), so no backend returns a bare os or SQL error.
	ErrIO = errors.New("i/o error")
	// ErrNoBackupDir fails a repair by a backend opened without a place
	// for the bytes it would remove: removed bytes are always kept, so
	// nothing is removed.
	ErrNoBackupDir = errors.New("no backup directory for the bytes a repair removes")
	// ErrTailMismatch fails a repair whose plan (the tail a verification
	// found) is not the tail the write path finds: nothing is changed.
	ErrTailMismatch = errors.New("the tail differs from the one verified")
)

// OverlapError is a record whose first seq repeats seqs the log already
// holds, or goes back before them: what two writers leave when both append
// from the same next seq (dsh 0.1.0 takes no lock). It is the cause of an
// ErrCorrupt; dsh refuses such a log, and a renumbering repair keeps every
// event of it.
type OverlapError struct {
	Seq  int64 // the first seq of the record
	Want int64 // the seq the log expected there
}

func (e *OverlapError) Error() string {
	return fmt.Sprintf("seq %d overlaps: expected %d", e.Seq, e.Want)
}

// InUseError is the cause of an ErrAlreadyOwned that no lock showed: the
// session looks in use by a writer that takes no lock (dsh 0.1.0's JSONL
// writer, any dsh on a SQLite store). Nothing was written.
type InUseError struct {
	// PID and Command name a process that has Path (the log or database,
	// also in the error's position) open for writing; PID is 0 when none
	// was seen.
	PID     int
	Command string
	Path    string
	// AnyAccess says the system told only that the process has Path
	// open, not whether for writing (Windows).
	AnyAccess bool
	// ChangedAgo, when PID is 0, is how long ago the log changed, not by
	// dshctl.
	ChangedAgo time.Duration
	// CannotTell says the operating system does not tell which processes
	// have a file open, so none could be named.
	CannotTell bool
	// Wrote, when positive, is how many bytes another process appended to
	// the log while dshctl was rewriting it: the rewrite was given up.
	Wrote int64
}

func (e *InUseError) Error() string {
	if e.Wrote > 0 {
		return fmt.Sprintf("another process appended %d bytes to the log while dshctl was rewriting it", e.Wrote)
	}
	if e.PID > 0 {
		who := "process " + strconv.Itoa(e.PID)
		if e.Command != "" {
			who += " (" + e.Command + ")"
		}
		if e.AnyAccess {
			return who + " has it open (this system does not say whether for writing)"
		}
		return who + " has it open for writing"
	}
	msg := fmt.Sprintf("its log changed %.1f s ago, and not by dshctl", e.ChangedAgo.Seconds())
	if e.CannotTell {
		msg += " (this system cannot tell which process has it open)"
	}
	return msg
}

// Causes of ErrCorrupt that name the rule a stored record breaks, for a
// verifier to classify it with errors.Is; they are not part of the
// message, which says what is wrong in its own words.
var (
	// ErrRecordSyntax is a record that is not one JSON object.
	ErrRecordSyntax = errors.New("record is not a JSON object")
	// ErrPackedRow is a packed row that is invalid or not allowed where
	// it is.
	ErrPackedRow = errors.New("invalid packed row")
	// ErrSourceEventSeqs is an invalid sourceEventSeqs.
	ErrSourceEventSeqs = errors.New("invalid sourceEventSeqs")
	// ErrSurfaceOp is a surfaceOp invalid, missing or where none may be.
	ErrSurfaceOp = errors.New("invalid surfaceOp")
)

// ruleError is a cause that matches the rule it breaks (one of the
// sentinels above) without naming it: its message is err's.
type ruleError struct {
	rule error
	err  error
}

func (e *ruleError) Error() string   { return e.err.Error() }
func (e *ruleError) Unwrap() []error { return []error{e.err, e.rule} }

// Pos locates a problem in stored data. Unknown fields are -1 (or "").
type Pos struct {
	Path   string // file or database
	Offset int64  // byte offset in the file
	Frame  int    // zstd frame index
	Line   int    // 1-based line in the decoded text
	Seq    int64  // event seq
}

// NoPos is a Pos with nothing known.
var NoPos = Pos{Offset: -1, Frame: -1, Line: -1, Seq: -1}

// PathPos is the position of a whole file: its path, nothing within it.
func PathPos(path string) Pos {
	p := NoPos
	p.Path = path
	return p
}

// String lists the known fields of p (frame, byte, line, seq), then the
// path; it is empty when nothing is known.
func (p Pos) String() string {
	var parts []string
	if p.Frame >= 0 {
		parts = append(parts, fmt.Sprintf("frame %d", p.Frame))
	}
	if p.Offset >= 0 {
		parts = append(parts, fmt.Sprintf("byte %d", p.Offset))
	}
	if p.Line > 0 {
		parts = append(parts, fmt.Sprintf("line %d", p.Line))
	}
	if p.Seq >= 0 {
		parts = append(parts, fmt.Sprintf("seq %d", p.Seq))
	}
	// The path comes last: messages about a log end with its path.
	if p.Path != "" {
		parts = append(parts, p.Path)
	}
	return strings.Join(parts, ", ")
}

// Error is the typed error every backend returns: a sentinel Kind, the
// operation and session, where it happened and why.
type Error struct {
	Kind error  // one of the sentinels above
	Op   string // "open", "read", "append", ...
	ID   string // session id, when known
	Pos  Pos
	Err  error // the cause, may be nil
}

// Error returns "<op> "<id>": <kind>: <cause> (<position>)", leaving out
// what is unknown; a seq mismatch is its cause's message alone.
func (e *Error) Error() string {
	var b strings.Builder
	if e.Kind == ErrSeqMismatch && e.Err != nil {
		return e.Err.Error()
	}
	if e.Op != "" {
		b.WriteString(e.Op)
		if e.ID != "" {
			fmt.Fprintf(&b, " %q", e.ID)
		}
		b.WriteString(": ")
	} else if e.ID != "" {
		fmt.Fprintf(&b, "session %q: ", e.ID)
	}
	b.WriteString(e.Kind.Error())
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	if where := e.Pos.String(); where != "" {
		b.WriteString(" (")
		b.WriteString(where)
		b.WriteString(")")
	}
	return b.String()
}

// Unwrap exposes both the sentinel and the cause to errors.Is and errors.As.
func (e *Error) Unwrap() []error {
	if e.Err == nil {
		return []error{e.Kind}
	}
	return []error{e.Kind, e.Err}
}

// Errorf builds an *Error of the given kind with a formatted cause.
func Errorf(kind error, op, id string, pos Pos, format string, args ...any) *Error {
	return &Error{Kind: kind, Op: op, ID: id, Pos: pos, Err: fmt.Errorf(format, args...)}
}

// Wrap returns err as an *Error with op and id filled in where missing. An
// err that carries no sentinel becomes kind.
func Wrap(err error, kind error, op, id string) error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		c := *e
		if c.Op == "" {
			c.Op = op
		}
		if c.ID == "" {
			c.ID = id
		}
		return &c
	}
	return &Error{Kind: kind, Op: op, ID: id, Pos: NoPos, Err: err}
}

// NotFound reports an absent session.
func NotFound(op, id string) *Error {
	return &Error{Kind: ErrNotFound, Op: op, ID: id, Pos: NoPos}
}

// seqMismatch reports a non-contiguous append batch.
func seqMismatch(id string, expected int64, index int, got int64) *Error {
	return &Error{Kind: ErrSeqMismatch, Op: "append", ID: id, Pos: NoPos,
		Err: fmt.Errorf("append seq mismatch for %q: expected %d at index %d, got %d", id, expected, index, got)}
}

// CheckWritable returns the error of operation op on a handle of session
// id that is closed or was opened only to read, and nil for an open write
// handle: the check every write method of a backend makes first.
func CheckWritable(op, id string, closed bool, access Access) error {
	if closed {
		return &Error{Kind: ErrHandleClosed, Op: op, ID: id, Pos: NoPos}
	}
	if access != Write {
		return &Error{Kind: ErrReadOnly, Op: op, ID: id, Pos: NoPos}
	}
	return nil
}
