// Package seam is the persistence seam of dshctl: the contracts every session
// store backend implements, the errors a consumer can see, and pure validation
// helpers for durable data. It holds no storage code; each backend owns its
// files, frames, locks or SQL.
package seam

import (
	"context"
	"io"
	"iter"
)

// Access says whether a handle may write.
type Access int

const (
	// Read handles never take ownership and work while a writer exists.
	Read Access = iota
	// Write handles hold single-writer ownership of a session.
	Write
)

// String returns "read" or "write".
func (a Access) String() string {
	if a == Write {
		return "write"
	}
	return "read"
}

// Service is one session store.
type Service interface {
	// Create takes write ownership of a new id. Nothing is written until the
	// first Append or Flush; closing the handle without either erases the
	// pending session. It fails with ErrAlreadyExists when the id is stored or
	// pending in this service.
	Create(ctx context.Context, h Header, opts CreateOptions) (Handle, error)
	// Open opens a stored session. A failed write open releases its claim.
	Open(ctx context.Context, id string, access Access) (Handle, error)
	// Stat returns metadata without reading the log body.
	Stat(ctx context.Context, id string) (Snapshot, error)
	// List returns every visible session. An entry that is a session but
	// cannot be read is returned with Err set, never dropped.
	List(ctx context.Context) ([]Entry, error)
	// Flush is a durability barrier over every open write handle; the errors
	// of the handles are joined.
	Flush(ctx context.Context) error
	// Close releases the service's resources. Open handles stay usable only
	// if the backend says so; callers close handles first.
	Close() error
}

// CreateOptions are the parameters of Create that are not in the header.
type CreateOptions struct {
	// InheritedEventCount is required for a seeded header and must be 0
	// otherwise.
	InheritedEventCount int64
}

// Handle is an open session.
type Handle interface {
	ID() string
	Header() Header
	// InheritedEventCount is the number of events copied from a parent
	// session (a fork or a seeded subagent); 0 when not seeded.
	InheritedEventCount() int64
	Access() Access
	// Snapshot returns the metadata of the log as this handle reads it now,
	// with the same meaning as Service.Stat but from the handle's own view:
	// a read handle reports the log it reads (following it when a writer
	// replaced it), a write handle the state its appends left, a pending
	// create the empty session. A consumer that needs metadata and events
	// that agree takes both from one handle instead of pairing Stat with
	// Open, between which a concurrent append can land. A scan started after
	// Snapshot returns sees at least EventCount events.
	Snapshot(ctx context.Context) (Snapshot, error)

	// Read returns the validated contiguous events starting at seq offset;
	// length < 0 means to the end. An offset at or past the end gives an
	// empty slice. Nothing from a torn tail is ever returned.
	Read(ctx context.Context, offset, length int64) ([]Event, error)
	// Scan streams committed events in the order and within the bounds opts
	// asks for, with memory bounded by the largest record, not the log.
	Scan(ctx context.Context, opts ScanOptions) iter.Seq2[Event, error]
	// Append stores a batch durably. Its first seq must equal the next seq;
	// an empty batch is a no-op.
	Append(ctx context.Context, events []Event) error
	// Flush is a durability barrier; it also materializes an empty created
	// session (header only).
	Flush(ctx context.Context) error
	// Close is idempotent; a write handle releases ownership. Every later
	// operation fails with ErrHandleClosed.
	Close() error
}

// ScanOptions bound a streaming read.
type ScanOptions struct {
	// From is the first seq to yield (forward) or the seq to start below
	// (Reverse: events with seq < From; 0 means from the end).
	From int64
	// Reverse walks from the last committed event toward the first.
	Reverse bool
	// MaxBytes bounds the work of the scan (0: no bound): the stored
	// bytes it reads, in the backend's own measure of them (bytes of the
	// log file for JSONL, bytes of the rows read for a database), and, so
	// that a scan costs at most its budget whatever the log holds
	// (compressed data can expand a thousandfold), the decoded bytes it
	// goes through (ScanDecodedFactor × MaxBytes) and the records
	// (MaxBytes / ScanRecordCost). Past any of them the scan yields
	// ErrScanBudget and stops, so a caller can degrade conservatively
	// instead of reading a whole log.
	MaxBytes int64
	// Transient lets the backend yield events whose Data and SurfaceOp
	// alias its own buffers, valid only until the iteration goes on, so
	// that a consumer that writes each event out and keeps none (cat,
	// export, counting) costs no copy of them. A backend may ignore it.
	Transient bool
}

