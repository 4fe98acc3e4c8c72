package commitrule

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dshctl/dshctl/internal/fixture"
	"github.com/dshctl/dshctl/internal/jsonl"
	"github.com/dshctl/dshctl/internal/jsonl/hostile"
	"github.com/dshctl/dshctl/internal/jsonl/zstdframe"
	"github.com/dshctl/dshctl/internal/seam"
	"github.com/dshctl/dshctl/internal/sqlite"
	"github.com/dshctl/dshctl/internal/verify"
)

var ctx = context.Background()

// answer is what one decider says of a session's committed data.
type answer struct {
	// refused says no reader serves the session: its committed data is
	// damaged, or of a format or size a reader refuses.
	refused bool
	events  int64 // the committed events
	next    int64 // the seq after the last committed event
}

func (a answer) String() string {
	if a.refused {
		return "refused"
	}
	return fmt.Sprintf("%d events, next seq %d", a.events, a.next)
}

// store is a backend under test.
type store interface {
	seam.Service
	seam.LogVerifier
}

// byVerify is LogCheck's answer: damage refuses, else the events it
// counts as committed and the seq an append continues at. An uncommitted
// tail whose first record verify did not check (over the record limit) is
// a refusal too: only that record says whether the tail is uncommitted,
// and a reader, which must read it to know, refuses it (seam.ErrLimit).
func byVerify(t *testing.T, s store, id string) (answer, verify.CheckResult) {
	t.Helper()
	c := verify.NewLogCheck()
	if _, err := s.VerifyLog(ctx, id, c); err != nil {
		t.Fatalf("VerifyLog %q: %v", id, err)
	}
	res := c.Result()
	for _, f := range res.Findings() {
		if f.Class == seam.ClassDamage {
			return answer{refused: true}, res
		}
	}
	if res.Uncommitted != nil && res.Uncommitted.NotChecked {
		return answer{refused: true}, res
	}
	return answer{events: res.Events, next: res.NextSeq}, res
}

// byReader is the reader's answer: a read open and a full scan, forward or
// in reverse. The error is the refusal, if any.
func byReader(t *testing.T, s store, id string, reverse bool) (answer, error) {
	t.Helper()
	h, err := s.Open(ctx, id, seam.Read)
	if err != nil {
		return refusal(t, err)
	}
	defer h.Close()
	var a answer
	for e, err := range h.Scan(ctx, seam.ScanOptions{Reverse: reverse, Transient: true}) {
		if err != nil {
			return refusal(t, err)
		}
		switch {
		case reverse && a.events == 0:
			a.next = e.Seq + 1
		case !reverse && e.Seq != a.next:
			t.Fatalf("%q: the reader serves seq %d after %d", id, e.Seq, a.next-1)
		case !reverse:
			a.next = e.Seq + 1
		}
		a.events++
	}
	return a, nil
}

// refusal is the answer of a reader that failed with err: a refusal of
// the data, or an operational failure, which ends the test.
func refusal(t *testing.T, err error) (answer, error) {
	t.Helper()
	if errors.Is(err, seam.ErrCorrupt) || errors.Is(err, seam.ErrUnsupportedFormat) || errors.Is(err, seam.ErrLimit) {
		return answer{refused: true}, err
	}
	t.Fatalf("read: %v", err)
	return answer{}, err
}

// agree holds every decider to one answer for each session of s: verify's
// LogCheck, a full forward read and a full reverse read must give the same
// answer, and Stat's event count (the next seq, found from the tail) the
// same where the data is not refused. It returns the answer for each
// session.
func agree(t *testing.T, s store) map[string]answer {
	t.Helper()
	entries, err := s.List(ctx)
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	out := map[string]answer{}
	for _, e := range entries {
		id := e.Snapshot.Header.ID
		v, res := byVerify(t, s, id)
		out[id] = v
		fwd, ferr := byReader(t, s, id, false)
		if fwd != v {
			t.Errorf("%q: verify says %v (%+v), the reader %v (%v)", id, v, res.Findings(), fwd, ferr)
			continue
		}
		if rev, rerr := byReader(t, s, id, true); rev != fwd {
			t.Errorf("%q: read forward: %v; in reverse: %v (%v)", id, fwd, rev, rerr)
		}
		if fwd.refused {
			continue
		}
		st, err := s.Stat(ctx, id)
		switch {
		case err != nil:
			t.Errorf("%q: Stat: %v, but the reader serves %v", id, err, fwd)
		case st.EventCount != fwd.next:
			t.Errorf("%q: Stat counts %d events, the reader serves %v", id, st.EventCount, fwd)
		}
	}
	return out
}

