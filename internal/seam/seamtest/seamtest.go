// Package seamtest is the contract suite of the persistence seam: the
// behaviour every seam.Service backend must show, whatever its storage
// (spec/seam.md, "Contract suite", points 1 to 22, and 23: a handle's
// Snapshot).
//
// A backend runs it from its own tests:
//
//	func TestContract(t *testing.T) {
//		seamtest.Run(t, backend{}, seamtest.WithExport(exportSession))
//	}
//
// where backend implements Backend:
//
//   - Versions lists the log formats the suite creates sessions with (say 0
//     and 4); every point runs once per version.
//   - New opens a service on the store rooted at dir. Each call is a fresh
//     service, as a new process would open it; two services on one dir
//     share what is stored and nothing else.
//   - WriteLog stores a log verbatim, as dsh would have written it. The
//     records may be v0 packed rows and may hold event types the vocabulary
//     does not know, so it must not validate them; a backend whose format has
//     no packed rows stores their expanded events instead.
//   - TearTail leaves the bytes of an interrupted append after the last
//     committed record: a torn line, a torn zstd frame, a torn final row.
//   - HoldLockElsewhere takes a session's write lock in another process and
//     holds it until release is called. HoldInChild and RunChild do the
//     re-exec of the test binary; the backend supplies only the locking.
//
// Point 22 (the same export bytes from every backend) runs the export the
// test passes with WithExport; see ExportFunc.
//
// The suite expects the errors seam.md lists, matched with errors.Is; where
// seam.md leaves the kind open it expects seam.ErrInvalid for a value the
// caller passed (a negative read offset, a payload that is not JSON). A
// create that races another create of the same id, in this service or in
// another one, fails with seam.ErrAlreadyExists, either at Create or at the
// Append or Flush that would publish the session.
package seamtest

import (
	"testing"

	"github.com/dshctl/dshctl/internal/seam"
)

// Backend is what a backend's test supplies to Run. Each method fails t
// (t.Fatal) when it cannot do its work.
type Backend interface {
	// Versions lists the log format versions the suite creates sessions
	// with; the suite runs every point once per version.
	Versions() []int
	// New opens a fresh service on the store at dir.
	New(t *testing.T, dir string) seam.Service
	// WriteLog stores a complete log for header h, with body records (one
	// JSON object each, without newline) exactly as given: no validation, no
	// packing or unpacking, except that a backend without packed rows in its
	// format expands them. The session must not exist yet.
	WriteLog(t *testing.T, dir string, h seam.Header, records [][]byte)
	// TearTail appends to stored session id the torn physical tail a crash
	// in the middle of an append leaves behind.
	TearTail(t *testing.T, dir, id string)
	// HoldLockElsewhere holds the write lock of session id from another
	// process until release is called.
	HoldLockElsewhere(t *testing.T, dir, id string) (release func())
}

// NoIgnorableFlag is implemented by a Backend whose format has no place
// for the ignorable flag (SQLite schema 14). Point 18 then checks that
// Append refuses an ignorable event with seam.ErrInvalid and stores
// nothing, instead of serving a stored one: dropping the flag would make
// the log unreadable.
type NoIgnorableFlag interface {
	NoIgnorableFlag()
}

// NoTornTail is implemented by a Backend whose format cannot hold a torn
// tail (SQLite schema 14: an append is one transaction and no row is
// packed); its TearTail leaves a damaged final record instead. Point 19
// then checks that reads, Stat, List and a write open report that record
// as ErrCorrupt and that nothing is removed; point 21 skips its torn cases.
type NoTornTail interface {
	NoTornTail()
}

// Run runs the contract suite against b, one subtest per version and per
// point of seam.md.
func Run(t *testing.T, b Backend, opts ...Option) {
	versions := b.Versions()
	if len(versions) == 0 {
		t.Fatal("seamtest: Backend.Versions lists no version")
	}
	for _, v := range versions {
		t.Run(versionName(v), func(t *testing.T) {
			s := &suite{b: b, v: v}
			for _, o := range opts {
				o(s)
			}
			for _, p := range points {
				t.Run(p.name, func(t *testing.T) { p.run(s, t) })
			}
		})
	}
}

var points = []struct {
	name string
	run  func(*suite, *testing.T)
}{
	{"01_round_trip", (*suite).roundTrip},
	{"02_negative_offset", (*suite).negativeOffset},
	{"03_duplicate_create_pending", (*suite).duplicateCreatePending},
	{"04_concurrent_duplicate_creates", (*suite).concurrentCreates},
	{"05_duplicate_create_stored", (*suite).duplicateCreateStored},
	{"06_open_absent", (*suite).openAbsent},
	{"07_single_writer", (*suite).singleWriter},
	{"08_read_only", (*suite).readOnly},
	{"09_closed_handle", (*suite).closedHandle},
	{"10_service_flush", (*suite).serviceFlush},
	{"11_pending_visibility", (*suite).pendingVisibility},
	{"12_close_erases_pending", (*suite).closeErases},
	{"13_flush_materializes_empty", (*suite).flushMaterializes},
	{"14_freshness", (*suite).freshness},
	{"15_continue_after_reopen", (*suite).continueAfterReopen},
	{"16_non_contiguous_batch", (*suite).nonContiguous},
	{"17_invalid_payload", (*suite).invalidPayload},
	{"18_vocabulary", (*suite).vocabulary},
	{"19_torn_tail", (*suite).tornTail},
	{"20_revisions", (*suite).revisions},
	{"21_event_count", (*suite).eventCount},
	{"22_export_byte_identity", (*suite).exportIdentity},
	{"23_handle_snapshot", (*suite).handleSnapshot},
}
