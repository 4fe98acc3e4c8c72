package sessionview

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/dshctl/dshctl/internal/ingest"
	"github.com/dshctl/dshctl/internal/inspect"
	"github.com/dshctl/dshctl/internal/seam"
	"github.com/dshctl/dshctl/internal/store"
	"github.com/dshctl/dshctl/internal/termui"
)

// TestExplain: each typed error gets its words, its hint and, for the
// user's misuse, the usage mark; other errors pass as they are.
func TestExplain(t *testing.T) {
	many := make([]string, 12)
	for i := range many {
		many[i] = fmt.Sprintf("s-%02d", i)
	}
	flag := store.Spec{Path: "/x", From: store.FromFlag}
	plain := errors.New("plain")
	for _, c := range []struct {
		err        error
		msg, hint  string
		usage      bool
		passesSame bool
	}{
		{err: plain, msg: "plain", passesSame: true},
		{err: fmt.Errorf("open: %w", store.ErrNoHome), msg: "cannot locate the dsh store: HOME and DSH_HOME are unset; set DSH_HOME or pass --store",
			hint: "choose a store with --store DIR or DSHCTL_STORE"},
		{err: store.ErrEmptyArg, msg: "empty session argument", usage: true},
		{err: fmt.Errorf("resolve: %w", seam.NotFound("stat", "nosuch")), msg: `session "nosuch" not found`},
		{err: &store.Error{Kind: store.ErrNotExist, Spec: store.Spec{Path: "/x", From: store.FromEnv}, Path: "/x"},
			msg: "store /x (from DSHCTL_STORE) does not exist", hint: "choose a store with --store DIR or DSHCTL_STORE, or set DSH_HOME"},
		{err: &store.Error{Kind: store.ErrProjectFolder, Spec: flag, Path: "/x", Store: "/s"},
			msg: "store /x (from --store) is a project folder of the store /s, not a store", hint: "use --store /s (list --project DIR shows one project's sessions)"},
		{err: &store.Error{Kind: store.ErrSessionFolder, Spec: flag, Path: "/x"},
			msg: "store /x (from --store) is a session log's folder, not a store", hint: "name the session by its path instead: dshctl stat /x"},
		{err: &store.Error{Kind: store.ErrSessionFolder, Spec: flag, Path: "/x", LogFile: true},
			msg: "store /x (from --store) is a session log, not a store", hint: "name the session by its path instead: dshctl stat /x"},
		{err: &store.Error{Kind: store.ErrSessionFolder, Spec: flag, Path: "/s/p/i/session.jsonl", Store: "/s", ID: "i", LogFile: true},
			msg: "store /s/p/i/session.jsonl (from --store) is the log file of session i in the store /s, not a store", hint: "use --store /s, or name the session by its path: dshctl stat /s/p/i/session.jsonl"},
		{err: &store.Error{Kind: seam.ErrIO, Spec: flag, Path: "/x", Err: io.ErrUnexpectedEOF}, msg: "store /x: unexpected EOF"},
		{err: &store.AmbiguousError{Prefix: "s-", Matches: many},
			msg: `session prefix "s-" is ambiguous: 12 sessions match: ` + strings.Join(many[:10], ", ") + ", …", hint: "give more of the id"},
		{err: &ingest.InputError{Name: "stdin", Line: 3, Err: ingest.ErrNoSeq},
			msg: "stdin line 3: invalid event: it has no seq; nothing was written", hint: "--assign-seq numbers the events from the stored next seq"},
		{err: &ingest.InputError{Name: "f", Line: 2, Err: &ingest.SeqError{Got: 9, Want: 4}},
			msg: "f line 2: invalid event: seq 9, expected 4 (the stored next seq; --assign-seq numbers events for you); nothing was written"},
		{err: &ingest.InputError{Name: "f", Err: io.ErrUnexpectedEOF}, msg: "read events from f: unexpected EOF"},
		{err: &ingest.NextSeqError{ID: "s", Stored: 7, Expected: 5},
			msg:  `session "s": the log's next seq is 7, not the 5 expected: nothing was written`,
			hint: "if seqs 5–6 are the start of this batch (a killed append to a plain log keeps its complete lines), append the rest with --expect-next-seq 7"},
		{err: &ingest.NextSeqError{ID: "s", Stored: 6, Expected: 5},
			msg:  `session "s": the log's next seq is 6, not the 5 expected: nothing was written`,
			hint: "if seq 5 is the start of this batch (a killed append to a plain log keeps its complete lines), append the rest with --expect-next-seq 6"},
		{err: &ingest.NextSeqError{ID: "s", Stored: 3, Expected: 5},
			msg: `session "s": the log's next seq is 3, not the 5 expected: nothing was written`},
		{err: &inspect.FilterError{Field: "Types", Pattern: "[", Err: errors.New("bad pattern")}, msg: `--type "[": bad pattern`, usage: true},
		{err: &inspect.UnknownTypesError{ID: "s", Version: 4, Types: map[string]int64{"p/x": 1}},
			msg: `read "s": unsupported session log: dsh refuses this log: event type "p/x" (1) is unknown to format v4 and not ignorable (a plugin's, or a newer dsh's) (seq 0)`},
		{err: &seam.Error{Kind: seam.ErrLimit, Op: "open", ID: "s", Pos: seam.NoPos, Err: fmt.Errorf("record of 9 bytes: %w", store.ErrRecordLimit)},
			msg:  `open "s": exceeds a reader limit: record of 9 bytes: record limit`,
			hint: "to read it, raise the limit with --max-record-bytes: a read holds up to twice the limit in memory"},
		{err: &seam.Error{Kind: seam.ErrLimit, Op: "read", ID: "s", Pos: seam.NoPos, Err: fmt.Errorf("frame at byte 9: %w", store.ErrFrameLimit)},
			msg: `read "s": exceeds a reader limit: frame at byte 9: frame limit`, hint: "to read it, raise the limit with --max-frame-bytes"},
		// A limit no option raises, and a limit error with its own hint.
		{err: &seam.Error{Kind: seam.ErrLimit, Op: "read", ID: "s", Pos: seam.NoPos, Err: errors.New("window of 9 bytes")},
			msg: `read "s": exceeds a reader limit: window of 9 bytes`},
		{err: termui.WithHint(fmt.Errorf("x: %w", store.ErrRecordLimit), "h"), msg: "x: record limit", hint: "h"},
		// Windows names a process that has the log open in any mode.
		{err: &seam.Error{Kind: seam.ErrAlreadyOwned, Op: "open", ID: "s", Pos: seam.NoPos, Err: &seam.InUseError{PID: 7, Command: "viewer.exe", Path: "/l", AnyAccess: true}},
			msg: `open "s": session is in use by another writer: process 7 (viewer.exe) has it open (this system does not say whether for writing)`,
			hint: "nothing was written: this system does not say whether that process writes the file or only reads it. " +
				"If it is a dsh, stop it (or let it finish its turn); if it only reads the file (a viewer), close it, or use --force when you know no dsh runs the session"},
	} {
		got := Explain(c.err)
		var h termui.HintError
		hint := ""
		if errors.As(got, &h) {
			hint = h.Hint
		}
		var u termui.UsageError
		if got.Error() != c.msg || hint != c.hint || errors.As(got, &u) != c.usage || c.passesSame && got != c.err {
			t.Errorf("%v:\n got %q, hint %q, usage %v\nwant %q, hint %q, usage %v", c.err, got, hint, errors.As(got, &u), c.msg, c.hint, c.usage)
		}
	}
	if Explain(nil) != nil {
		t.Error("nil explained")
	}
	if got := Reason(store.ErrEmptyArg); got != "empty session argument" {
		t.Errorf("reason %q", got)
	}
}