// The budget of a scan in decoded bytes and records, for a MaxBytes of
// physical bytes: generous for real logs (JSON compresses about tenfold,
// an event takes hundreds of bytes), small for hostile ones.
const (
	ScanDecodedFactor = 16
	ScanRecordCost    = 16
)

// Snapshot is what Stat and List report about one session.
type Snapshot struct {
	Header Header
	// Revision changes whenever the log changes; Stat and List agree on it.
	Revision string
	// EventCount is the next seq, derived from the last committed physical
	// row, never from a full read.
	EventCount int64
	// SizeBytes is the physical size of the live log.
	SizeBytes int64
	Location  Location
}

// Location says where a session lives, for display and for verify; consumers
// never open files with it.
type Location struct {
	Backend string `json:"backend"` // "jsonl" or "sqlite"
	// Path is the live log file, or the database file.
	Path string `json:"path"`
	// Encoding is how the backend stores the log: "zstd" or "none" for
	// JSONL, "sqlite-14" or "sqlite-17".
	Encoding string `json:"encoding"`
	// Generation is the format generation of the live log.
	Generation int `json:"generation"`
	// OlderGenerations lists generations kept beside the live log.
	OlderGenerations []int `json:"olderGenerations,omitempty"`
	// TornBytes counts the stored bytes of a torn tail: an append that was
	// interrupted before it completed, which readers ignore. 0 for a
	// backend whose appends are atomic.
	TornBytes int64 `json:"tornBytes"`
	// UncommittedBytes counts the stored bytes, before any torn tail, of an
	// uncommitted tail (store.md 4): complete records from the first
	// invalid one on, never served, as far as the end of the log shows it
	// without a full read. It is what the next append removes besides the
	// torn tail, counted in the backend's storage units: a backend that
	// stores records in compressed groups counts from the start of the
	// group holding the first uncommitted record (its committed records are
	// written back). 0 for a backend that cannot hold such a tail.
	UncommittedBytes int64 `json:"uncommittedBytes"`
}

// Entry is one session found by List.
type Entry struct {
	Snapshot Snapshot
	// Err is set when the entry is a session that cannot be read; Snapshot
	// then holds at least the id and the location.
	Err error
}

// Repair kinds: what a write path removed before it appended.
const (
	// RepairTorn is a torn tail: an incomplete final line or frame.
	RepairTorn = "torn"
	// RepairUncommitted is an uncommitted tail: complete records from the
	// first invalid one on (store.md 4).
	RepairUncommitted = "uncommitted"
)

// Repair describes bytes a write handle removed from a log before it
// appended. Nothing removed is thrown away: Backup holds the bytes.
type Repair struct {
	// Path is the log the bytes were removed from.
	Path string `json:"path"`
	// Offset is the byte offset in Path where the removed bytes started.
	Offset int64 `json:"offset"`
	// Bytes is how many bytes were removed.
	Bytes int64 `json:"bytes"`
	// Kind is RepairTorn or RepairUncommitted.
	Kind string `json:"kind"`
	// Backup is the file that keeps the removed bytes (several repairs of
	// one append can share it).
	Backup string `json:"backup"`
	// Rewritten is the size of the committed text that shared a zstd frame
	// with the first uncommitted record; it was written back as a frame of
	// its own, so no committed record is lost.
	Rewritten int64 `json:"rewritten,omitempty"`
	// Seq is the seq of the row removed from a store of rows (SQLite),
	// where Offset is -1; nil for bytes of a file.
	Seq *int64 `json:"seq"`
}

// TailRepairer is implemented by the write handles of backends whose write
// path removes a torn or uncommitted tail before it appends, so that a
// consumer can say what was removed and where the bytes were saved.
type TailRepairer interface {
	// Repairs returns the repairs the handle made so far, oldest first.
	Repairs() []Repair
}

// LockProber is implemented by backends that can tell whether another
// process holds a session's write lock without taking it.
type LockProber interface {
	WriterActive(ctx context.Context, id string) (bool, error)
}

// FormatLimiter is implemented by services whose storage holds only some
// log formats (a schema-14 database: v0 only, as the dsh that wrote it
// refuses any other). Create refuses a newer format with ErrInvalid.
type FormatLimiter interface {
	// MaxFormatVersion is the newest log format the store can hold.
	MaxFormatVersion() int
}