func openJSONL(t *testing.T, root string, o jsonl.Options) *jsonl.Store {
	t.Helper()
	s, err := jsonl.Open(root, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestFixtures runs every store dsh wrote, sound and damaged, JSONL and
// SQLite, through every decider.
func TestFixtures(t *testing.T) {
	dir := fixture.Dir(t)
	roots := []string{"dsh-0.1.0/jsonl-none", "dsh-0.1.0/jsonl-zstd", "dsh-v2-v4"}
	damaged, err := filepath.Glob(filepath.Join(dir, "dsh-0.1.0", "damaged", "*"))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range damaged {
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			rel, _ := filepath.Rel(dir, d)
			roots = append(roots, rel)
		}
	}
	if len(roots) < 10 {
		t.Fatalf("only %d fixture stores", len(roots))
	}
	for _, r := range roots {
		t.Run(r, func(t *testing.T) {
			if len(agree(t, openJSONL(t, fixture.Copy(t, filepath.Join(dir, r)), jsonl.Options{}))) == 0 {
				t.Fatal("no sessions")
			}
		})
	}
	t.Run("dsh-0.1.0/sqlite", func(t *testing.T) {
		root := fixture.Copy(t, filepath.Join(dir, "dsh-0.1.0", "sqlite"))
		s, err := sqlite.Open(filepath.Join(root, "sessions.sqlite"), sqlite.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if len(agree(t, s)) == 0 {
			t.Fatal("no sessions")
		}
	})
}

// header is the header line of the one session a body is the log of.
const header = `{"type":"session","version":0,"id":"s","createdAt":1,"cwd":"/p","delegationDepth":0}` + "\n"

// oneLog runs the log of one session "s" through every decider, which
// read with the default limits (as jsonl's FuzzVerify* do).
func oneLog(t *testing.T, zstd bool, log []byte) {
	t.Helper()
	oneLogWith(t, zstd, log, jsonl.Options{})
}

// oneLogWith is oneLog with the store's options o.
func oneLogWith(t *testing.T, zstd bool, log []byte, o jsonl.Options) {
	t.Helper()
	root := t.TempDir()
	enc, name := jsonl.None, "session.jsonl"
	if zstd {
		enc, name = jsonl.Zstd, "session.jsonl.zstd"
	}
	dir := filepath.Join(root, hostile.ProjectDir, "s")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), log, 0o644); err != nil {
		t.Fatal(err)
	}
	o.Compression = enc
	if len(agree(t, openJSONL(t, root, o))) != 1 {
		t.Fatal("the session is not listed")
	}
}

// corpus returns the inputs that jsonl's fuzz target name keeps in its
// testdata (inputs fuzzing found, each a []byte).
func corpus(t *testing.T, name string) [][]byte {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "jsonl", "testdata", "fuzz", name, "*"))
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		if len(lines) != 2 || lines[0] != "go test fuzz v1" || !strings.HasPrefix(lines[1], "[]byte(") {
			t.Fatalf("%s: not a corpus file of one []byte", f)
		}
		s, err := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(lines[1], "[]byte("), ")"))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out = append(out, []byte(s))
	}
	return out
}

// TestFuzzSeeds runs the seeds and the kept corpus of jsonl's fuzz
// targets (FuzzReadPlain/Zstd, FuzzVerifyPlain/Zstd) through every
// decider: each is the body of a log after its header.
func TestFuzzSeeds(t *testing.T) {
	plain := append(hostile.PlainSeeds(), hostile.Shapes(false)...)
	plain = append(plain, corpus(t, "FuzzReadPlain")...)
	plain = append(plain, corpus(t, "FuzzVerifyPlain")...)
	zstd := append(hostile.ZstdSeeds(zstdframe.AppendFrame), hostile.Shapes(true)...)
	zstd = append(zstd, corpus(t, "FuzzReadZstd")...)
	zstd = append(zstd, corpus(t, "FuzzVerifyZstd")...)
	head := zstdframe.AppendFrame(nil, []byte(header))
	for i, b := range plain {
		t.Run(fmt.Sprintf("plain/%d", i), func(t *testing.T) { oneLog(t, false, append([]byte(header), b...)) })
	}
	for i, b := range zstd {
		t.Run(fmt.Sprintf("zstd/%d", i), func(t *testing.T) {
			oneLog(t, true, append(head[:len(head):len(head)], b...))
		})
	}
}

