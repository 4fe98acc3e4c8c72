package jsonl

import (
	"context"
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/dshctl/dshctl/internal/jsonl/zstdframe"
	"github.com/dshctl/dshctl/internal/seam"
)

// logWriter writes the v0 log of one session, in a new root, batch by
// batch (a zstd frame each when zstd), after its header, counting the
// bytes written.
type logWriter struct {
	tb         testing.TB
	root, path string
	hdr        seam.Header
	enc        Encoding
	f          *os.File
	written    int64
}

func newLogWriter(tb testing.TB, enc Encoding, id string) *logWriter {
	tb.Helper()
	w := &logWriter{tb: tb, root: tb.TempDir(), hdr: seam.Header{ID: id, CreatedAt: 1785331618000, Cwd: "/big"}, enc: enc}
	dir := filepath.Join(w.root, "--big--", id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	w.path = filepath.Join(dir, LogName(0, enc))
	var err error
	if w.f, err = os.Create(w.path); err != nil {
		tb.Fatal(err)
	}
	w.put(append(w.hdr.AppendJSON(nil), '\n'))
	return w
}

func (w *logWriter) put(text []byte) {
	if w.enc == Zstd {
		text = zstdframe.AppendFrame(nil, text)
	}
	if _, err := w.f.Write(text); err != nil {
		w.tb.Fatal(err)
	}
	w.written += int64(len(text))
}

func (w *logWriter) close() { w.f.Close() }

// genLog writes a v0 session log of at least size bytes into a new root and
// returns the root, the log path and the event count. Each batch is a turn
// (a turn/start, 14 events and a turn/end), as dsh's are ended, so that a
// read from the end has a committed boundary near it. Payloads are random
// base64, so a zstd log is about as large as a plain one. packed logs end
// every batch with a packed text-chunks row, an open turn's stream.
func genLog(tb testing.TB, enc Encoding, packed bool, size int64) (root, path string, events int64) {
	tb.Helper()
	w := newLogWriter(tb, enc, fmt.Sprintf("big-%s-%v", enc, packed))
	defer w.close()
	rng := rand.New(rand.NewPCG(1, uint64(size)))
	raw := make([]byte, 3<<10)
	blob := make([]byte, base64.StdEncoding.EncodedLen(len(raw)))
	var batch []byte
	t0 := int64(1785331618000)
	for turn := 1; w.written < size; turn++ {
		batch = batch[:0]
		for i := range 16 {
			for i := range raw {
				raw[i] = byte(rng.Uint32())
			}
			base64.StdEncoding.Encode(blob, raw)
			e := seam.Event{Type: "todo/write", Seq: events, Time: t0 + events, Data: fmt.Appendf(nil, `{"blob":%q}`, blob)}
			switch i {
			case 0:
				e.Type, e.Data = "turn/start", fmt.Appendf(nil, `{"turn":%d}`, turn)
			case 15:
				e.Type, e.Data = "turn/end", fmt.Appendf(nil, `{"turn":%d,"reason":{"kind":"completed"}}`, turn)
			}
			batch = append(e.AppendJSON(batch), '\n')
			events++
		}
		if packed {
			batch = fmt.Appendf(batch, `{"type":"text-chunks","seq0":%d,"time0":%d,"data":{"turn":1,"step":1,"index":0,"dt":[1,2],"texts":["a","b","%s"]}}`+"\n",
				events, t0+events, blob[:64])
			events += 3
		}
		w.put(batch)
	}
	return w.root, w.path, events
}

// TestStatReadsOnlyTail proves that Stat and List take the event count from
// the tail: on 100 MB logs they read under 1 MiB and agree with a full
// scan, with and without a torn tail.
func TestStatReadsOnlyTail(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("writes 400 MB")
	}
	ctx := context.Background()
	for _, enc := range []Encoding{None, Zstd} {
		for _, packed := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/packed=%v", enc, packed), func(t *testing.T) {
				t.Parallel()
				start := time.Now()
				root, path, events := genLog(t, enc, packed, 100<<20)
				id := fmt.Sprintf("big-%s-%v", enc, packed)
				gen := time.Since(start)
				s, tfs := openStore(t, root, Options{})
				statRead := func(wantTorn int64) {
					t.Helper()
					tfs.read.Store(0)
					snap, err := s.Stat(ctx, id)
					if err != nil {
						t.Fatal(err)
					}
					read := tfs.read.Load()
					t.Logf("Stat of %d MB read %d bytes", snap.SizeBytes>>20, read)
					if read >= 1<<20 || snap.EventCount != events || snap.Location.TornBytes != wantTorn {
						t.Fatalf("Stat read %d bytes, EventCount %d (want %d), TornBytes %d (want %d)",
							read, snap.EventCount, events, snap.Location.TornBytes, wantTorn)
					}
					tfs.read.Store(0)
					entries, err := s.List(ctx)
					if err != nil || len(entries) != 1 || entries[0].Err != nil || entries[0].Snapshot.EventCount != events {
						t.Fatalf("List: %v %+v", err, entries)
					}
					if read := tfs.read.Load(); read >= 1<<20 {
						t.Fatalf("List read %d bytes", read)
					}
				}
				statRead(0)

				start = time.Now()
				h, err := s.Open(ctx, id, seam.Read)
				if err != nil {
					t.Fatal(err)
				}
				defer h.Close()
				var n int64
				for e, err := range h.Scan(ctx, seam.ScanOptions{}) {
					if err != nil {
						t.Fatal(err)
					}
					if e.Seq != n {
						t.Fatalf("event %d has seq %d", n, e.Seq)
					}
					n++
				}
				if n != events {
					t.Fatalf("full scan read %d events, want %d", n, events)
				}
				t.Logf("generated in %v, scanned in %v", gen, time.Since(start))

				// A torn tail: half a line, or the start of a frame.
				torn := []byte(`{"type":"todo/write","seq":`)
				if enc == Zstd {
					torn = zstdframe.AppendFrame(nil, []byte(`{"type":"todo/write","seq":1,"time":1,"data":{}}`+"\n"))[:20]
				}
				f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
				if err != nil {
					t.Fatal(err)
				}
				f.Write(torn)
				f.Close()
				statRead(int64(len(torn)))
				tfs.read.Store(0)
				for e, err := range h.Scan(ctx, seam.ScanOptions{Reverse: true, MaxBytes: 1 << 20}) {
					if err != nil || e.Seq != events-1 {
						t.Fatalf("reverse scan starts with seq %d, %v; want %d", e.Seq, err, events-1)
					}
					break
				}
				if read := tfs.read.Load(); read >= 1<<20 {
					t.Fatalf("reverse scan of one event read %d bytes", read)
				}
			})
		}
	}
}
