package sessionview

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/dshctl/dshctl/internal/export"
	"github.com/dshctl/dshctl/internal/ingest"
	"github.com/dshctl/dshctl/internal/inspect"
	"github.com/dshctl/dshctl/internal/seam"
	"github.com/dshctl/dshctl/internal/termui"
	"github.com/dshctl/dshctl/internal/timespec"
	"github.com/dshctl/dshctl/internal/verify"
)

// out is a termui.Out printing to buffers, for scripts unless tty.
func out(format string, tty bool) (termui.Out, *bytes.Buffer, *bytes.Buffer) {
	var stdout, stderr bytes.Buffer
	now := time.UnixMilli(1785331620765)
	return termui.Out{Stdout: &stdout, Stderr: &stderr, TTY: tty, Width: 200, Format: format,
		Now: func() time.Time { return now }}, &stdout, &stderr
}

func session(id string, state string, err error) *inspect.Session {
	return &inspect.Session{Snapshot: seam.Snapshot{Header: seam.Header{ID: id, Cwd: "/w", CreatedAt: 1785331618000}, EventCount: 3},
		HeaderKnown: true, State: state, Err: err}
}

// TestPrintList: JSON is an array (empty: []) and JSONL a line per
// session; a table for scripts has no header and says on stderr why a
// session cannot be read, and why a list is empty.
func TestPrintList(t *testing.T) {
	sel := inspect.Selected{Rows: []*inspect.Session{session("a", inspect.StateDone, nil), session("b", inspect.StateError, errors.New("torn"))}}
	o, stdout, stderr := out(termui.FormatJSON, false)
	if err := PrintList(o, sel, inspect.Selection{}); err != nil {
		t.Fatal(err)
	}
	var items []map[string]any
	if err := json.Unmarshal(stdout.Bytes(), &items); err != nil || len(items) != 2 || items[1]["error"] != "torn" {
		t.Fatalf("JSON %s: %v", stdout, err)
	}
	o, stdout, _ = out(termui.FormatJSONL, false)
	PrintList(o, sel, inspect.Selection{})
	if n := strings.Count(stdout.String(), "\n"); n != 2 || !strings.HasPrefix(stdout.String(), `{"id":"a",`) {
		t.Errorf("JSONL:\n%s", stdout)
	}
	o, stdout, stderr = out(termui.FormatTable, false)
	PrintList(o, sel, inspect.Selection{})
	if lines := strings.Split(stdout.String(), "\n"); len(lines) != 3 || !strings.HasPrefix(lines[0], "a\t/w\t") || stderr.String() != "dshctl: b: torn\n" {
		t.Errorf("plain:\n%s\nstderr %q", stdout, stderr)
	}

	o, stdout, stderr = out(termui.FormatTable, true)
	PrintList(o, inspect.Selected{Hidden: 2}, inspect.Selection{Project: "/p"})
	if stdout.String() != "ID  PROJECT  CREATED  UPDATED  EVENTS  SIZE  STATE  PARENT  FORMAT\n" ||
		stderr.String() != "no sessions in project /p (2 blank sessions are hidden: --all shows them)\n" {
		t.Errorf("empty table %q, stderr %q", stdout, stderr)
	}
	o, stdout, stderr = out(termui.FormatJSON, false)
	PrintList(o, inspect.Selected{}, inspect.Selection{})
	if stdout.String() != "[]\n" || stderr.Len() != 0 {
		t.Errorf("empty JSON %q, stderr %q", stdout, stderr)
	}
}

