package jsonl

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dshctl/dshctl/internal/seam"
)

// writeLog writes a log file into root/project/folder.
func writeLog(t testing.TB, root, project, folder, name, content string) string {
	t.Helper()
	dir := filepath.Join(root, project, folder)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

const goodHeader = `{"type":"session","version":0,"id":"%s","createdAt":1,"cwd":"/p","delegationDepth":0}` + "\n"

func headerFor(id string) string { return strings.Replace(goodHeader, "%s", id, 1) }

// TestListReportsBadEntries checks that List reports, not hides, sessions
// it cannot read, and skips what is not a session yet.
func TestListReportsBadEntries(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	writeLog(t, root, "--p--", "good", "session.jsonl", headerFor("good"))
	writeLog(t, root, "--p--", "empty", "session.jsonl", "")
	writeLog(t, root, "--p--", "torn-header", "session.jsonl", `{"type":"session"`)
	writeLog(t, root, "--p--", "erased", "session.lock", "")
	writeLog(t, root, "--p--", "pending", "session.jsonl.0123456789ab.tmp", headerFor("pending"))
	writeLog(t, root, "--p--", "", "session.jsonl", headerFor("flat"))
	writeLog(t, root, "--q--", "", "flat-id.jsonl", headerFor("flat-id"))
	writeLog(t, root, "--q--", "", "session.jsonl", headerFor("flat"))
	writeLog(t, root, "--q--", "", "notes.txt", "not a log")
	writeLog(t, root, "--p--", "badheader", "session.jsonl", "{\"type\":\"turn/start\"}\n")
	writeLog(t, root, "--p--", "otherid", "session.jsonl", headerFor("someone-else"))
	writeLog(t, root, "--elsewhere--", "wrongproject", "session.jsonl", headerFor("wrongproject"))
	writeLog(t, root, "--p--", "dup", "session.jsonl", headerFor("dup"))
	writeLog(t, root, "--q--", "dup", "session.jsonl", headerFor("dup"))
	writeLog(t, root, "--p--", "not~canonical", "session.jsonl", headerFor("x"))
	writeLog(t, root, "--p--", "newer", "session.jsonl", `{"type":"session","version":7,"id":"newer"}`+"\n")
	writeLog(t, root, "--p--", "gens", "session.v2.jsonl", `{"type":"session","version":2,"id":"gens","createdAt":1,"cwd":"/p","isSeeded":false,"delegationDepth":0}`+"\n")
	writeLog(t, root, "--p--", "gens", "session.jsonl", headerFor("gens"))
	writeLog(t, root, "--p--", "mismatch", "session.v3.jsonl", headerFor("mismatch"))
	writeLog(t, root, "stray", "x", "session.jsonl", headerFor("x"))

	s, _ := openStore(t, root, Options{})
	entries, err := s.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]error{}
	for _, e := range entries {
		got[filepath.Base(filepath.Dir(e.Snapshot.Location.Path))+"/"+filepath.Base(e.Snapshot.Location.Path)] = e.Err
	}
	want := map[string]string{
		"good/session.jsonl":         "",
		"--p--/session.jsonl":        "placed directly in a project folder",
		"--q--/flat-id.jsonl":        "placed directly in a project folder",
		"--q--/session.jsonl":        "placed directly in a project folder",
		"badheader/session.jsonl":    "not a session header",
		"otherid/session.jsonl":      "does not match the session folder",
		"wrongproject/session.jsonl": `belongs in project folder "--p--"`,
		"dup/session.jsonl":          "found in 2 project folders",
		"--p--/not~canonical":        "not an encoded session id",
		"newer/session.jsonl":        "written by a newer dsh",
		"gens/session.v2.jsonl":      "",
		"mismatch/session.v3.jsonl":  "does not match the file's generation 3",
		// A header-less log is damage (creates write the header before
		// the log appears): listed as unreadable, not skipped.
		"empty/session.jsonl":       "empty or header-less session log",
		"torn-header/session.jsonl": "empty or header-less session log",
	}
	for k, w := range want {
		err, ok := got[k]
		switch {
		case !ok:
			t.Errorf("List misses %s", k)
		case w == "" && err != nil:
			t.Errorf("%s: %v", k, err)
		case w != "" && (err == nil || !strings.Contains(err.Error(), w)):
			t.Errorf("%s: error %v, want %q", k, err, w)
		}
	}
	if len(entries) != len(want)+1 { // dup is listed twice
		for k, err := range got {
			t.Logf("%s: %v", k, err)
		}
		t.Errorf("List returned %d entries, want %d", len(entries), len(want)+1)
	}
	wantKind(t, got["newer/session.jsonl"], seam.ErrUnsupportedFormat)
	// A flat-layout file is named by its file name, so that the message
	// reads well, and two of one name are not paired as duplicate ids.
	for _, e := range entries {
		path := e.Snapshot.Location.Path
		if proj := filepath.Base(filepath.Dir(path)); proj != "--p--" && proj != "--q--" {
			continue // a session folder's log
		}
		if name := filepath.Base(path); e.Snapshot.Header.ID != name {
			t.Errorf("entry %s has id %q, want %q", path, e.Snapshot.Header.ID, name)
		}
	}

	// Open and Stat report the same errors.
	for id, kind := range map[string]error{
		"empty": seam.ErrCorrupt, "dup": seam.ErrCorrupt, "newer": seam.ErrUnsupportedFormat,
		"erased": seam.ErrNotFound, "pending": seam.ErrNotFound, "absent": seam.ErrNotFound,
	} {
		_, err := s.Stat(ctx, id)
		wantKind(t, err, kind)
		for _, access := range []seam.Access{seam.Read, seam.Write} {
			_, err := s.Open(ctx, id, access)
			wantKind(t, err, kind)
		}
	}
	snap, err := s.Stat(ctx, "gens")
	if err != nil || snap.Location.Generation != 2 || len(snap.Location.OlderGenerations) != 1 {
		t.Errorf("Stat(gens): %+v %v", snap.Location, err)
	}
	if _, err := Open(filepath.Join(root, "missing"), Options{}); !errors.Is(err, seam.ErrNotFound) {
		t.Errorf("Open of a missing root: %v", err)
	}
	created := filepath.Join(root, "new", "root")
	if s, err := Open(created, Options{CreateRoot: true}); err != nil || s.Encoding() != Zstd {
		t.Errorf("Open with CreateRoot: %v", err)
	}
}

