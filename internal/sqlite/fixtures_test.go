package sqlite

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/dshctl/dshctl/internal/fixture"
	"github.com/dshctl/dshctl/internal/seam"
)

// fixtureCopy copies the schema-14 store dsh wrote to a temp file with
// mode 0600 (the fixture is read-only, and its 0444 would be refused).
func fixtureCopy(tb testing.TB) string {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join(fixture.Dir(tb), "dsh-0.1.0", "sqlite", "sessions.sqlite"))
	if err != nil {
		tb.Fatal(err)
	}
	path := filepath.Join(tb.TempDir(), "sessions.sqlite")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		tb.Fatal(err)
	}
	return path
}

type oracleSession struct {
	ID         string          `json:"id"`
	Header     json.RawMessage `json:"header"`
	EventCount int64           `json:"eventCount"`
}

// oracle returns what dsh's reader reported for a fixture store.
func oracle(t *testing.T, store string) []oracleSession {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(fixture.Dir(t), "dsh-0.1.0", "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Stores map[string]struct {
			Oracle struct {
				Sessions []oracleSession `json:"sessions"`
			} `json:"oracle"`
		} `json:"stores"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m.Stores[store].Oracle.Sessions
}

// jsonValue decodes one JSON value with numbers kept exact.
func jsonValue(t *testing.T, b []byte) any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return v
}

func readLines(t *testing.T, path string) [][]byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		out = append(out, bytes.Clone(sc.Bytes()))
	}
	return out
}

func sameJSONEvents(t *testing.T, what string, got []seam.Event, want [][]byte) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d events, want %d", what, len(got), len(want))
	}
	for i := range got {
		if g, w := jsonValue(t, got[i].AppendJSON(nil)), jsonValue(t, want[i]); !reflect.DeepEqual(g, w) {
			t.Fatalf("%s: event %d:\n got %s\nwant %s", what, i, got[i].AppendJSON(nil), want[i])
		}
	}
}

// TestFixtureSchema14 reads every session of the schema-14 store dsh wrote
// and compares it with what dsh's reader returned, and its header with
// the same session's in dsh's JSONL store (exports of both must match).
func TestFixtureSchema14(t *testing.T) {
	ctx := context.Background()
	s, err := Open(fixtureCopy(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Schema() != Schema14 {
		t.Fatalf("schema %d", s.Schema())
	}
	jsonlHeaders := map[string]json.RawMessage{}
	for _, o := range oracle(t, "jsonl-zstd") {
		jsonlHeaders[o.ID] = o.Header
	}
	sessions := oracle(t, "sqlite")
	if len(sessions) != 9 {
		t.Fatalf("oracle lists %d sessions", len(sessions))
	}
	entries, err := s.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != len(sessions) {
		t.Fatalf("List: %d entries, want %d", len(entries), len(sessions))
	}
	expected := filepath.Join(fixture.Dir(t), "dsh-0.1.0", "expected", "sqlite")
	for _, o := range sessions {
		t.Run(seam.SafeName(o.ID), func(t *testing.T) {
			e := entries[slices.IndexFunc(entries, func(e seam.Entry) bool { return e.Snapshot.Header.ID == o.ID })]
			snap, err := s.Stat(ctx, o.ID)
			if err != nil || e.Err != nil {
				t.Fatalf("Stat: %v; List: %v", err, e.Err)
			}
			if snap.EventCount != o.EventCount || e.Snapshot.EventCount != o.EventCount || snap.Revision != e.Snapshot.Revision {
				t.Fatalf("EventCount: Stat %d, List %d, want %d; revisions %q, %q", snap.EventCount, e.Snapshot.EventCount, o.EventCount, snap.Revision, e.Snapshot.Revision)
			}
			if loc := snap.Location; loc.Backend != "sqlite" || loc.Encoding != "sqlite-14" || loc.Path != s.Path() || loc.TornBytes != 0 {
				t.Fatalf("Location %+v", loc)
			}
			w := jsonValue(t, jsonlHeaders[o.ID]).(map[string]any)
			w["type"] = "session" // the oracle reports the header without it
			if g := jsonValue(t, snap.Header.AppendJSON(nil)); !reflect.DeepEqual(g, any(w)) {
				t.Fatalf("header %s, the JSONL store's %s", snap.Header.AppendJSON(nil), jsonlHeaders[o.ID])
			}
			h, err := s.Open(ctx, o.ID, seam.Read)
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			want := readLines(t, filepath.Join(expected, seam.SafeName(o.ID)+".events.jsonl"))
			got, err := h.Read(ctx, 0, -1)
			if err != nil {
				t.Fatal(err)
			}
			sameJSONEvents(t, "Read", got, want)
			var rev []seam.Event
			for e, err := range h.Scan(ctx, seam.ScanOptions{Reverse: true}) {
				if err != nil {
					t.Fatal(err)
				}
				rev = append(rev, e)
			}
			slices.Reverse(rev)
			sameJSONEvents(t, "reverse Scan", rev, want)
			mid := int64(len(want) / 2)
			part, err := h.Read(ctx, mid, 3)
			if err != nil {
				t.Fatal(err)
			}
			sameJSONEvents(t, "Read(mid, 3)", part, want[mid:min(mid+3, int64(len(want)))])
			if wantInherited := map[bool]int64{true: 19}[strings.HasPrefix(o.ID, "session-6e7f")]; h.InheritedEventCount() != wantInherited {
				t.Fatalf("InheritedEventCount %d, want %d", h.InheritedEventCount(), wantInherited)
			}
		})
	}
}

// TestFixtureAppend14 appends to a copy of the schema-14 store dsh wrote:
// the interrupted session gets dsh's closers and a new turn, stored as
// schema-14 rows, and the database stays a valid schema-14 store.
func TestFixtureAppend14(t *testing.T) {
	ctx := context.Background()
	path := fixtureCopy(t)
	const id = "session-7a2b9c4d-1e3f-4a5b-8c6d-0e1f2a3b4c5d"
	expected := filepath.Join(fixture.Dir(t), "dsh-0.1.0", "expected", "sqlite", id)
	want := readLines(t, expected+".events.jsonl")
	var batch []seam.Event
	for _, line := range readLines(t, expected+".closers.jsonl") {
		rec, err := seam.DecodeRecord(line, 0)
		if err != nil {
			t.Fatal(err)
		}
		batch = append(batch, rec.Event)
		want = append(want, line)
	}
	for _, line := range []string{
		`{"type":"turn/start","seq":42,"time":1785331710000,"data":{"turn":3}}`,
		`{"type":"user/message","seq":43,"time":1785331710001,"data":{"id":"u-3","role":"user","content":[{"type":"text","text":"Again, please — naïve café ☕"}],"source":{"kind":"user"}},"surfaceOp":"append"}`,
		`{"type":"turn/end","seq":44,"time":1785331710002,"data":{"turn":3,"reason":{"kind":"completed"}},"sourceEventSeqs":[42,43]}`,
	} {
		rec, err := seam.DecodeRecord([]byte(line), 0)
		if err != nil {
			t.Fatal(err)
		}
		batch = append(batch, rec.Event)
		want = append(want, []byte(line))
	}

	s, err := Open(path, Options{BackupDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	before, err := s.Stat(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	w, err := s.Open(ctx, id, seam.Write)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Append(ctx, batch[:3]); err != nil {
		t.Fatal(err)
	}
	if err := w.Append(ctx, batch[3:]); err != nil {
		t.Fatal(err)
	}
	w.Close()
	s.Close()

	s, err = Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Schema() != Schema14 {
		t.Fatalf("schema %d after the append", s.Schema())
	}
	after, err := s.Stat(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if after.EventCount != int64(len(want)) || after.Revision == before.Revision ||
		strings.Split(after.Revision, ":")[0] != strings.Split(before.Revision, ":")[0] {
		t.Fatalf("after the append: %d events, revision %q (before %q)", after.EventCount, after.Revision, before.Revision)
	}
	r, err := s.Open(ctx, id, seam.Read)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got, err := r.Read(ctx, 0, -1)
	if err != nil {
		t.Fatal(err)
	}
	sameJSONEvents(t, "Read after the append", got, want)
	if problems, err := s.IntegrityCheck(ctx); err != nil || problems != nil {
		t.Fatalf("integrity_check: %v %v", problems, err)
	}
	if problems, err := s.SchemaProblems(ctx); err != nil || problems != nil {
		t.Fatalf("schema: %v %v", problems, err)
	}
	var types string
	if err := s.db.QueryRowContext(ctx, `SELECT group_concat(typeof(data) || '/' || typeof(source_event_seqs), ' ') FROM
		(SELECT data, source_event_seqs FROM events WHERE session_id = ? AND seq >= 39 ORDER BY seq)`, id).Scan(&types); err != nil {
		t.Fatal(err)
	}
	if types != "text/text text/null text/null text/null text/null text/text" {
		t.Fatalf("appended rows have types %q", types)
	}
	// The sqlite3 shell, when there is one, agrees.
	if sh, err := exec.LookPath("sqlite3"); err == nil {
		out, err := exec.Command(sh, path, "PRAGMA integrity_check; PRAGMA user_version; PRAGMA application_id;",
			"SELECT source_event_seqs FROM events WHERE session_id = '"+id+"' AND seq = 44").CombinedOutput()
		if err != nil || string(out) != "ok\n14\n1146308688\n[42,43]\n" {
			t.Fatalf("sqlite3: %q %v", out, err)
		}
	}
}

// TestRawRows reads the rows of a fixture session as stored and decodes
// them one by one, as verify does.
func TestRawRows(t *testing.T) {
	s, err := Open(fixtureCopy(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const id = "session-2c3d4e5f-6071-4829-9abc-def012345678"
	var cur seam.Cursor
	n := 0
	for r, err := range s.RawRows(context.Background(), id) {
		if err != nil {
			t.Fatal(err)
		}
		if r.DataBlob || r.Ignorable != -1 {
			t.Fatalf("schema-14 row %+v", r)
		}
		rec, err := s.DecodeRow(&r, 0)
		if err != nil {
			t.Fatal(err)
		}
		if err := cur.Advance(&rec); err != nil {
			t.Fatal(err)
		}
		if rec.Event.Seq == 42 && string(r.Seqs) != "[40,41,1,18,22,37]" {
			t.Fatalf("raw source_event_seqs %q", r.Seqs)
		}
		n++
	}
	if n != 61 {
		t.Fatalf("%d rows, want 61", n)
	}
	for _, err := range s.RawRows(context.Background(), "absent") {
		wantKind(t, err, seam.ErrNotFound, "RawRows of an absent session")
	}
}