// TestListWriter: rows printed one at a time are byte for byte what
// PrintList prints of them all, in every format that streams (none, one
// and several rows; unreadable ones with their reason; a cwd with a tab
// and a title-like id with HTML characters).
func TestListWriter(t *testing.T) {
	odd := session("c<&>", inspect.StateOpen, nil)
	odd.Snapshot.Header.Cwd = "/w\tx"
	all := []*inspect.Session{session("a", inspect.StateDone, nil), session("b", inspect.StateError, errors.New("torn")), odd}
	for _, format := range []string{termui.FormatJSON, termui.FormatJSONL, termui.FormatTable} {
		for n := range len(all) + 1 {
			sel := inspect.Selected{Rows: all[:n], Hidden: 1}
			o, want, wantErr := out(format, false)
			if err := PrintList(o, sel, inspect.Selection{Project: "/p"}); err != nil {
				t.Fatal(err)
			}
			o, got, gotErr := out(format, false)
			if !Streams(o) {
				t.Fatalf("%s for scripts does not stream", format)
			}
			lw := NewListWriter(o)
			for _, r := range sel.Rows {
				if err := lw.Row(r); err != nil {
					t.Fatal(err)
				}
			}
			if err := lw.Close(inspect.Selected{Hidden: 1}, inspect.Selection{Project: "/p"}); err != nil {
				t.Fatal(err)
			}
			if got.String() != want.String() || gotErr.String() != wantErr.String() {
				t.Errorf("%s, %d rows: streamed\n%q (stderr %q)\nPrintList\n%q (stderr %q)", format, n, got, gotErr, want, wantErr)
			}
		}
	}
	if o, _, _ := out(termui.FormatTable, true); Streams(o) {
		t.Error("the table for people streams")
	}
}

// TestPrintExports: one ZIP for people is fields, several a table; for
// scripts a line each; JSON counts the events of every entry.
func TestPrintExports(t *testing.T) {
	results := []export.Result{
		{ID: "session-1", Path: "/o/1.zip", Bytes: 2048, Entries: []export.Entry{{ID: "session-1", Events: 5}, {ID: "sub", Events: 2}}},
		{ID: "session-2", Path: "/o/2.zip", Bytes: 10, Entries: []export.Entry{{ID: "session-2", Events: 1}}},
	}
	o, stdout, _ := out(termui.FormatTable, true)
	PrintExports(o, results[:1])
	want := "session:    session-1\nfile:       /o/1.zip\nevents:     7\nsubagents:  1\nsize:       2.0 KiB (2048 bytes)\n"
	if stdout.String() != want {
		t.Errorf("fields\n%s\nwant\n%s", stdout, want)
	}
	o, stdout, _ = out(termui.FormatTable, false)
	PrintExports(o, results)
	if want := "session-1\t/o/1.zip\t7\t1\t2048\nsession-2\t/o/2.zip\t1\t0\t10\n"; stdout.String() != want {
		t.Errorf("plain\n%q\nwant\n%q", stdout, want)
	}
	o, stdout, _ = out(termui.FormatJSON, false)
	PrintExports(o, nil)
	if stdout.String() != "[]\n" {
		t.Errorf("no ZIPs: %q", stdout)
	}
	var stderr bytes.Buffer
	WarnUnsupported(&stderr, []export.Entry{{ID: "s", Name: "session.v4.jsonl", Unsupported: &inspect.UnknownTypesError{Version: 4, Types: map[string]int64{"p/x": 2}}}, {ID: "t"}})
	if want := `dshctl: warning: session.v4.jsonl of "s" holds event types "p/x" (2) unknown to format v4 and not ignorable: exported whole, but dsh refuses this log unless a plugin registers them` + "\n"; stderr.String() != want {
		t.Errorf("warning %q", stderr.String())
	}
}