// TestExplainVerify: an interrupted run says what was done.
func TestExplainVerify(t *testing.T) {
	if err := ExplainVerify(fmt.Errorf("verify: %w", context.Canceled)); err == nil || !strings.HasPrefix(err.Error(), "verify interrupted: ") {
		t.Errorf("interrupted: %v", err)
	}
	if err := ExplainVerify(nil); err != nil {
		t.Errorf("nil: %v", err)
	}
}

// TestReasonNamesNoSession: a session's reason is shown in its own row,
// which names the session: the operation and id a seam error starts with
// are left out; a not-found error keeps its id, which is the whole message.
func TestReasonNamesNoSession(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{&seam.Error{Kind: seam.ErrCorrupt, Op: "list", ID: "s", Pos: seam.NoPos, Err: errors.New("bad frame")}, "corrupt session log: bad frame"},
		{&seam.Error{Kind: seam.ErrCorrupt, Op: "stat", ID: "s", Pos: seam.NoPos}, "corrupt session log"},
		{seam.NotFound("stat", "s"), `session "s" not found`},
		{fmt.Errorf("wrapped: %w", &seam.Error{Kind: seam.ErrIO, Op: "list", ID: "s", Pos: seam.NoPos}), `wrapped: list "s": i/o error`},
	} {
		if got := Reason(c.err); got != c.want {
			t.Errorf("Reason(%v) = %q, want %q", c.err, got, c.want)
		}
	}
}