// TestRecordLimit runs logs with a record over a lowered record limit
// (--max-record-bytes 4KiB) through every decider, plain and zstd: every
// reader refuses it (seam.ErrLimit) and verify, with the same limit, does
// not count it as sound, whether a turn/end commits it or not and whether
// or not its zstd frame is held in memory.
func TestRecordLimit(t *testing.T) {
	committed := strings.Join(hostile.Lines, "")
	long := `{"type":"session/title","seq":6,"time":1,"data":{"title":"` + strings.Repeat("a", 8<<10) + "\"}}\n"
	for _, c := range []struct {
		name  string
		parts []string // the body, a frame each in a zstd log
	}{
		{"alone", []string{strings.Replace(long, `"seq":6`, `"seq":0`, 1)}},
		{"uncommitted", []string{committed, long}},
		{"uncommitted, in the last frame", []string{committed + long}},
		{"committed", []string{committed, long, hostile.Turn(7, 2)}},
		{"committed, in one frame", []string{committed + long + hostile.Turn(7, 2)}},
		{"after an uncommitted tail", []string{committed, "junk\n", long}},
	} {
		for _, zstd := range []bool{false, true} {
			log := []byte(header)
			if zstd {
				log = zstdframe.AppendFrame(nil, log)
			}
			for _, p := range c.parts {
				if zstd {
					log = zstdframe.AppendFrame(log, []byte(p))
				} else {
					log = append(log, p...)
				}
			}
			t.Run(fmt.Sprintf("%s/zstd=%v", c.name, zstd), func(t *testing.T) {
				oneLogWith(t, zstd, log, jsonl.Options{MaxRecordBytes: 4 << 10})
			})
		}
	}
}

// bigTurn is a turn from seq on of over 1 MiB: a turn/start and 12,000
// todo/write events, with garbage in place of the one at index bad (if
// not negative), and a turn/end when closed.
func bigTurn(seq int64, bad int, closed bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, `{"type":"turn/start","seq":%d,"time":1,"data":{"turn":2}}`+"\n", seq)
	for i := range 12000 {
		seq++
		if i == bad {
			b.WriteString("garbage\n")
			continue
		}
		fmt.Fprintf(&b, `{"type":"todo/write","seq":%d,"time":1,"data":{"todos":[{"content":"step %d of a long turn","status":"pending"}]}}`+"\n", seq, i)
	}
	if closed {
		fmt.Fprintf(&b, `{"type":"turn/end","seq":%d,"time":1,"data":{"turn":2,"reason":{"kind":"completed"}}}`+"\n", seq+1)
	}
	return b.String()
}

// chunks are n assistant/chunk events from seq on: a run a schema-17
// database stores as one packed row.
func chunks(seq int64, n int) []seam.Event {
	out := make([]seam.Event, n)
	for i := range out {
		out[i] = seam.Event{Type: "assistant/chunk", Seq: seq + int64(i), Time: 2,
			Data: fmt.Appendf(nil, `{"turn":1,"step":1,"chunk":{"type":"text-delta","index":0,"text":"part %d"}}`, i)}
	}
	return out
}