// TestPrintAppend: what append did, for people, and its JSON.
func TestPrintAppend(t *testing.T) {
	for _, c := range []struct {
		r    ingest.Result
		want string
	}{
		{ingest.Result{ID: "s", Created: true}, "created s (no events)"},
		{ingest.Result{ID: "s"}, "nothing to append to s"},
		{ingest.Result{ID: "s", Appended: 1, FirstSeq: 4, NextSeq: 5}, "appended 1 event, seq 4 to s"},
		{ingest.Result{ID: "s", Appended: 3, Closers: 3, FirstSeq: 4, NextSeq: 7}, "appended 3 events, seq 4–6 (closers of the interrupted turn) to s"},
		{ingest.Result{ID: "s", Appended: 3, Closers: 2, FirstSeq: 4, NextSeq: 7, Created: true}, "created s; 3 events, seq 4–6 (the last 2 close the interrupted turn)"},
		{ingest.Result{ID: "s", Appended: 2, Closers: 1, FirstSeq: 0, NextSeq: 2}, "appended 2 events, seq 0–1 (the last closes the interrupted turn) to s"},
	} {
		o, stdout, _ := out(termui.FormatTable, true)
		if err := PrintAppend(o, &c.r); err != nil || stdout.String() != c.want+"\n" {
			t.Errorf("%+v: %q, want %q", c.r, stdout, c.want)
		}
		// Piped: a row for scripts, the summary on stderr.
		o, stdout, stderr := out(termui.FormatTable, false)
		if err := PrintAppend(o, &c.r); err != nil || stdout.String() != strings.Join(AppendRow(&c.r), "\t")+"\n" ||
			stderr.String() != "dshctl: "+c.want+"\n" {
			t.Errorf("%+v piped: %q, stderr %q", c.r, stdout, stderr)
		}
	}
	if row := strings.Join(AppendRow(&ingest.Result{ID: "s", Appended: 3, Closers: 2, FirstSeq: 4, NextSeq: 7, Created: true}), ","); row != "s,3,4,7,2,created" {
		t.Errorf("row %q", row)
	}
	o, stdout, _ := out(termui.FormatJSONL, false)
	PrintAppend(o, &ingest.Result{ID: "s", Repairs: []seam.Repair{}})
	if want := `{"id":"s","created":false,"closers":0,"appended":0,"firstSeq":0,"nextSeq":0,"repairs":[]}` + "\n"; stdout.String() != want {
		t.Errorf("JSONL %q", stdout)
	}
	note := RepairNote(seam.Repair{Path: "/l", Offset: 10, Bytes: 5, Kind: seam.RepairTorn, Backup: "/b", Rewritten: 3})
	if want := "removed a 5-byte torn tail at byte 10 of /l (the 3 bytes of committed records in its frame were written back); saved to /b"; note != want {
		t.Errorf("repair note %q", note)
	}
}

// TestRawTailNote: what cat --raw says about the records past the last
// one dsh serves.
func TestRawTailNote(t *testing.T) {
	one := export.RawResult{TailRecords: 1, TailBytes: 35, TailOffset: 100}
	for _, c := range []struct {
		res               export.RawResult
		included, damaged bool
		want              string
	}{
		{export.RawResult{}, false, false, ""},
		{one, false, false, "not printed: 1 record (35 bytes from byte 100 of the stored text) that dsh does not serve: an uncommitted tail, which the next append removes; --include-tail prints it"},
		{export.RawResult{TailRecords: 2, TailBytes: 9, TailOffset: 1}, true, true, "printed at the end: 2 records (9 bytes from byte 1 of the stored text) that dsh does not serve: damaged data"},
		{export.RawResult{TailRecords: 2, TailBytes: 9, TailOffset: 1}, false, true, "not printed: 2 records (9 bytes from byte 1 of the stored text) that dsh does not serve: damaged data; --include-tail prints them"},
	} {
		if got := RawTailNote(c.res, c.included, c.damaged); got != c.want {
			t.Errorf("%+v %v %v:\n got %q\nwant %q", c.res, c.included, c.damaged, got, c.want)
		}
	}
}

// TestLogSink: cat's writer by format; the canonical log without its
// header when asked.
func TestLogSink(t *testing.T) {
	h := seam.Header{Version: 4, ID: "s", CreatedAt: 1}
	ev := seam.Event{Type: "session/title", Seq: 0, Time: 2, Data: []byte(`{"title":"x"}`)}
	for _, c := range []struct {
		format string
		header bool
		want   string
	}{
		{termui.FormatJSONL, true, `{"type":"session","version":4,"id":"s","createdAt":1,"isSeeded":false,"delegationDepth":0}` + "\n" + `{"type":"session/title","seq":0,"time":2,"data":{"title":"x"}}` + "\n"},
		{termui.FormatJSONL, false, `{"type":"session/title","seq":0,"time":2,"data":{"title":"x"}}` + "\n"},
	} {
		var w bytes.Buffer
		o, _, _ := out(c.format, false)
		sink := LogSink(context.Background(), o, &w, c.header, 0, false)
		if err := sink.Header(&h); err != nil {
			t.Fatal(err)
		}
		if err := sink.Event(&ev); err != nil {
			t.Fatal(err)
		}
		if err := sink.End(); err != nil {
			t.Fatal(err)
		}
		if w.String() != c.want {
			t.Errorf("%s header=%v:\n%s\nwant\n%s", c.format, c.header, w.String(), c.want)
		}
	}
	o, _, _ := out(termui.FormatJSON, false)
	if _, ok := LogSink(context.Background(), o, nil, false, 0, false).(*export.Document); !ok {
		t.Error("-o json is not one document")
	}
	o, _, _ = out(termui.FormatText, true)
	if _, ok := LogSink(context.Background(), o, nil, true, 0, false).(*inspect.Transcript); !ok {
		t.Error("-o text is not a transcript")
	}
}