// Renumberer is implemented by services whose logs can hold records whose
// seqs repeat or go back, as two writers leave them when both append from
// the same next seq without a lock (dsh 0.1.0), a log dsh refuses.
// Renumber rewrites such a log keeping every event, in stored order, with
// contiguous seqs from 0, and what each event cites by seq following the
// event it cited. It refuses (ErrCorrupt, nothing changed) a log with any
// other damage, saves the whole log to a backup first, and replaces it
// atomically; a log whose seqs do not repeat is left as it is
// (Overlaps 0).
type Renumberer interface {
	Renumber(ctx context.Context, id string, o RenumberOptions) (RenumberResult, error)
}

// RenumberOptions configure Renumber.
type RenumberOptions struct {
	// DryRun plans and checks, writing nothing.
	DryRun bool
}

// RenumberResult is what Renumber did, or in a dry run would do.
type RenumberResult struct {
	Path string `json:"path"`
	// Backup keeps the whole log as it was; empty when nothing was written.
	Backup string `json:"backup"`
	// Events is the number of events of the log; Renumbered how many got a
	// new seq, from FirstSeq on (-1: none); Overlaps the places where seqs
	// repeated; Cites the citations (sourceEventSeqs, replace ranges)
	// changed.
	Events     int64 `json:"eventCount"`
	Renumbered int64 `json:"renumbered"`
	FirstSeq   int64 `json:"firstSeq"`
	Overlaps   int   `json:"overlaps"`
	Cites      int64 `json:"cites"`
}

// Finder is implemented by services that can tell whether a session is
// stored without reading its log, as Stat does: a command that resolves an
// id (or a prefix of one) before its real work then reads the log once.
type Finder interface {
	// Find returns nil when Stat would find session id (whatever it would
	// say of the log), else the error Stat returns: ErrNotFound when the id
	// is not stored or pending in this service.
	Find(ctx context.Context, id string) error
}

// FileKeeper is implemented by services that keep their sessions in
// files, so that a consumer that writes files (export) can refuse to
// replace one of them.
type FileKeeper interface {
	// StorePaths returns the absolute paths of the store's files; a
	// directory stands for everything under it.
	StorePaths() []string
}

// StoredFile is a file that holds a session, as stored: a log file, or
// an older generation of it.
type StoredFile struct {
	// Name is the file's name in the session's folder.
	Name string
	// Open opens it for reading: its bytes as they are, up to its size at
	// Open (what is appended meanwhile is not read).
	Open func() (io.ReadCloser, error)
}

// FileStorer is implemented by services that keep each session in files
// of its own, so that a consumer can copy them byte for byte (export
// --include-raw, for a bug report).
type FileStorer interface {
	// SessionFiles returns the files of session id, oldest generation
	// first, the live log last. Opening one never follows a symbolic link
	// and refuses anything but a regular file.
	SessionFiles(ctx context.Context, id string) ([]StoredFile, error)
}

// RawRecord is one physical record as stored, header first (packed rows
// and range pairs not expanded).
type RawRecord struct {
	// Line is the record's JSON text as stored, with a trailing newline.
	Line []byte
	// Offset is the record's byte offset in the stored text of the log:
	// the concatenation of its records' lines, in order.
	Offset int64
	// Group locates the storage unit holding the record, for a backend that
	// stores several records as one unit (each zstd frame of a JSONL log);
	// nil for a backend that stores records one by one.
	Group *RecordGroup
	// Events is the number of logical events the record stands for: 0 for
	// one that holds none (a log's header, a session row), the members of
	// a packed row, else 1 — also for a record too damaged to decode. It
	// pairs the records with the events readers serve (cat --raw prints
	// the served ones).
	Events int
}

// RecordGroup is a storage unit that holds several records together.
type RecordGroup struct {
	// Index numbers the groups of a log from 0, in order.
	Index int
	// Offset and Size locate the group in the backend's storage (the byte
	// range of a zstd frame in a log file).
	Offset, Size int64
}

// RawReader is implemented by handles whose backend can give the records
// exactly as stored, for `cat --raw`.
type RawReader interface {
	Raw(ctx context.Context) iter.Seq2[RawRecord, error]
}

// StreamAppender is implemented by write handles that take a batch larger
// than memory: AppendStream stores, as one append, the events next yields
// chunk by chunk (each continuing the previous; an empty chunk ends the
// batch), holding one chunk at a time. The rules are Append's: the batch
// is validated as it is written (PrepareBatch), and an error (of next, of
// a chunk, of the write) leaves the log as it was before the batch. How
// much of a batch a crash can leave is the backend's to document: a
// transaction keeps it whole; a JSONL log keeps whole lines (plain) or
// whole frames (zstd), a frame holding as much of the batch as the
// reader's frame limit lets it.
type StreamAppender interface {
	AppendStream(ctx context.Context, next func() ([]Event, error)) error
}
