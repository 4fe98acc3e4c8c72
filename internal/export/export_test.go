package export_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/dshctl/dshctl/internal/rawjson"

	"github.com/dshctl/dshctl/internal/export"
	"github.com/dshctl/dshctl/internal/jsonl"
	"github.com/dshctl/dshctl/internal/seam"
)

// newStore opens an empty JSONL store in a temp dir.
func newStore(t *testing.T, enc jsonl.Encoding) (seam.Service, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "store")
	s, err := jsonl.Open(dir, jsonl.Options{CreateRoot: true, Compression: enc, BackupDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, dir
}

// addSession stores session id (child of parent when set) with n events.
func addSession(t *testing.T, svc seam.Service, id, parent string, created int64, n int) {
	t.Helper()
	unseeded := false
	h := seam.Header{Version: 4, ID: id, CreatedAt: created, Cwd: "/home/dev/app", ParentSession: parent, IsSeeded: &unseeded}
	if parent != "" {
		h.Origin, h.DelegationDepth = "subagent", 1
	}
	w, err := svc.Create(ctx, h, seam.CreateOptions{})
	if err != nil {
		t.Fatalf("create %q: %v", id, err)
	}
	defer w.Close()
	var batch []seam.Event
	for i := range n {
		batch = append(batch, seam.Event{Type: "session/title", Seq: int64(i), Time: created + int64(i),
			Data: append(rawjson.AppendString([]byte(`{"title":`), fmt.Sprintf("title %d of %s", i, id)), `}`...)})
	}
	if err := w.Append(ctx, batch); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestHostileIDs: ids that would escape the folder an export is unzipped
// in, or clash once made safe, give safe, distinct entry names, and unzip
// extracts every file inside its folder.
func TestHostileIDs(t *testing.T) {
	svc, _ := newStore(t, jsonl.Zstd)
	addSession(t, svc, "parent", "", 1000, 3)
	kids := []string{"../../etc/passwd", "task:review/01 ü~x", "a:b", "a/b", "/abs", `..\..\win`, "CON"}
	for i, id := range kids {
		addSession(t, svc, id, "parent", 2000+int64(i), 2)
	}
	addSession(t, svc, "grandchild", "../../etc/passwd", 9000, 1)

	zipped, entries := exportBytes(t, svc, "parent", export.Options{})
	unzipTest(t, zipped)
	want := []string{
		"session.v4.jsonl",
		"subagents/______etc_passwd/session.v4.jsonl",
		"subagents/grandchild/session.v4.jsonl",
		"subagents/task_review_01___x/session.v4.jsonl",
		"subagents/a_b/session.v4.jsonl",
		"subagents/a_b~2/session.v4.jsonl",
		"subagents/_abs/session.v4.jsonl",
		"subagents/______win/session.v4.jsonl",
		"subagents/CON~/session.v4.jsonl",
	}
	u := readZip(t, zipped)
	if !reflect.DeepEqual(u.names, want) {
		t.Fatalf("entries:\n%q\nwant\n%q", u.names, want)
	}
	wantIDs := []string{"parent", "../../etc/passwd", "grandchild", "task:review/01 ü~x", "a:b", "a/b", "/abs", `..\..\win`, "CON"}
	for i, e := range entries {
		if e.ID != wantIDs[i] || e.Name != want[i] {
			t.Errorf("entry %d: %+v, want %s at %s", i, e, wantIDs[i], want[i])
		}
		var hdr struct{ ID string }
		line, _, _ := bytes.Cut(u.files[e.Name], []byte("\n"))
		if err := json.Unmarshal(line, &hdr); err != nil || hdr.ID != e.ID {
			t.Errorf("%s holds the log of %q (%v), want %q", e.Name, hdr.ID, err, e.ID)
		}
	}

	if _, err := exec.LookPath("unzip"); err != nil {
		return
	}
	dir := t.TempDir()
	archive := filepath.Join(dir, "x.zip")
	out := filepath.Join(dir, "out")
	if err := os.WriteFile(archive, zipped, 0o600); err != nil {
		t.Fatal(err)
	}
	if b, err := exec.Command("unzip", "-q", archive, "-d", out).CombinedOutput(); err != nil {
		t.Fatalf("unzip: %v\n%s", err, b)
	}
	var files []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && p != archive {
			rel, _ := filepath.Rel(out, p)
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	slices.Sort(files)
	sorted := slices.Clone(want)
	slices.Sort(sorted)
	if !slices.Equal(files, sorted) {
		t.Fatalf("unzip made %q, want %q", files, sorted)
	}
}

// TestExportCancelled: a cancelled export stops with ctx's error and, to a
// file, leaves nothing.
func TestExportCancelled(t *testing.T) {
	svc, _ := newStore(t, jsonl.Zstd)
	addSession(t, svc, "big", "", 1000, 20000)
	cctx, cancel := context.WithCancel(ctx)
	var seen int64
	path := filepath.Join(t.TempDir(), "out.zip")
	_, err := export.WriteFile(cctx, path, export.WriteOptions{}, nil, func(w io.Writer) error {
		_, err := export.Session(cctx, svc, "big", w, export.Options{Progress: func(written, total int64) {
			if seen = written; seen > 1000 {
				cancel()
			}
		}})
		return err
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	if seen >= 20000 {
		t.Errorf("the export ran to the end (%d events) after the cancel", seen)
	}
	if names, _ := os.ReadDir(filepath.Dir(path)); len(names) != 0 {
		t.Fatalf("a cancelled export left %v", names)
	}
}

// TestExportProgress: progress counts every event of the session and of
// its subagents exactly once.
func TestExportProgress(t *testing.T) {
	svc, _ := newStore(t, jsonl.None)
	addSession(t, svc, "p", "", 1000, 3000)
	addSession(t, svc, "c", "p", 2000, 1500)
	for _, noSub := range []bool{false, true} {
		var calls [][2]int64
		_, entries := exportBytes(t, svc, "p", export.Options{NoSubagents: noSub, Progress: func(written, total int64) {
			calls = append(calls, [2]int64{written, total})
		}})
		want := int64(4500)
		if noSub {
			want = 3000
		}
		last := calls[len(calls)-1]
		if calls[0] != [2]int64{0, want} || last != [2]int64{want, want} || entries[0].Events != 3000 {
			t.Fatalf("no subagents %v: progress %v … %v, entries %+v", noSub, calls[0], last, entries)
		}
		for i := 1; i < len(calls); i++ {
			if calls[i][0] < calls[i-1][0] {
				t.Fatalf("progress went back: %v", calls)
			}
		}
	}
}

// TestExportBrokenSubagent: a subagent that cannot be read fails the
// export, naming it; --no-subagents still exports the session.
func TestExportBrokenSubagent(t *testing.T) {
	svc, dir := newStore(t, jsonl.None)
	addSession(t, svc, "p", "", 1000, 3)
	addSession(t, svc, "c", "p", 2000, 3)
	snap, err := svc.Stat(ctx, "c")
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(snap.Location.Path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	// A bad record followed by a turn/end: damaged committed data.
	f.WriteString("{not json}\n" + `{"type":"turn/end","seq":4,"time":1,"data":{"turn":1,"reason":{"kind":"completed"}}}` + "\n")
	f.Close()
	fresh, err := jsonl.Open(dir, jsonl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	_, err = export.Session(ctx, fresh, "p", io.Discard, export.Options{})
	var se *export.SubagentError
	if !errors.Is(err, seam.ErrCorrupt) || !errors.As(err, &se) || se.Parent != "p" || se.ID != "c" ||
		!strings.Contains(err.Error(), `subagent of "p"`) || !strings.Contains(err.Error(), `"c"`) {
		t.Fatalf("got %v", err)
	}
	if _, err := export.Session(ctx, fresh, "p", io.Discard, export.Options{NoSubagents: true}); err != nil {
		t.Fatalf("--no-subagents: %v", err)
	}
	if _, err := export.Session(ctx, fresh, "nosuch", io.Discard, export.Options{}); !errors.Is(err, seam.ErrNotFound) {
		t.Fatalf("absent session: %v", err)
	}
}

// TestToDir exports several sessions into a folder in parallel: names
// from the ids (made unique), the same bytes as one by one, failures
// reported per session, existing files kept without force.
func TestToDir(t *testing.T) {
	svc, _ := newStore(t, jsonl.Zstd)
	ids := []string{"a:b", "a/b", "solo", "p"}
	for i, id := range ids {
		addSession(t, svc, id, "", int64(1000*i), 50*(i+1))
	}
	addSession(t, svc, "c", "p", 9000, 10)
	dir := t.TempDir()
	var done []string
	var sources []export.Source
	for _, id := range append(ids, "nosuch") {
		sources = append(sources, export.Source{Service: svc, ID: id})
	}
	results := export.ToDir(ctx, sources, dir, export.DirOptions{Jobs: 3, Done: func(r export.Result) { done = append(done, r.ID) }})
	wantFiles := []string{"dsh-session-a_b.zip", "dsh-session-a_b~2.zip", "dsh-session-solo.zip", "dsh-session-p.zip", "dsh-session-nosuch.zip"}
	for i, r := range results {
		if r.Path != filepath.Join(dir, wantFiles[i]) {
			t.Errorf("%s: path %s, want %s", r.ID, r.Path, wantFiles[i])
		}
		if r.ID == "nosuch" {
			if !errors.Is(r.Err, seam.ErrNotFound) || r.Entries != nil {
				t.Errorf("nosuch: %v %+v", r.Err, r.Entries)
			}
			continue
		}
		if r.Err != nil {
			t.Fatalf("%s: %v", r.ID, r.Err)
		}
		got, err := os.ReadFile(r.Path)
		if err != nil {
			t.Fatal(err)
		}
		want, entries := exportBytes(t, svc, r.ID, export.Options{})
		if !bytes.Equal(got, want) || r.Bytes != int64(len(got)) || !reflect.DeepEqual(r.Entries, entries) {
			t.Errorf("%s: the file differs from the session's export", r.ID)
		}
	}
	slices.Sort(done)
	if want := []string{"a/b", "a:b", "nosuch", "p", "solo"}; !slices.Equal(done, want) {
		t.Errorf("Done saw %q, want %q", done, want)
	}
	if des, _ := os.ReadDir(dir); len(des) != 4 {
		t.Errorf("folder holds %v", des)
	}

	os.WriteFile(filepath.Join(dir, "dsh-session-solo.zip"), []byte("mine"), 0o600)
	two := []export.Source{{Service: svc, ID: "solo"}, {Service: svc, ID: "p"}}
	results = export.ToDir(ctx, two, dir, export.DirOptions{Options: export.Options{NoSubagents: true}})
	if !errors.Is(results[0].Err, export.ErrExists) || !errors.Is(results[1].Err, export.ErrExists) {
		t.Fatalf("existing files: %v, %v", results[0].Err, results[1].Err)
	}
	results = export.ToDir(ctx, two, dir, export.DirOptions{Force: true, Options: export.Options{NoSubagents: true}})
	if results[0].Err != nil || results[1].Err != nil || len(results[1].Entries) != 1 {
		t.Fatalf("force: %+v", results)
	}
}

// TestToFile: the file -O names gets the session's export, a folder the
// default name in it (a missing one is made when named with a trailing
// separator), and no -O the default name in the current folder; an
// existing file is kept unless forced.
func TestToFile(t *testing.T) {
	svc, _ := newStore(t, jsonl.None)
	addSession(t, svc, "p", "", 1000, 20)
	addSession(t, svc, "c", "p", 2000, 5)
	want, entries := exportBytes(t, svc, "p", export.Options{})
	t.Chdir(t.TempDir())
	dir := t.TempDir()
	name := export.FileName("p")
	for out, path := range map[string]string{
		"":                                     name,
		"x.zip":                                "x.zip",
		dir:                                    filepath.Join(dir, name),
		"new/":                                 filepath.Join("new", name),
		"deep/er" + string(filepath.Separator): filepath.Join("deep", "er", name),
	} {
		r, err := export.ToFile(ctx, svc, "p", out, false, export.Options{})
		if err != nil || r.Path != path || r.ID != "p" || !reflect.DeepEqual(r.Entries, entries) || r.Bytes != int64(len(want)) {
			t.Fatalf("-O %q: %+v, %v; want %s", out, r, err, path)
		}
		if got, err := os.ReadFile(path); err != nil || !bytes.Equal(got, want) {
			t.Fatalf("-O %q: the file differs from the session's export (%v)", out, err)
		}
		if _, err := export.ToFile(ctx, svc, "p", out, false, export.Options{}); !errors.Is(err, export.ErrExists) {
			t.Fatalf("-O %q again: %v, want ErrExists", out, err)
		}
		if _, err := export.ToFile(ctx, svc, "p", out, true, export.Options{}); err != nil {
			t.Fatalf("-O %q --force: %v", out, err)
		}
	}
	os.WriteFile("file", nil, 0o600)
	if _, err := export.ToFile(ctx, svc, "p", "file/", false, export.Options{}); err == nil {
		t.Fatal("a folder under a file made")
	}

}

// unlisted is a store whose List fails.
type unlisted struct{ seam.Service }

var errList = errors.New("list failed")

func (unlisted) List(context.Context) ([]seam.Entry, error) { return nil, errList }

// TestToDirListFails: a store that cannot be listed fails each of its
// sessions (their descendants are unknown), not the others, unless
// subagents are left out.
func TestToDirListFails(t *testing.T) {
	svc, _ := newStore(t, jsonl.None)
	addSession(t, svc, "a", "", 1000, 5)
	addSession(t, svc, "b", "", 1000, 5)
	bad := unlisted{svc}
	dir := t.TempDir()
	results := export.ToDir(ctx, []export.Source{{Service: bad, ID: "a"}, {Service: svc, ID: "b"}}, dir, export.DirOptions{})
	if !errors.Is(results[0].Err, errList) || results[1].Err != nil {
		t.Fatalf("results %v, %v", results[0].Err, results[1].Err)
	}
	results = export.ToDir(ctx, []export.Source{{Service: bad, ID: "a"}}, dir, export.DirOptions{Options: export.Options{NoSubagents: true}})
	if results[0].Err != nil {
		t.Fatalf("--no-subagents: %v", results[0].Err)
	}
}

// TestToDirCancelled: a cancelled batch stops, each session not exported
// says why, and no file is left.
func TestToDirCancelled(t *testing.T) {
	svc, _ := newStore(t, jsonl.Zstd)
	var sources []export.Source
	for i := range 6 {
		id := fmt.Sprintf("s%d", i)
		addSession(t, svc, id, "", 1000, 3000)
		sources = append(sources, export.Source{Service: svc, ID: id})
	}
	cctx, cancel := context.WithCancel(ctx)
	dir := t.TempDir()
	results := export.ToDir(cctx, sources, dir, export.DirOptions{Jobs: 2, Done: func(export.Result) { cancel() }})
	exported := 0
	for _, r := range results {
		switch {
		case r.Err == nil:
			exported++
		case !errors.Is(r.Err, context.Canceled):
			t.Fatalf("%s: %v", r.ID, r.Err)
		}
	}
	if des, _ := os.ReadDir(dir); exported >= len(sources) || len(des) != exported {
		t.Fatalf("%d exported, the folder holds %v", exported, des)
	}
}

// TestHeaderKeepsItsFormat checks the header line of an export: every
// stored field, in the shape of the header's format (issue 20: a v0 fork
// lost its seedLength and every v0 header gained isSeeded).
func TestHeaderKeepsItsFormat(t *testing.T) {
	n19, yes, no := int64(19), true, false
	for _, c := range []struct {
		h    seam.Header
		want string
	}{
		{seam.Header{Version: 0, ID: "fork", CreatedAt: 1, Cwd: "/w", ParentSession: "p", SeedLength: &n19},
			`{"type":"session","version":0,"id":"fork","createdAt":1,"cwd":"/w","parentSession":"p","seedLength":19,"delegationDepth":0}`},
		{seam.Header{Version: 0, ID: "plain", CreatedAt: 1, DelegationDepth: 2, Origin: "subagent"},
			`{"type":"session","version":0,"id":"plain","createdAt":1,"origin":"subagent","delegationDepth":2}`},
		// A SQLite row without delegation_depth: the line has 0, which
		// dsh's JSONL readers require.
		{seam.Header{Version: 0, ID: "nulldepth", CreatedAt: 1, NoDelegationDepth: true},
			`{"type":"session","version":0,"id":"nulldepth","createdAt":1,"delegationDepth":0}`},
		{seam.Header{Version: 3, ID: "seeded", CreatedAt: 1, IsSeeded: &yes},
			`{"type":"session","version":3,"id":"seeded","createdAt":1,"isSeeded":true,"delegationDepth":0}`},
		{seam.Header{Version: 4, ID: "unseeded", CreatedAt: 1, IsSeeded: &no},
			`{"type":"session","version":4,"id":"unseeded","createdAt":1,"isSeeded":false,"delegationDepth":0}`},
	} {
		h := export.Header(c.h)
		if got := string(h.AppendJSON(nil)); got != c.want {
			t.Errorf("%s: %s\nwant %s", c.h.ID, got, c.want)
		}
		if _, err := seam.ParseHeader([]byte(c.want)); err != nil {
			t.Errorf("%s: the line does not parse: %v", c.h.ID, err)
		}
	}
}