// TestVerifyPrinter: for scripts a row per finding and the summary on
// stderr; JSON one document with every report; JSONL a line per report.
func TestVerifyPrinter(t *testing.T) {
	r := &verify.SessionReport{ID: "s", Status: verify.StatusErrors,
		Findings: []verify.Finding{{Severity: verify.SeverityError, Finding: seam.Finding{Code: "bad-record", Message: "bad", Pos: seam.Pos{Frame: -1, Offset: 7, Line: 2, Seq: -1}}}}}
	sum := verify.Summary{Sessions: 1, Errors: 1}
	o, stdout, stderr := out(termui.FormatTable, false)
	p := NewVerifyPrinter(o, "/b")
	if err := p.Report(r); err != nil {
		t.Fatal(err)
	}
	if err := p.Summary(verify.ModeStrict, sum); !errors.As(err, new(termui.FindingsError)) {
		t.Fatalf("outcome %v, want findings", err)
	}
	if stdout.String() != "s\terror\tbad-record\t\t7\t2\t\t\tbad\n" || !strings.HasPrefix(stderr.String(), "dshctl: 1 session") {
		t.Errorf("plain %q, stderr %q", stdout, stderr)
	}
	o, stdout, _ = out(termui.FormatJSON, false)
	p = NewVerifyPrinter(o, "/b")
	p.Report(r)
	p.Summary(verify.ModeStrict, sum)
	var doc VerifyDocJSON
	if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil || doc.Mode != "strict" || len(doc.Sessions) != 1 || doc.Summary.Errors != 1 {
		t.Errorf("JSON %s: %v", stdout, err)
	}
	o, stdout, _ = out(termui.FormatJSONL, false)
	p = NewVerifyPrinter(o, "/b")
	p.Report(r)
	p.Summary(verify.ModeStrict, sum)
	if strings.Count(stdout.String(), "\n") != 1 || !strings.HasPrefix(stdout.String(), `{"id":"s",`) {
		t.Errorf("JSONL %q", stdout)
	}
}

// TestPrintStat: stat's JSON and fields.
func TestPrintStat(t *testing.T) {
	r := &inspect.StatReport{Session: *session("s", inspect.StateDone, nil)}
	o, stdout, _ := out(termui.FormatJSON, false)
	if err := PrintStat(o, r); err != nil || !strings.Contains(stdout.String(), `"id": "s"`) {
		t.Errorf("JSON %s: %v", stdout, err)
	}
	o, stdout, _ = out(termui.FormatTable, false)
	if err := PrintStat(o, r); err != nil || !strings.HasPrefix(stdout.String(), "id:\ts\n") {
		t.Errorf("fields %q: %v", stdout, err)
	}
}