// turn is a v0 turn of 6+n events from seq on whose step streams n chunks;
// end says whether it ends.
func turn(seq int64, n int, end bool) []seam.Event {
	ev := func(typ, data string) seam.Event {
		e := seam.Event{Type: typ, Seq: seq, Time: 1, Data: []byte(data)}
		seq++
		return e
	}
	out := []seam.Event{ev("turn/start", `{"turn":1}`),
		ev("user/message", `{"id":"u1","role":"user","content":[{"type":"text","text":"hi"}],"source":{"kind":"user"}}`),
		ev("step/start", `{"turn":1,"step":1}`)}
	out[1].SurfaceOp = []byte(`"append"`)
	out = append(out, chunks(seq, n)...)
	seq += int64(n)
	if !end {
		return out
	}
	return append(out, ev("step/end", `{"turn":1,"step":1}`), ev("session/title", `{"title":"t"}`),
		ev("turn/end", `{"turn":1,"reason":{"kind":"completed"}}`))
}

// TestDatabaseDamage runs sessions of SQLite databases (schema 17 and
// 14), sound and damaged as bad_sqlite_rows.txtar and the sqlite
// package's tests damage them, through every decider: a final packed row
// that does not decode is a torn row (its events are not committed); any
// other row that does not decode, a seq gap, a negative seq and a newer
// format are refused.
func TestDatabaseDamage(t *testing.T) {
	type damage struct {
		name, sql string
		open      bool   // the session ends in an open turn whose last row is packed
		want      answer // verify's, which every decider must agree with
	}
	refused := answer{refused: true}
	const where = ` WHERE session_id = '%[1]s' AND seq = (SELECT max(seq) FROM events WHERE session_id = '%[1]s')`
	for _, c := range []struct {
		schema  int
		damages []damage
	}{
		{sqlite.Schema17, []damage{
			{name: "sound", want: answer{events: 11, next: 11}},
			{name: "sound-open", open: true, want: answer{events: 8, next: 8}},
			{name: "torn-packed", open: true, sql: `UPDATE events SET data = '{"turn":1,"textz":[]}'` + where, want: answer{events: 3, next: 3}},
			{name: "packed-then-more", sql: `UPDATE events SET data = 'not json' WHERE session_id = '%[1]s' AND seq = 3`, want: refused},
			{name: "scalar-final", sql: `UPDATE events SET data = 'not json'` + where, want: refused},
			{name: "gap", sql: `DELETE FROM events WHERE session_id = '%[1]s' AND seq = 1`, want: refused},
			{name: "negative", sql: `INSERT INTO events (session_id, seq, type, time, data) VALUES ('%[1]s', -5, 'turn/start', 1, '{"turn":0}')`, want: refused},
			{name: "bomb", sql: `UPDATE events SET data = x'28b52ffdc00000000000000001000000' WHERE session_id = '%[1]s' AND seq = 1`, want: refused},
			{name: "varint", sql: `UPDATE events SET source_event_seqs = x'ffffffffffffffffffffff' WHERE session_id = '%[1]s' AND seq = 1`, want: refused},
			{name: "newer", sql: `UPDATE sessions SET version = 99 WHERE id = '%[1]s'`, want: refused},
		}},
		{sqlite.Schema14, []damage{
			{name: "sound", want: answer{events: 11, next: 11}},
			{name: "sound-open", open: true, want: answer{events: 8, next: 8}},
			{name: "scalar-final", sql: `UPDATE events SET data = 'not json'` + where, want: refused},
			{name: "gap", sql: `DELETE FROM events WHERE session_id = '%[1]s' AND seq = 4`, want: refused},
		}},
	} {
		t.Run(fmt.Sprintf("schema%d", c.schema), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "db.sqlite")
			s, err := sqlite.Open(path, sqlite.Options{Create: true, Schema: c.schema})
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range c.damages {
				h, err := s.Create(ctx, seam.Header{Version: 0, ID: d.name, CreatedAt: 1, Cwd: "/w"}, seam.CreateOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if err := h.Append(ctx, turn(0, 5, !d.open)); err != nil {
					t.Fatal(err)
				}
				h.Close()
			}
			s.Close()
			db, err := sql.Open("sqlite", path)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range c.damages {
				if d.sql == "" {
					continue
				}
				if r, err := db.Exec(fmt.Sprintf(d.sql, d.name)); err != nil {
					t.Fatalf("%s: %v", d.name, err)
				} else if n, _ := r.RowsAffected(); n != 1 {
					t.Fatalf("%s: %d rows changed", d.name, n)
				}
			}
			if _, err := db.Exec("PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
				t.Fatal(err)
			}
			db.Close()
			s, err = sqlite.Open(path, sqlite.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			got := agree(t, s)
			for _, d := range c.damages {
				if a, ok := got[d.name]; !ok || a != d.want {
					t.Errorf("%s: %v, want %v", d.name, a, d.want)
				}
			}
		})
	}
}

