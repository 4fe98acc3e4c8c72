package ingest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshctl/dshctl/internal/seam"
	"github.com/dshctl/dshctl/internal/store"
)

// newStore creates a JSONL store in a temp dir holding the given ids, each
// a session of one turn in format version v.
func newStore(t *testing.T, v int, ids ...string) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "store")
	svc, err := store.Open(store.Spec{Path: root, From: store.FromFlag}, store.Options{Create: true, BackupDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	for _, id := range ids {
		res, err := Append(context.Background(), svc, id, Options{
			Create: &seam.Header{Version: v, CreatedAt: 1785331618000, Cwd: "/w"}, Input: strings.NewReader(turn), Name: "turn", AssignSeq: true, Now: 1})
		if err != nil || !res.Created || res.Appended != 2 {
			t.Fatalf("create %s: %+v, %v", id, res, err)
		}
	}
	return root
}

const turn = `{"type":"turn/start","time":1785400000000,"data":{"turn":1}}
{"type":"turn/end","time":1785400000000,"data":{"turn":1,"reason":{"kind":"completed"}}}
`

func TestCreate(t *testing.T) {
	ctx := context.Background()
	root := newStore(t, 2, "old-v2")
	svc, err := store.Open(store.Spec{Path: root, From: store.FromFlag}, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	// The store's newest format, dsh's defaults for the header.
	h, err := Create(ctx, svc, seam.Header{Version: Latest, ID: "sub", CreatedAt: 1, Cwd: "/w", Origin: "subagent", ParentSession: "old-v2"})
	if err != nil {
		t.Fatal(err)
	}
	got := h.Header()
	h.Close()
	if got.Version != 2 || got.IsSeeded == nil || *got.IsSeeded || got.DelegationDepth != 1 {
		t.Errorf("created header %+v: want v2, isSeeded false, delegationDepth 1", got)
	}
	var sh *ShadowError
	if _, err := Create(ctx, svc, seam.Header{Version: 4, ID: "old", CreatedAt: 1}); !errors.As(err, &sh) || sh.Stored != "old-v2" {
		t.Errorf("create of a prefix of a stored id: %v, want a ShadowError naming old-v2", err)
	}
	empty, err := store.Open(store.Spec{Path: filepath.Join(t.TempDir(), "new"), From: store.FromFlag}, store.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer empty.Close()
	// v0 in a store without sessions: the one format every released dsh reads.
	if h, err := Create(ctx, empty, seam.Header{Version: Latest, ID: "first", CreatedAt: 1}); err != nil || h.Header().Version != 0 {
		t.Errorf("Create in an empty store: %v, want v0", err)
	} else {
		h.Close()
	}
}

func TestAppend(t *testing.T) {
	ctx := context.Background()
	root := newStore(t, 4, "s")
	svc, err := store.Open(store.Spec{Path: root, From: store.FromFlag}, store.Options{BackupDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	const title = `{"type":"session/title","data":{"title":"t"}}`
	for _, c := range []struct {
		name, input string
		assign      bool
		line        int
		want        string
	}{
		{"bad json", `{"type":"session/title","seq":2,"time":1,"data":{"title":"t"}}` + "\n{\"type\":", false, 2, "unparsable record"},
		{"wrong seq", `{"type":"session/title","seq":7,"time":1,"data":{"title":"t"}}`, false, 1, "seq 7, expected 2"},
		{"no seq", title, false, 1, ErrNoSeq.Error()},
		{"packed row", `{"type":"text-chunks","seq0":2,"time0":1,"parts":[]}`, false, 1, `packed row "text-chunks" in a v4 log`},
		{"unknown type", "\n\n" + `{"type":"mystery/event","data":{}}`, true, 3, `event type "mystery/event" unknown to format v4`},
		{"no surfaceOp", `{"type":"user/message","data":{"id":"u","role":"user","content":[],"source":{"kind":"user"}}}`, true, 1, "without surfaceOp"},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, err := Append(ctx, svc, "s", Options{Input: strings.NewReader(c.input), Name: "in.jsonl", AssignSeq: c.assign, Now: 1})
			var in *InputError
			if !errors.As(err, &in) || in.Name != "in.jsonl" || in.Line != c.line || !strings.Contains(in.Err.Error(), c.want) {
				t.Fatalf("Append: %v; want line %d: %s", err, c.line, c.want)
			}
			if res != nil && res.Appended != 0 {
				t.Fatalf("result %+v", res)
			}
			if snap, _ := svc.Stat(ctx, "s"); snap.EventCount != 2 {
				t.Fatalf("an invalid batch stored events: %d", snap.EventCount)
			}
		})
	}
	res, err := Append(ctx, svc, "s", Options{Input: strings.NewReader(title + "\n" + title + "\n"), Name: "in", AssignSeq: true, Now: 1})
	if err != nil || res.FirstSeq != 2 || res.NextSeq != 4 || res.Appended != 2 || res.Created || len(res.Repairs) != 0 {
		t.Fatalf("Append: %+v, %v", res, err)
	}
	if _, err := Append(ctx, svc, "nosuch", Options{}); !errors.Is(err, seam.ErrNotFound) {
		t.Fatalf("Append to a missing session without Create: %v", err)
	}
	res, err = Append(ctx, svc, "empty", Options{Create: &seam.Header{Version: Latest, CreatedAt: 1}})
	if err != nil || !res.Created || res.Appended != 0 {
		t.Fatalf("create without events: %+v, %v", res, err)
	}
	if snap, err := svc.Stat(ctx, "empty"); err != nil || snap.EventCount != 0 {
		t.Fatalf("the created session is not stored: %v", err)
	}
	// v0 logs store packed rows, which are not events to append.
	if _, err := Append(ctx, svc, "v0", Options{Create: &seam.Header{Version: 0, CreatedAt: 1},
		Input: strings.NewReader(`{"type":"text-chunks","seq0":0,"time0":1,"data":{"turn":1,"step":1,"index":0,"dt":[3],"texts":["a","b"]}}`), Name: "in"}); err == nil ||
		!strings.Contains(err.Error(), "packed text-chunks rows are a storage form") {
		t.Fatalf("Append of a packed row: %v", err)
	}
}

// TestAppendRepairs: an append to a log with a torn tail reports the
// removal, with where the bytes were saved.
func TestAppendRepairs(t *testing.T) {
	ctx := context.Background()
	root := newStore(t, 4, "s")
	backups := t.TempDir()
	svc, err := store.Open(store.Spec{Path: root, From: store.FromFlag}, store.Options{BackupDir: backups})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	snap, _ := svc.Stat(ctx, "s")
	f, err := os.OpenFile(snap.Location.Path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte{0x28, 0xb5, 0x2f, 0xfd, 0x04})
	f.Close()
	res, err := Append(ctx, svc, "s", Options{CloseInterrupted: true, Input: strings.NewReader(turn), AssignSeq: true})
	if err != nil || len(res.Repairs) != 1 || res.Repairs[0].Kind != seam.RepairTorn || res.Repairs[0].Bytes != 5 ||
		!strings.HasPrefix(res.Repairs[0].Backup, backups) {
		t.Fatalf("Append over a torn tail: %+v, %v", res, err)
	}
}

// TestAppendExpectNextSeq: with ExpectNextSeq, an append writes nothing
// unless the log's next seq is the one expected, even over a torn tail,
// and says what the next seq is, so that a retried batch is never written
// twice.
func TestAppendExpectNextSeq(t *testing.T) {
	ctx := context.Background()
	root := newStore(t, 4, "s")
	svc, err := store.Open(store.Spec{Path: root, From: store.FromFlag}, store.Options{BackupDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	const title = `{"type":"session/title","data":{"title":"t"}}` + "\n"
	expect := func(n int64) *int64 { return &n }
	res, err := Append(ctx, svc, "s", Options{Input: strings.NewReader(title + title), AssignSeq: true, ExpectNextSeq: expect(2)})
	if err != nil || res.FirstSeq != 2 || res.NextSeq != 4 {
		t.Fatalf("Append expecting the next seq: %+v, %v", res, err)
	}
	snap, _ := svc.Stat(ctx, "s")
	for _, stale := range []int64{2, 5} {
		_, err = Append(ctx, svc, "s", Options{Input: strings.NewReader(title), AssignSeq: true, ExpectNextSeq: expect(stale)})
		var ns *NextSeqError
		if !errors.As(err, &ns) || ns.Stored != 4 || ns.Expected != stale {
			t.Fatalf("Append expecting %d: %v, want a NextSeqError for 4", stale, err)
		}
		if again, _ := svc.Stat(ctx, "s"); again.Revision != snap.Revision {
			t.Fatalf("a refused append changed the log")
		}
	}
	// A create expects 0.
	if _, err := Append(ctx, svc, "new", Options{Create: &seam.Header{Version: Latest, CreatedAt: 1},
		Input: strings.NewReader(title), AssignSeq: true, ExpectNextSeq: expect(3)}); err == nil {
		t.Fatalf("a create expecting seq 3 succeeded")
	}
	if _, err := svc.Stat(ctx, "new"); !errors.Is(err, seam.ErrNotFound) {
		t.Fatalf("a refused create left a session: %v", err)
	}
}

// TestOpenFile: OpenFile refuses a folder, and says a file is missing.
func TestOpenFile(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	if f, err := OpenFile(ctx, dir); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("a folder as events: %v", err)
		f.Close()
	}
	if _, err := OpenFile(ctx, filepath.Join(dir, "none.jsonl")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing file: %v", err)
	}
}