// TestReportExports: the ZIPs written go to stdout, each failure to stderr,
// and the error counts the failures (with --force's hint when a file
// exists); an interruption is said once.
func TestReportExports(t *testing.T) {
	ok := export.Result{ID: "a", Path: "/o/a.zip", Bytes: 10, Entries: []export.Entry{{ID: "a", Events: 3}}}
	exists := export.Result{ID: "b", Err: fmt.Errorf("b.zip: %w", export.ErrExists)}
	o, stdout, stderr := out(termui.FormatTable, false)
	err := ReportExports(context.Background(), o, []export.Result{ok, exists})
	var h termui.HintError
	if err == nil || err.Error() != "1 of 2 sessions not exported" || !errors.As(err, &h) || !strings.Contains(h.Hint, "--force") {
		t.Errorf("error %v", err)
	}
	if stdout.String() != "a\t/o/a.zip\t3\t0\t10\n" || !strings.HasPrefix(stderr.String(), `dshctl: export "b": b.zip: `) {
		t.Errorf("stdout %q, stderr %q", stdout, stderr)
	}
	if err := ReportExports(context.Background(), o, []export.Result{ok}); err != nil {
		t.Errorf("all exported: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	o, _, stderr = out(termui.FormatTable, false)
	err = ReportExports(ctx, o, []export.Result{ok, {ID: "c", Err: context.Canceled}})
	if err == nil || err.Error() != "export interrupted: 1 of 2 sessions not exported" || stderr.Len() != 0 {
		t.Errorf("interrupted: %v, stderr %q", err, stderr)
	}
}

// TestExplainExport: a single export's failures with the way out.
func TestExplainExport(t *testing.T) {
	for _, c := range []struct {
		err       error
		msg, hint string
	}{
		{fmt.Errorf("x: %w", context.Canceled), "export interrupted", ""},
		{fmt.Errorf("f.zip: %w", export.ErrExists), "f.zip: " + export.ErrExists.Error(), "use --force to replace it, or -O to write elsewhere"},
	} {
		err := ExplainExport(c.err)
		var h termui.HintError
		errors.As(err, &h)
		if err.Error() != c.msg || h.Hint != c.hint {
			t.Errorf("%v: %q hint %q", c.err, err, h.Hint)
		}
	}
}

// TestWriteZIP: export -O - writes the ZIP through, refuses a terminal
// without force, and words a failure.
func TestWriteZIP(t *testing.T) {
	zip := func(w io.Writer) ([]export.Entry, error) {
		_, err := io.WriteString(w, "PK")
		return []export.Entry{{ID: "s"}}, err
	}
	o, stdout, _ := out(termui.FormatTable, false)
	if err := WriteZIP(o, false, zip); err != nil || stdout.String() != "PK" {
		t.Errorf("piped: %v, %q", err, stdout)
	}
	o, stdout, _ = out(termui.FormatTable, true)
	var h termui.HintError
	if err := WriteZIP(o, false, zip); !errors.As(err, &h) || stdout.Len() != 0 {
		t.Errorf("terminal: %v, %q", err, stdout)
	}
	if err := WriteZIP(o, true, zip); err != nil || stdout.String() != "PK" {
		t.Errorf("terminal with force: %v, %q", err, stdout)
	}
	o, _, _ = out(termui.FormatTable, false)
	if err := WriteZIP(o, false, func(io.Writer) ([]export.Entry, error) { return nil, context.Canceled }); err == nil || err.Error() != "export interrupted" {
		t.Errorf("interrupted: %v", err)
	}
}

// TestNoSessions: an empty list says what it selected by (issue 23).
func TestNoSessions(t *testing.T) {
	for _, c := range []struct {
		s      inspect.Selection
		hidden int
		want   string
	}{
		{inspect.Selection{}, 0, "no sessions"},
		{inspect.Selection{}, 1, "no sessions (1 blank session is hidden: --all shows it)"},
		{inspect.Selection{Project: "/p"}, 2, "no sessions in project /p (2 blank sessions are hidden: --all shows them)"},
		{inspect.Selection{States: []string{"open"}}, 0, "no sessions in state open"},
		{inspect.Selection{States: []string{"blank", "open", "error"}, Project: "/p"}, 0, "no sessions in state blank, open or error in project /p"},
		{inspect.Selection{Active: timespec.Range{Since: 1785331918207, HasSince: true}}, 0, "no sessions active since 2026-07-29T13:31:58.207Z"},
		{inspect.Selection{Active: timespec.Range{Until: 1785331918207, HasUntil: true}}, 0, "no sessions active until 2026-07-29T13:31:58.207Z"},
		{inspect.Selection{States: []string{"done"}, Active: timespec.Range{Since: 0, HasSince: true, Until: 1785331918207, HasUntil: true}}, 3,
			"no sessions in state done active between 1970-01-01T00:00:00.000Z and 2026-07-29T13:31:58.207Z (3 blank sessions are hidden: --all shows them)"},
	} {
		if got := NoSessions(c.s, c.hidden); got != c.want {
			t.Errorf("NoSessions(%+v, %d) = %q, want %q", c.s, c.hidden, got, c.want)
		}
	}
}
