package seam

import (
	"errors"
	"fmt"
	"io/fs"
	"testing"
	"time"
)

func TestErrorMessages(t *testing.T) {
	for _, c := range []struct {
		err  error
		kind error
		want string
	}{
		{NotFound("open", "s1"), ErrNotFound, `open "s1": not found`},
		{seqMismatch("s1", 5, 2, 9), ErrSeqMismatch, `append seq mismatch for "s1": expected 5 at index 2, got 9`},
		{Errorf(ErrCorrupt, "read", "s1", Pos{Path: "/x/session.jsonl.zstd", Offset: 120, Frame: 3, Line: 7, Seq: 41}, "bad %s", "row"),
			ErrCorrupt, `read "s1": corrupt session log: bad row (frame 3, byte 120, line 7, seq 41, /x/session.jsonl.zstd)`},
		{&Error{Kind: ErrUnsupportedFormat, ID: "s1", Pos: NoPos}, ErrUnsupportedFormat, `session "s1": unsupported session log`},
		{&Error{Kind: ErrReadOnly, Pos: NoPos}, ErrReadOnly, `handle is read-only`},
	} {
		if !errors.Is(c.err, c.kind) {
			t.Errorf("%v is not %v", c.err, c.kind)
		}
		if got := c.err.Error(); got != c.want {
			t.Errorf("message %q, want %q", got, c.want)
		}
	}
}

func TestErrorUnwrap(t *testing.T) {
	cause := fmt.Errorf("stat: %w", fs.ErrPermission)
	err := fmt.Errorf("context: %w", &Error{Kind: ErrCorrupt, Op: "open", ID: "s1", Pos: NoPos, Err: cause})
	if !errors.Is(err, ErrCorrupt) || !errors.Is(err, fs.ErrPermission) || errors.Is(err, ErrNotFound) {
		t.Fatalf("errors.Is through %v", err)
	}
	var e *Error
	if !errors.As(err, &e) || e.ID != "s1" {
		t.Fatalf("errors.As: %v", err)
	}
}

func TestWrap(t *testing.T) {
	if Wrap(nil, ErrCorrupt, "open", "s1") != nil {
		t.Fatal("Wrap(nil) is not nil")
	}
	// A bare cause gets the kind, op and id.
	err := Wrap(fs.ErrPermission, ErrCorrupt, "open", "s1")
	var e *Error
	if !errors.As(err, &e) || e.Kind != ErrCorrupt || e.Op != "open" || e.ID != "s1" || !errors.Is(err, fs.ErrPermission) {
		t.Fatalf("Wrap(bare): %#v", err)
	}
	// A typed error keeps its kind and position and gets what it lacks.
	inner := corruptf("seq gap")
	inner.Pos.Seq = 4
	err = Wrap(fmt.Errorf("walk: %w", inner), ErrUnsupportedFormat, "read", "s2")
	if !errors.As(err, &e) || e.Kind != ErrCorrupt || e.Op != "read" || e.ID != "s2" || e.Pos.Seq != 4 {
		t.Fatalf("Wrap(typed): %#v", err)
	}
	if inner.Op != "" || inner.ID != "" {
		t.Fatal("Wrap changed the error it wrapped")
	}
	// What is already set is kept.
	err = Wrap(NotFound("stat", "a"), ErrCorrupt, "open", "b")
	if err.Error() != `stat "a": not found` {
		t.Fatalf("Wrap(complete): %v", err)
	}
}

func TestAccessString(t *testing.T) {
	if Read.String() != "read" || Write.String() != "write" {
		t.Fatalf("Access strings %q %q", Read, Write)
	}
}

// TestInUseAndOverlapMessages pins the words of the causes that refuse a
// write beside a writer that takes no lock, and of repeated seqs.
func TestInUseAndOverlapMessages(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{&InUseError{PID: 42, Command: "node", Path: "/l"}, "process 42 (node) has it open for writing"},
		{&InUseError{PID: 42, Path: "/l"}, "process 42 has it open for writing"},
		{&InUseError{PID: 42, Command: "node.exe", Path: "/l", AnyAccess: true}, "process 42 (node.exe) has it open (this system does not say whether for writing)"},
		{&InUseError{Path: "/l", ChangedAgo: 1500 * time.Millisecond}, "its log changed 1.5 s ago, and not by dshctl"},
		{&InUseError{Path: "/l", ChangedAgo: time.Second, CannotTell: true}, "its log changed 1.0 s ago, and not by dshctl (this system cannot tell which process has it open)"},
		{&OverlapError{Seq: 5, Want: 6}, "seq 5 overlaps: expected 6"},
	} {
		if got := c.err.Error(); got != c.want {
			t.Errorf("%q, want %q", got, c.want)
		}
	}
}
