package sqlite

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/dshctl/dshctl/internal/export"
	"github.com/dshctl/dshctl/internal/fixture"
	"github.com/dshctl/dshctl/internal/inspect"
	"github.com/dshctl/dshctl/internal/seam"
	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// The benchmarks build their databases from the real events of dsh's
// fixture sessions (renumbered), not from repetitive text. Large ones are
// kept between runs in DSHCTL_SQLITE_BENCH_DIR (default: a temp dir per
// run). scripts/bench-sqlite.sh runs them beside the sqlite3 shell.

// fixtureSessions returns the events of every fixture session dsh wrote,
// in id order, as lines.
func fixtureSessions(tb testing.TB) [][]seam.Event {
	tb.Helper()
	dir := filepath.Join(fixture.Dir(tb), "dsh-0.1.0", "expected", "jsonl-zstd")
	names, err := filepath.Glob(filepath.Join(dir, "*.events.jsonl"))
	if err != nil {
		tb.Fatal(err)
	}
	sort.Strings(names)
	var out [][]seam.Event
	for _, name := range names {
		data, err := os.ReadFile(name)
		if err != nil {
			tb.Fatal(err)
		}
		var events []seam.Event
		for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			if line == "" {
				continue
			}
			rec, err := seam.DecodeRecord([]byte(line), 0)
			if err != nil {
				tb.Fatal(err)
			}
			events = append(events, rec.Event)
		}
		if len(events) > 0 {
			out = append(out, events)
		}
	}
	return out
}

// shifted returns e moved to seq e.Seq+base, with the seqs it cites.
func shifted(tb testing.TB, e seam.Event, base int64) seam.Event {
	e.Seq += base
	if e.SourceEventSeqs != nil {
		seqs := make([]int64, len(e.SourceEventSeqs))
		for i, s := range e.SourceEventSeqs {
			seqs[i] = s + base
		}
		e.SourceEventSeqs = seqs
	}
	if len(e.SurfaceOp) > 0 && e.SurfaceOp[0] == '{' {
		var op map[string]any
		if err := json.Unmarshal(e.SurfaceOp, &op); err != nil {
			tb.Fatal(err)
		}
		for _, k := range []string{"start", "end"} {
			op[k] = op[k].(float64) + float64(base)
		}
		e.SurfaceOp, _ = json.Marshal(op)
	}
	return e
}

// realLog returns at least n events (whole fixture sessions, cycled)
// starting at seq 0; with small only the sessions under 20 KB are used.
func realLog(tb testing.TB, sessions [][]seam.Event, n int, small bool) []seam.Event {
	var out []seam.Event
	for i := 0; len(out) < n; i++ {
		src := sessions[i%len(sessions)]
		if small && len(src) > 100 {
			continue
		}
		base := int64(len(out))
		for _, e := range src {
			out = append(out, shifted(tb, e, base))
		}
	}
	return out
}

// benchDir is where large benchmark databases live.
func benchDir(tb testing.TB) string {
	if d := os.Getenv("DSHCTL_SQLITE_BENCH_DIR"); d != "" {
		os.MkdirAll(d, 0o700)
		return d
	}
	return tb.TempDir()
}

// bulkStore makes (or reuses) a database at path holding the given
// sessions, loaded in one transaction through the backend's row encoder.
func bulkStore(tb testing.TB, path string, schema int, sessions map[string][]seam.Event) *Store {
	tb.Helper()
	if _, err := os.Stat(path); err == nil {
		s, err := Open(path, Options{})
		if err != nil {
			tb.Fatal(err)
		}
		return s
	}
	s, err := Open(path, Options{Create: true, Schema: schema})
	if err != nil {
		tb.Fatal(err)
	}
	ctx := context.Background()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		tb.Fatal(err)
	}
	ids := make([]string, 0, len(sessions))
	for id := range sessions {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for i, id := range ids {
		events := sessions[id]
		if _, err := tx.ExecContext(ctx, `INSERT INTO sessions (id, `+sessionCols+`) VALUES (?, 0, ?, '/home/dev/projects/demo-app', NULL, NULL, NULL, 0, NULL, 'bench', 1)`,
			id, 1785331618000+int64(i)); err != nil {
			tb.Fatal(err)
		}
		for from := 0; from < len(events); from += 1000 {
			rows, err := encodeRows(events[from:min(from+1000, len(events))], schema, 0)
			if err != nil {
				tb.Fatal(err)
			}
			if err := s.insertRows(ctx, tx, id, rows); err != nil {
				tb.Fatal(err)
			}
		}
	}
	if err := tx.Commit(); err != nil {
		tb.Fatal(err)
	}
	if _, err := s.db.Exec("PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		tb.Fatal(err)
	}
	return s
}