// TestRecoverableRules covers dsh's recoverable reading of a body: an
// uncommitted tail, damaged committed data, seq gaps, unknown types.
func TestRecoverableRules(t *testing.T) {
	line := func(seq int, typ string) string {
		data := `{"turn":1}`
		if typ == "turn/end" {
			data = `{"turn":1,"reason":{"kind":"completed"}}`
		}
		return `{"type":"` + typ + `","seq":` + strconv.Itoa(seq) + `,"time":1,"data":` + data + "}\n"
	}
	for _, c := range []struct {
		name   string
		body   string
		events int
		kind   error
		msg    string
	}{
		{"clean", line(0, "turn/start") + line(1, "turn/end"), 2, nil, ""},
		{"uncommitted garbage", line(0, "turn/start") + "garbage\n" + line(1, "step/start"), 1, nil, ""},
		{"gap is uncommitted", line(0, "turn/start") + line(2, "step/start"), 1, nil, ""},
		{"garbage before turn/end", line(0, "turn/start") + "garbage\n" + line(1, "turn/end"), -1, seam.ErrCorrupt, "unparsable committed event at line 3"},
		{"overlap before turn/end", line(0, "turn/start") + line(0, "step/start") + line(1, "turn/end"), -1, seam.ErrCorrupt, "invalid committed record at line 3"},
		{"unknown type", line(0, "turn/start") + line(1, "mystery/x") + line(2, "turn/end"), -1, seam.ErrUnsupportedFormat, `"mystery/x"`},
		{"unknown ignorable type", line(0, "turn/start") + strings.Replace(line(1, "mystery/x"), `"data"`, `"ignorable":true,"data"`, 1) + line(2, "turn/end"), 3, nil, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			writeLog(t, root, "--p--", "s", "session.jsonl", headerFor("s")+c.body)
			s, _ := openStore(t, root, Options{})
			events, err := scanAll(t, s, "s")
			if c.kind != nil {
				wantKind(t, err, c.kind)
				if !strings.Contains(err.Error(), c.msg) {
					t.Errorf("error %q does not say %q", err, c.msg)
				}
				return
			}
			if err != nil || len(events) != c.events {
				t.Fatalf("read %d events, %v; want %d", len(events), err, c.events)
			}
		})
	}
}

// TestScanBudget checks that MaxBytes ends forward and reverse scans with
// ErrScanBudget.
func TestScanBudget(t *testing.T) {
	ctx := context.Background()
	eachEncoding(t, func(t *testing.T, enc Encoding) {
		root := t.TempDir()
		s, tfs := openStore(t, root, Options{Compression: enc})
		w, err := s.Create(ctx, header("b", 0), seam.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for i := range 200 {
			if err := w.Append(ctx, turnEvents(int64(5*i), i)); err != nil {
				t.Fatal(err)
			}
		}
		defer w.Close()
		for _, reverse := range []bool{false, true} {
			tfs.read.Store(0)
			n := 0
			var last error
			for _, err := range w.Scan(ctx, seam.ScanOptions{Reverse: reverse, MaxBytes: 4096}) {
				if err != nil {
					last = err
					break
				}
				n++
			}
			wantKind(t, last, seam.ErrScanBudget)
			if n == 0 || n >= 1000 {
				t.Errorf("reverse=%v: %d events before the budget", reverse, n)
			}
			if read := tfs.read.Load(); read > 256<<10 {
				t.Errorf("reverse=%v: read %d bytes on a 4 KiB budget", reverse, read)
			}
		}
	})
}