// TestCatalogue runs small versions of the damaged logs the catalogue
// (testdata/scripts/bad_*.txtar) builds with hostile, after one committed
// turn (seq 0 to 4), through every decider.
func TestCatalogue(t *testing.T) {
	junk := strings.Repeat("{}\nnot json\n", 600)
	for _, c := range []struct {
		name string
		zstd bool
		tail func(path string) error
	}{
		{"plain junk lines", false, func(p string) error { return hostile.Append(p, []byte(junk)) }},
		{"plain junk lines then turn/end", false, func(p string) error { return hostile.Append(p, []byte(junk+hostile.Turn(5, 2))) }},
		{"plain newlines", false, func(p string) error { return hostile.Append(p, []byte(strings.Repeat("\n", 100000))) }},
		{"plain torn tail", false, func(p string) error { return hostile.Extend(p, 1<<20) }},
		{"plain torn turn", false, func(p string) error { return hostile.Append(p, []byte(hostile.Turn(5, 2)[:200])) }},
		{"plain next turn after a gap", false, func(p string) error { return hostile.Append(p, []byte(hostile.Turn(7, 2))) }},
		{"plain overlap", false, func(p string) error { return hostile.Append(p, []byte(hostile.Turn(3, 2))) }},
		{"zstd junk lines", true, func(p string) error { return hostile.Append(p, hostile.Frame(nil, hostile.Text(junk))) }},
		{"zstd junk lines then turn/end", true, func(p string) error {
			return hostile.Append(p, hostile.Frame(nil, hostile.Text(junk), hostile.Text(hostile.Turn(5, 2))))
		}},
		{"zstd frames of newlines", true, func(p string) error {
			return hostile.Append(p, hostile.Frame(hostile.Frame(nil, hostile.Repeat('\n', 1<<20)), hostile.Repeat('\n', 1<<20)))
		}},
		{"zstd unterminated frame", true, func(p string) error {
			f := hostile.Frame(nil, hostile.Text(hostile.Turn(5, 2)))
			return hostile.Append(p, f[:len(f)-4])
		}},
		{"zstd frame without a last newline", true, func(p string) error {
			return hostile.Append(p, hostile.Frame(nil, hostile.Text(strings.TrimSuffix(hostile.Turn(5, 2), "\n"))))
		}},
		{"zstd torn tail", true, func(p string) error { return hostile.Extend(p, 1<<20) }},
		// Frames past what a read from the end holds (1 MiB of content),
		// compressed as dsh's are: an open turn, a closed one, and each
		// with a bad record in it.
		{"zstd large frame, open turn", true, func(p string) error {
			return hostile.Append(p, zstdframe.AppendFrame(nil, []byte(bigTurn(5, -1, false))))
		}},
		{"zstd large frame, closed turn", true, func(p string) error {
			return hostile.Append(p, zstdframe.AppendFrame(nil, []byte(bigTurn(5, -1, true))))
		}},
		{"zstd large frame, bad record in the open turn", true, func(p string) error {
			return hostile.Append(p, zstdframe.AppendFrame(nil, []byte(bigTurn(5, 9000, false))))
		}},
		{"zstd large frame, bad record before its turn/end", true, func(p string) error {
			return hostile.Append(p, zstdframe.AppendFrame(nil, []byte(bigTurn(5, 9000, true))))
		}},
		{"zstd next turn after a gap", true, func(p string) error {
			return hostile.Append(p, hostile.Frame(nil, hostile.Text(hostile.Turn(7, 2))))
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			path, err := hostile.Session(root, "s", c.zstd)
			if err != nil {
				t.Fatal(err)
			}
			if err := c.tail(path); err != nil {
				t.Fatal(err)
			}
			enc := jsonl.None
			if c.zstd {
				enc = jsonl.Zstd
			}
			if len(agree(t, openJSONL(t, root, jsonl.Options{Compression: enc}))) != 1 {
				t.Fatal("the session is not listed")
			}
		})
	}
}