// manySessions returns n sessions of real, small fixture logs.
func manySessions(tb testing.TB, n int) map[string][]seam.Event {
	all := fixtureSessions(tb)
	out := make(map[string][]seam.Event, n)
	for i := range n {
		out[fmt.Sprintf("session-%08d-bench", i)] = realLog(tb, all[i%len(all):], 1, true)
	}
	return out
}

// BenchmarkList lists a database of 10,000 sessions the way `dshctl list`
// does: List (sessions rows and each session's last row) and, through
// ListOpen, the bounded head and tail scans of inspect.ReadMeta.
func BenchmarkList(b *testing.B) {
	for _, schema := range []int{Schema14, Schema17} {
		path := filepath.Join(benchDir(b), fmt.Sprintf("list-10k-%d.sqlite", schema))
		var sessions map[string][]seam.Event
		if _, err := os.Stat(path); err != nil {
			sessions = manySessions(b, 10000)
		}
		s := bulkStore(b, path, schema, sessions)
		b.Run(fmt.Sprintf("schema%d/List", schema), func(b *testing.B) {
			for b.Loop() {
				entries, err := s.List(context.Background())
				if err != nil || len(entries) != 10000 {
					b.Fatal(len(entries), err)
				}
			}
		})
		b.Run(fmt.Sprintf("schema%d/ListOpen+ReadMeta", schema), func(b *testing.B) {
			for b.Loop() {
				n := 0
				err := s.ListOpen(context.Background(), nil, func(e seam.Entry, h seam.Handle, err error) {
					if err != nil || e.Err != nil {
						b.Fatal(err, e.Err)
					}
					if _, err := inspect.ReadMeta(context.Background(), h, inspect.MetaOptions{}); err != nil {
						b.Fatal(err)
					}
					n++
				})
				if err != nil || n != 10000 {
					b.Fatal(n, err)
				}
			}
		})
		b.Run(fmt.Sprintf("schema%d/sqlite3-shell-same-listing", schema), func(b *testing.B) {
			sh, err := exec.LookPath("sqlite3")
			if err != nil {
				b.Skip("no sqlite3 shell")
			}
			q := `SELECT s.id, s.version, s.created_at, s.revision, e.seq, e.type, length(e.data) FROM sessions s LEFT JOIN events e ON e.session_id = s.id AND e.seq = (SELECT max(seq) FROM events WHERE session_id = s.id)`
			for b.Loop() {
				if out, err := exec.Command(sh, s.Path(), q).Output(); err != nil || len(out) == 0 {
					b.Fatal(err)
				}
			}
		})
		s.Close()
	}
}

// BenchmarkStat stats the last session of databases whose sessions hold
// 1,000 and 100,000 events: the time must not grow with the log.
func BenchmarkStat(b *testing.B) {
	all := fixtureSessions(b)
	for _, n := range []int{1000, 100000} {
		s := bulkStore(b, filepath.Join(benchDir(b), fmt.Sprintf("stat-%d.sqlite", n)), Schema17,
			map[string][]seam.Event{"a": realLog(b, all, n, false), "z": realLog(b, all, n, false)})
		b.Run(fmt.Sprintf("events=%d", n), func(b *testing.B) {
			for b.Loop() {
				if snap, err := s.Stat(context.Background(), "z"); err != nil || snap.EventCount < int64(n) {
					b.Fatal(err)
				}
			}
		})
		s.Close()
	}
}

// bigSession returns a database with one session of about 100 MB of real
// events.
func bigSession(b *testing.B, schema int) *Store {
	const target = 100 << 20
	path := filepath.Join(benchDir(b), fmt.Sprintf("cat-100mb-%d.sqlite", schema))
	if _, err := os.Stat(path); err == nil {
		return bulkStore(b, path, schema, nil)
	}
	all := fixtureSessions(b)
	perCycle := 0
	n := 0
	for _, s := range all {
		n += len(s)
		for _, e := range s {
			perCycle += len(e.AppendJSON(nil)) + 1
		}
	}
	events := realLog(b, all, n*(target/perCycle+1), false)
	return bulkStore(b, path, schema, map[string][]seam.Event{"big": events})
}

