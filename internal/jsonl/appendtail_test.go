package jsonl

import (
	"context"
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/dshctl/dshctl/internal/inspect"
	"github.com/dshctl/dshctl/internal/jsonl/zstdframe"
	"github.com/dshctl/dshctl/internal/seam"
)

// genTurnLog writes a v0 session log of at least size bytes made of
// complete turns, one batch (zstd frame) each, of about 50 KB: turn/start,
// step/start, an assistant message calling a tool, the call, its result
// (random base64), step/end and turn/end. With open set, the last turn
// stops after the tool call, as a crash leaves it. It returns the root,
// the log's path and its event count.
func genTurnLog(tb testing.TB, enc Encoding, size int64, open bool) (root, path string, events int64) {
	tb.Helper()
	w := newLogWriter(tb, enc, "turns")
	defer w.close()
	rng := rand.New(rand.NewPCG(3, uint64(size)))
	raw := make([]byte, 36<<10)
	h := w.hdr
	var batch []byte
	add := func(typ, data string) {
		e := seam.Event{Type: typ, Seq: events, Time: h.CreatedAt + events, Data: []byte(data)}
		if seam.IsSurfaceType(0, typ) {
			e.SurfaceOp = []byte(`"append"`)
		}
		batch = append(e.AppendJSON(batch), '\n')
		events++
	}
	for turn := 1; ; turn++ {
		last := w.written >= size
		batch = batch[:0]
		call := fmt.Sprintf("call_%d", turn)
		add("turn/start", fmt.Sprintf(`{"turn":%d}`, turn))
		add("step/start", fmt.Sprintf(`{"turn":%d,"step":1}`, turn))
		add("assistant/message", fmt.Sprintf(`{"turn":%d,"step":1,"message":{"role":"assistant","content":[{"type":"tool-call","id":%q,"name":"bash","arguments":"{}"}],"source":{"kind":"model","provider":"p","model":"m"}}}`, turn, call))
		add("tool/call", fmt.Sprintf(`{"turn":%d,"step":1,"callId":%q,"name":"bash","arguments":"{}"}`, turn, call))
		if !(last && open) {
			for i := range raw {
				raw[i] = byte(rng.Uint32())
			}
			add("tool/result", fmt.Sprintf(`{"turn":%d,"step":1,"message":{"role":"user","source":{"kind":"tool","callId":%q},"content":[{"type":"tool-result","toolCallId":%q,"content":[{"type":"text","text":%q}]}]}}`,
				turn, call, call, base64.StdEncoding.EncodeToString(raw)))
			add("step/end", fmt.Sprintf(`{"turn":%d,"step":1}`, turn))
			add("turn/end", fmt.Sprintf(`{"turn":%d,"reason":{"kind":"completed"}}`, turn))
		}
		w.put(batch)
		if last {
			return w.root, w.path, events
		}
	}
}

// TestAppendReadsOnlyTail proves that appending to a large log reads only
// its tail, counted through the store's file interface: opening it for
// writing, repairing a torn tail, finding the closers of an open turn and
// appending read less than maxRead bytes of a 32 MB log, as of a one-turn
// one, and the result reads back exactly. (The reverse read of an open
// turn also reads back to the turn/end before it, to know the turn is not
// an uncommitted tail: the 50 KB frame before it, 64 KiB of blocks.)
func TestAppendReadsOnlyTail(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("writes 64 MB")
	}
	const maxRead = 640 << 10
	ctx := context.Background()
	for _, enc := range []Encoding{None, Zstd} {
		for _, c := range []struct {
			name string
			size int64
			open bool
			torn bool
		}{
			{"one turn", 0, false, false},
			{"32MB", 32 << 20, false, false},
			{"32MB torn", 32 << 20, false, true},
			{"32MB open turn", 32 << 20, true, false},
		} {
			t.Run(fmt.Sprintf("%s/%s", enc, c.name), func(t *testing.T) {
				root, path, events := genTurnLog(t, enc, c.size, c.open)
				if c.torn {
					torn := []byte(`{"type":"turn/start","seq":`)
					if enc == Zstd {
						torn = zstdframe.AppendFrame(nil, torn)[:12]
					}
					appendFile(t, path, torn)
				}
				s, tfs := openStore(t, root, Options{BackupDir: t.TempDir()})
				tfs.read.Store(0)
				w, err := s.Open(ctx, "turns", seam.Write)
				if err != nil {
					t.Fatal(err)
				}
				defer w.Close()
				batch, err := inspect.Closers(ctx, w)
				if err != nil {
					t.Fatal(err)
				}
				if got := len(batch); c.open && got != 3 || !c.open && got != 0 {
					t.Fatalf("%d closers", got)
				}
				next := events + int64(len(batch))
				batch = append(batch, event(next, "session/title", `{"title":"t"}`))
				if err := w.Append(ctx, batch); err != nil {
					t.Fatal(err)
				}
				read := tfs.read.Load()
				t.Logf("append to %s read %d bytes", c.name, read)
				if read > maxRead {
					t.Fatalf("append read %d bytes of a %d-byte log, want at most %d", read, c.size, maxRead)
				}
				if reps := w.(seam.TailRepairer).Repairs(); c.torn != (len(reps) == 1) {
					t.Fatalf("repairs: %+v", reps)
				}
				w.Close()
				snap, err := s.Stat(ctx, "turns")
				if err != nil || snap.EventCount != next+1 || snap.Location.TornBytes != 0 {
					t.Fatalf("Stat after the append: %+v, %v", snap, err)
				}
				got, err := scanAll(t, s, "turns")
				if err != nil || int64(len(got)) != next+1 || got[next].Type != "session/title" {
					t.Fatalf("read back %d events, %v", len(got), err)
				}
			})
		}
	}
}

// TestWriteOpenChecksTheLinkBefore: a turn/end whose seq does not follow
// the row before it (or a first row not at seq 0) is the first bad record
// to a full read, so the tail-only write open must not start from it: both
// must find the same next seq, committed end and tail (fuzzer.run compares
// them), for plain and zstd logs.
func TestWriteOpenChecksTheLinkBefore(t *testing.T) {
	skipped := `{"type":"turn/end","seq":7,"time":6,"data":{"turn":1,"reason":{"kind":"completed"}}}` + "\n"
	first := `{"type":"turn/end","seq":1,"time":0,"data":{}}` + "\n"
	body := strings.Join(fuzzLines, "")
	for _, enc := range []Encoding{None, Zstd} {
		for name, rows := range map[string][]string{
			"first row not at seq 0": {first},
			"turn/end skips a seq":   {body, skipped},
		} {
			t.Run(fmt.Sprintf("%v/%s", enc, name), func(t *testing.T) {
				log := []byte(headerFor("s"))
				if enc == Zstd {
					log = zstdframe.AppendFrame(nil, log)
				}
				for _, r := range rows {
					if enc == Zstd {
						log = zstdframe.AppendFrame(log, []byte(r))
					} else {
						log = append(log, r...)
					}
				}
				fz := &fuzzer{root: t.TempDir(), backups: t.TempDir(), enc: enc}
				fz.run(t, log)
			})
		}
	}
}