// BenchmarkCat streams a 100 MB session as canonical JSONL, as `dshctl
// cat` does (inspect.Stream into export.Canonical), beside two floors in
// the same run: the bare select of the session's data column through
// database/sql and through the direct connection the scans use (nothing
// decoded or copied), and the sqlite3 shell running that select.
func BenchmarkCat(b *testing.B) {
	const bare = "SELECT data FROM events WHERE session_id = 'big' ORDER BY seq"
	for _, schema := range []int{Schema14, Schema17} {
		s := bigSession(b, schema)
		b.Run(fmt.Sprintf("schema%d/cat", schema), func(b *testing.B) {
			h, err := s.Open(context.Background(), "big", seam.Read)
			if err != nil {
				b.Fatal(err)
			}
			defer h.Close()
			defer reportCPU(b, cpuTime())
			for b.Loop() {
				var n countWriter
				w := bufio.NewWriterSize(&n, 64<<10)
				if _, err := inspect.Stream(context.Background(), h, inspect.StreamOptions{}, export.NewCanonical(w)); err != nil {
					b.Fatal(err)
				}
				w.Flush()
				b.SetBytes(int64(n))
			}
		})
		b.Run(fmt.Sprintf("schema%d/modernc-bare-select", schema), func(b *testing.B) {
			defer reportCPU(b, cpuTime())
			for b.Loop() {
				rows, err := s.db.Query(bare)
				if err != nil {
					b.Fatal(err)
				}
				var data sql.RawBytes
				for rows.Next() {
					if err := rows.Scan(&data); err != nil {
						b.Fatal(err)
					}
					io.Discard.Write(data)
				}
				if err := rows.Close(); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("schema%d/direct-bare-select", schema), func(b *testing.B) {
			d, err := s.getDirect()
			if err != nil {
				b.Fatal(err)
			}
			defer s.putDirect(d)
			defer reportCPU(b, cpuTime())
			for b.Loop() {
				st, err := d.prepare(bare, true)
				if err != nil {
					b.Fatal(err)
				}
				for sqlite3.Xsqlite3_step(d.tls, st) == sqlite3.SQLITE_ROW {
					io.Discard.Write(libc.GoBytes(sqlite3.Xsqlite3_column_blob(d.tls, st, 0), int(sqlite3.Xsqlite3_column_bytes(d.tls, st, 0))))
				}
				sqlite3.Xsqlite3_reset(d.tls, st)
			}
		})
		b.Run(fmt.Sprintf("schema%d/sqlite3-shell", schema), func(b *testing.B) {
			sh, err := exec.LookPath("sqlite3")
			if err != nil {
				b.Skip("no sqlite3 shell")
			}
			// Straight to /dev/null, as hyperfine runs it: no pipe for this
			// process to copy from.
			null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
			if err != nil {
				b.Fatal(err)
			}
			defer null.Close()
			defer reportCPU(b, cpuTime())
			for b.Loop() {
				cmd := exec.Command(sh, s.Path(), bare)
				cmd.Stdout = null
				if err := cmd.Run(); err != nil {
					b.Fatal(err)
				}
			}
		})
		s.Close()
	}
}

// reportCPU reports the CPU time per op since start (self and children),
// which the load of a shared machine disturbs less than wall time.
func reportCPU(b *testing.B, start time.Duration) {
	if start > 0 {
		b.ReportMetric(float64(cpuTime()-start)/float64(b.N)/1e6, "cpu-ms/op")
	}
}

// countWriter counts the bytes written to it.
type countWriter int64

func (c *countWriter) Write(p []byte) (int, error) {
	*c += countWriter(len(p))
	return len(p), nil
}

// BenchmarkAppend appends one small batch per iteration to a session of
// the 100 MB database, and times a bare write+fsync of a page in the same
// directory, the floor an append pays.
func BenchmarkAppend(b *testing.B) {
	s := bigSession(b, Schema17)
	defer s.Close()
	h, err := s.Open(context.Background(), "big", seam.Write)
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close()
	next, _ := s.Stat(context.Background(), "big")
	seq := next.EventCount
	b.Run("append-3-events", func(b *testing.B) {
		for b.Loop() {
			batch := []seam.Event{
				{Type: "turn/start", Seq: seq, Time: time.Now().UnixMilli(), Data: []byte(`{"turn":9}`)},
				{Type: "user/message", Seq: seq + 1, Time: time.Now().UnixMilli(), Data: []byte(`{"id":"u","role":"user","content":[{"type":"text","text":"next"}],"source":{"kind":"user"}}`), SurfaceOp: []byte(`"append"`)},
				{Type: "turn/end", Seq: seq + 2, Time: time.Now().UnixMilli(), Data: []byte(`{"turn":9,"reason":{"kind":"completed"}}`)},
			}
			if err := h.Append(context.Background(), batch); err != nil {
				b.Fatal(err)
			}
			seq += 3
		}
	})
	b.Run("write+fsync-4KiB", func(b *testing.B) {
		f, err := os.OpenFile(filepath.Join(filepath.Dir(s.Path()), "fsync-floor"), os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
		if err != nil {
			b.Fatal(err)
		}
		defer os.Remove(f.Name())
		defer f.Close()
		page := make([]byte, 4096)
		for b.Loop() {
			if _, err := f.Write(page); err != nil {
				b.Fatal(err)
			}
			if err := f.Sync(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
