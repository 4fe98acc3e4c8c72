package jsonl

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/dshctl/dshctl/internal/fixture"
	"github.com/dshctl/dshctl/internal/jsonl/zstdframe"
	"github.com/dshctl/dshctl/internal/seam"
	"github.com/dshctl/dshctl/internal/seam/seamtest"
)

func event(seq int64, typ, data string) seam.Event {
	e := seam.Event{Type: typ, Seq: seq, Time: 1785331618000 + seq, Data: []byte(data)}
	if seam.IsSurfaceType(4, typ) {
		e.SurfaceOp = []byte(`"append"`)
	}
	return e
}

// turnEvents returns the events of one complete turn starting at seq.
func turnEvents(seq int64, turn int) []seam.Event {
	d := fmt.Sprintf(`{"turn":%d,"step":1}`, turn)
	return []seam.Event{
		event(seq, "turn/start", fmt.Sprintf(`{"turn":%d}`, turn)),
		event(seq+1, "step/start", d),
		event(seq+2, "user/message", `{"id":"m","role":"user","content":[{"type":"text","text":"hi"}],"source":{"kind":"user"}}`),
		event(seq+3, "step/end", d),
		event(seq+4, "turn/end", fmt.Sprintf(`{"turn":%d,"reason":{"kind":"completed"}}`, turn)),
	}
}

func header(id string, v int) seam.Header {
	h := seam.Header{Version: v, ID: id, CreatedAt: 1785331618000, Cwd: "/home/u/proj"}
	if v >= 2 {
		f := false
		h.IsSeeded = &f
	}
	return h
}

// create creates a session with the given events through a fresh handle
// and closes it.
func create(t *testing.T, s *Store, h seam.Header, events []seam.Event) {
	t.Helper()
	ctx := context.Background()
	w, err := s.Create(ctx, h, seam.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Append(ctx, events); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func eachEncoding(t *testing.T, f func(t *testing.T, enc Encoding)) {
	for _, enc := range []Encoding{Zstd, None} {
		t.Run(string(enc), func(t *testing.T) { f(t, enc) })
	}
}

func TestRoundTrip(t *testing.T) {
	ctx := context.Background()
	eachEncoding(t, func(t *testing.T, enc Encoding) {
		for _, v := range []int{0, 2, 3, 4} {
			t.Run(fmt.Sprint("v", v), func(t *testing.T) {
				root := t.TempDir()
				s, _ := openStore(t, root, Options{Compression: enc, BackupDir: t.TempDir()})
				w, err := s.Create(ctx, header("s1", v), seam.CreateOptions{})
				if err != nil {
					t.Fatal(err)
				}
				first := turnEvents(0, 1)
				if err := w.Append(ctx, first); err != nil {
					t.Fatal(err)
				}
				second := turnEvents(5, 2)
				cite := event(10, "tool/call", `{"turn":2,"step":1,"callId":"c","name":"x","arguments":"{}"}`)
				cite.SourceEventSeqs = []int64{1, 2, 3, 4, 7}
				reorder := event(11, "session/title", `{"title":"t"}`)
				reorder.SourceEventSeqs = []int64{9, 1, 2, 3}
				second = append(second, cite, reorder)
				if err := w.Append(ctx, second); err != nil {
					t.Fatal(err)
				}
				all := append(first, second...)
				got, err := w.Read(ctx, 0, -1)
				if err != nil {
					t.Fatal(err)
				}
				sameEvents(t, got, jsonValues(t, all))
				if part, err := w.Read(ctx, 3, 4); err != nil || len(part) != 4 || part[0].Seq != 3 {
					t.Fatalf("Read(3, 4) = %d events, %v", len(part), err)
				}
				if _, err := w.Read(ctx, -1, 1); !errors.Is(err, seam.ErrInvalid) {
					t.Fatalf("negative offset: %v", err)
				}
				if err := w.Close(); err != nil {
					t.Fatal(err)
				}

				// A fresh service continues at the committed next seq.
				s2, _ := openStore(t, root, Options{})
				if s2.Encoding() != enc {
					t.Fatalf("detected %s", s2.Encoding())
				}
				snap, err := s2.Stat(ctx, "s1")
				if err != nil || snap.EventCount != 12 || snap.Location.Generation != v || snap.Header.Version != v {
					t.Fatalf("Stat: %+v, %v", snap, err)
				}
				w2, err := s2.Open(ctx, "s1", seam.Write)
				if err != nil {
					t.Fatal(err)
				}
				defer w2.Close()
				if err := w2.Append(ctx, turnEvents(12, 3)); err != nil {
					t.Fatal(err)
				}
				got, err = scanAll(t, s2, "s1")
				if err != nil || len(got) != 17 {
					t.Fatalf("read %d events, %v", len(got), err)
				}
				sameEvents(t, got[:12], jsonValues(t, all))

				// The physical form: v2+ range pairs, one frame per batch.
				raw := rawText(t, s2, "s1")
				wantSeqs := `"sourceEventSeqs":[1,2,3,4,7]`
				if v >= 2 {
					wantSeqs = `"sourceEventSeqs":[[1,4],7]`
				}
				if !strings.Contains(raw.text, wantSeqs) || !strings.Contains(raw.text, `"sourceEventSeqs":[9,1,2,3]`) {
					t.Errorf("stored sourceEventSeqs not in %s form:\n%s", wantSeqs, raw.text)
				}
				if enc == Zstd && raw.frames != 4 {
					t.Errorf("%d frames, want header + 3 batches", raw.frames)
				}
			})
		}
	})
}

func jsonValues(t *testing.T, events []seam.Event) []any {
	out := make([]any, len(events))
	for i := range events {
		out[i] = jsonValue(t, events[i])
	}
	return out
}

type rawLog struct {
	text   string
	frames int
}

func rawText(t *testing.T, s *Store, id string) rawLog {
	t.Helper()
	ctx := context.Background()
	h, err := s.Open(ctx, id, seam.Read)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	var r rawLog
	var b strings.Builder
	for rec, err := range h.(seam.RawReader).Raw(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		b.Write(rec.Line)
		if rec.Group != nil {
			r.frames = max(r.frames, rec.Group.Index+1)
		}
	}
	r.text = b.String()
	return r
}

func TestCreateLifecycle(t *testing.T) {
	ctx := context.Background()
	eachEncoding(t, func(t *testing.T, enc Encoding) {
		root := t.TempDir()
		s, _ := openStore(t, root, Options{Compression: enc})
		w, err := s.Create(ctx, header("lazy", 0), seam.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Create(ctx, header("lazy", 0), seam.CreateOptions{}); !errors.Is(err, seam.ErrAlreadyExists) {
			t.Fatalf("duplicate pending create: %v", err)
		}
		// Visible to its own service only, and nothing on disk.
		if snap, err := s.Stat(ctx, "lazy"); err != nil || snap.EventCount != 0 {
			t.Fatalf("own Stat: %+v %v", snap, err)
		}
		if entries, _ := s.List(ctx); len(entries) != 1 {
			t.Fatalf("own List: %d entries", len(entries))
		}
		fresh, _ := openStore(t, root, Options{})
		if _, err := fresh.Stat(ctx, "lazy"); !errors.Is(err, seam.ErrNotFound) {
			t.Fatalf("fresh Stat: %v", err)
		}
		if _, err := fresh.Open(ctx, "lazy", seam.Read); !errors.Is(err, seam.ErrNotFound) {
			t.Fatalf("fresh Open: %v", err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatalf("second Close: %v", err)
		}
		if _, err := s.Stat(ctx, "lazy"); !errors.Is(err, seam.ErrNotFound) {
			t.Fatalf("Stat after erasing close: %v", err)
		}
		if entries, _ := s.List(ctx); len(entries) != 0 {
			t.Fatalf("List after erasing close: %d entries", len(entries))
		}

		// The id is free again; Flush materializes it durably.
		w, err = s.Create(ctx, header("lazy", 0), seam.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		early, err := s.Open(ctx, "lazy", seam.Read)
		if err != nil {
			t.Fatal(err)
		}
		defer early.Close()
		if got, err := early.Read(ctx, 0, -1); err != nil || len(got) != 0 {
			t.Fatalf("read of a pending create: %d, %v", len(got), err)
		}
		if err := s.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		snap, err := fresh.Stat(ctx, "lazy")
		if err != nil || snap.EventCount != 0 || snap.SizeBytes == 0 {
			t.Fatalf("after Flush: %+v %v", snap, err)
		}
		if _, err := fresh.Create(ctx, header("lazy", 0), seam.CreateOptions{}); !errors.Is(err, seam.ErrAlreadyExists) {
			t.Fatalf("create of a stored id: %v", err)
		}
		if err := w.Append(ctx, turnEvents(0, 1)); err != nil {
			t.Fatal(err)
		}
		w.Close()
		if got, err := early.Read(ctx, 0, -1); err != nil || len(got) != 5 {
			t.Fatalf("a read handle opened before the first append reads %d, %v", len(got), err)
		}
		if got, err := scanAll(t, fresh, "lazy"); err != nil || len(got) != 5 {
			t.Fatalf("read %d, %v", len(got), err)
		}
		// No temp file is left behind, the lock file stays.
		dir := filepath.Join(root, "--home-u-proj--", "lazy")
		names, _ := os.ReadDir(dir)
		var got []string
		for _, n := range names {
			got = append(got, n.Name())
		}
		if want := LogName(0, enc) + " " + lockName; strings.Join(got, " ") != want {
			t.Errorf("session folder holds %v, want %s", got, want)
		}
	})
}

func TestConcurrentCreate(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	s1, _ := openStore(t, root, Options{})
	s2, _ := openStore(t, root, Options{})
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := s1
			if i%2 == 1 {
				s = s2 // a second service: the race is settled on disk
			}
			w, err := s.Create(ctx, header("race", 0), seam.CreateOptions{})
			if err == nil {
				err = w.Append(ctx, turnEvents(0, 1))
				w.Close()
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, seam.ErrAlreadyExists):
			t.Errorf("loser failed with %v", err)
		}
	}
	if won != 1 {
		t.Fatalf("%d creates won", won)
	}
	if got, err := scanAll(t, s1, "race"); err != nil || len(got) != 5 {
		t.Fatalf("read %d, %v", len(got), err)
	}
}

func TestOwnership(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	s, _ := openStore(t, root, Options{})
	create(t, s, header("own", 0), turnEvents(0, 1))

	w, err := s.Open(ctx, "own", seam.Write)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Open(ctx, "own", seam.Write); !errors.Is(err, seam.ErrAlreadyOwned) {
		t.Fatalf("second write open in the service: %v", err)
	}
	other, _ := openStore(t, root, Options{})
	if _, err := other.Open(ctx, "own", seam.Write); !errors.Is(err, seam.ErrAlreadyOwned) {
		t.Fatalf("write open from another service: %v", err)
	}
	r, err := s.Open(ctx, "own", seam.Read)
	if err != nil {
		t.Fatalf("read open beside a writer: %v", err)
	}
	if err := r.Append(ctx, turnEvents(5, 2)); !errors.Is(err, seam.ErrReadOnly) {
		t.Fatalf("Append on a read handle: %v", err)
	}
	if err := r.Flush(ctx); !errors.Is(err, seam.ErrReadOnly) {
		t.Fatalf("Flush on a read handle: %v", err)
	}
	// Freshness: a read started after Append returns sees it.
	if err := w.Append(ctx, turnEvents(5, 2)); err != nil {
		t.Fatal(err)
	}
	if got, err := r.Read(ctx, 0, -1); err != nil || len(got) != 10 {
		t.Fatalf("read handle sees %d events, %v", len(got), err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	for _, op := range []func() error{
		func() error { return w.Append(ctx, turnEvents(10, 3)) },
		func() error { return w.Flush(ctx) },
		func() error { _, err := w.Read(ctx, 0, -1); return err },
	} {
		if err := op(); !errors.Is(err, seam.ErrHandleClosed) {
			t.Fatalf("operation on a closed handle: %v", err)
		}
	}
	r.Close()
	w2, err := other.Open(ctx, "own", seam.Write)
	if err != nil {
		t.Fatalf("write open after Close: %v", err)
	}
	w2.Close()

	// Another process holding the lock.
	if active, err := s.WriterActive(ctx, "own"); err != nil || active {
		t.Fatalf("WriterActive without a writer: %v %v", active, err)
	}
	release := seamtest.HoldInChild(t, filepath.Join(root, "--home-u-proj--", "own", lockName))
	if active, err := s.WriterActive(ctx, "own"); err != nil || !active {
		t.Fatalf("WriterActive with a writer: %v %v", active, err)
	}
	_, err = s.Open(ctx, "own", seam.Write)
	wantKind(t, err, seam.ErrAlreadyOwned)
	if !strings.Contains(err.Error(), "session is in use by another writer") {
		t.Errorf("message %q", err)
	}
	release()
	if active, err := s.WriterActive(ctx, "own"); err != nil || active {
		t.Fatalf("WriterActive after release: %v %v", active, err)
	}
	w3, err := s.Open(ctx, "own", seam.Write)
	if err != nil {
		t.Fatalf("write open after the other process released: %v", err)
	}
	w3.Close()
}

func TestAppendRejects(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	s, _ := openStore(t, root, Options{})
	create(t, s, header("rej", 2), turnEvents(0, 1))
	w, err := s.Open(ctx, "rej", seam.Write)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	before, _ := s.Stat(ctx, "rej")
	gap := turnEvents(6, 2)
	err = w.Append(ctx, gap)
	wantKind(t, err, seam.ErrSeqMismatch)
	if !strings.Contains(err.Error(), "expected 5 at index 0, got 6") {
		t.Errorf("message %q", err)
	}
	bad := turnEvents(5, 2)
	bad[2].Data = []byte(`{"x":`)
	wantKind(t, w.Append(ctx, bad), seam.ErrInvalid)
	unknown := turnEvents(5, 2)
	unknown[1].Type = "plugin/thing"
	wantKind(t, w.Append(ctx, unknown), seam.ErrInvalid)
	if err := w.Append(ctx, nil); err != nil {
		t.Fatalf("empty batch: %v", err)
	}
	after, _ := s.Stat(ctx, "rej")
	if after.Revision != before.Revision || after.EventCount != 5 {
		t.Fatalf("a rejected batch changed the log: %+v -> %+v", before, after)
	}
	if err := w.Append(ctx, turnEvents(5, 2)); err != nil {
		t.Fatal(err)
	}
	changed, _ := s.Stat(ctx, "rej")
	entries, _ := s.List(ctx)
	if changed.Revision == before.Revision || changed.EventCount != 10 || entries[0].Snapshot.Revision != changed.Revision {
		t.Fatalf("revision after Append: %s (before %s, List %s)", changed.Revision, before.Revision, entries[0].Snapshot.Revision)
	}

	for _, c := range []struct {
		name string
		h    seam.Header
		opts seam.CreateOptions
	}{
		{"v2 without isSeeded", seam.Header{Version: 2, ID: "x", CreatedAt: 1}, seam.CreateOptions{}},
		{"newer version", seam.Header{Version: 5, ID: "x", CreatedAt: 1}, seam.CreateOptions{}},
		{"inherited without seed", header("x", 0), seam.CreateOptions{InheritedEventCount: 3}},
		{"empty id", header("", 0), seam.CreateOptions{}},
	} {
		if _, err := s.Create(ctx, c.h, c.opts); !errors.Is(err, seam.ErrInvalid) {
			t.Errorf("Create with %s: %v", c.name, err)
		}
	}
}

// TestTailRepair checks that the write path removes a torn or uncommitted
// tail before it appends, keeping the removed bytes in a backup file.
func TestTailRepair(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name string
		enc  Encoding
		tail func(t *testing.T, path string) []byte // damages the log, returns the bytes to remove
		keep int64                                  // events that survive
	}{
		{"plain torn line", None, func(t *testing.T, path string) []byte {
			return appendFile(t, path, []byte(`{"type":"turn/start","seq":10,"ti`))
		}, 10},
		{"plain uncommitted line", None, func(t *testing.T, path string) []byte {
			return appendFile(t, path, []byte("{\"type\":\"tool/call\",\"seq\":garbage}\n{\"type\":\"step/start\",\"seq\":11,\"time\":1,\"data\":{}}\n"))
		}, 10},
		{"zstd torn frame", Zstd, func(t *testing.T, path string) []byte {
			frame := zstdframe.AppendFrame(nil, []byte(`{"type":"turn/start","seq":10,"time":1,"data":{"turn":3}}`+"\n"))
			return appendFile(t, path, frame[:len(frame)-2])
		}, 10},
		{"zstd bad record inside the last frame", Zstd, func(t *testing.T, path string) []byte {
			lines := `{"type":"turn/start","seq":10,"time":1,"data":{"turn":3}}` + "\n" + `{"type":"step/start","seq":11,"ti` + "\n"
			return appendFile(t, path, zstdframe.AppendFrame(nil, []byte(lines)))
		}, 11},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			backups := t.TempDir()
			s, _ := openStore(t, root, Options{Compression: c.enc, BackupDir: backups})
			create(t, s, header("rep", 0), append(turnEvents(0, 1), turnEvents(5, 2)...))
			snap, _ := s.Stat(ctx, "rep")
			removed := c.tail(t, snap.Location.Path)
			if got, err := scanAll(t, s, "rep"); err != nil || int64(len(got)) != c.keep {
				t.Fatalf("read %d events before the repair, %v", len(got), err)
			}
			w, err := s.Open(ctx, "rep", seam.Write)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			next := turnEvents(c.keep, 3)
			if err := w.Append(ctx, next); err != nil {
				t.Fatal(err)
			}
			got, err := scanAll(t, s, "rep")
			if err != nil || int64(len(got)) != c.keep+5 {
				t.Fatalf("read %d events after the repair, %v", len(got), err)
			}
			files, _ := filepath.Glob(filepath.Join(backups, "rep", "*.bin"))
			if len(files) != 1 {
				t.Fatalf("backups: %v", files)
			}
			data, _ := os.ReadFile(files[0])
			if !bytes.Equal(data, removed) {
				t.Errorf("backup holds %q, want %q", data, removed)
			}
			if !strings.HasSuffix(files[0], fmt.Sprintf("-%d.bin", snap.SizeBytes)) {
				t.Errorf("backup name %s does not carry offset %d", files[0], snap.SizeBytes)
			}
		})
	}
}

// appendFile appends data to path and returns it.
func appendFile(t *testing.T, path string, data []byte) []byte {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(data); err != nil {
		t.Fatal(err)
	}
	return data
}

// TestWriteFailures makes writes, fsyncs and truncations fail: the log is
// cut back so that a retry continues without a gap. In a zstd log whose
// uncommitted tail starts inside a frame, the frame's committed records
// survive every failure.
func TestWriteFailures(t *testing.T) {
	ctx := context.Background()
	boom := errors.New("injected failure")
	t.Run("zstd salvage", salvageWriteFailures)
	eachEncoding(t, func(t *testing.T, enc Encoding) {
		for _, which := range []string{"write", "sync"} {
			t.Run(which, func(t *testing.T) {
				root := t.TempDir()
				s, tfs := openStore(t, root, Options{Compression: enc})
				create(t, s, header("f", 0), turnEvents(0, 1))
				w, err := s.Open(ctx, "f", seam.Write)
				if err != nil {
					t.Fatal(err)
				}
				defer w.Close()
				before, _ := s.Stat(ctx, "f")
				hook := &tfs.failWrite
				if which == "sync" {
					hook = &tfs.failSync
				}
				tfs.set(hook, func(path string) error {
					if path == before.Location.Path {
						return boom
					}
					return nil
				})
				err = w.Append(ctx, turnEvents(5, 2))
				wantKind(t, err, seam.ErrIO)
				if !errors.Is(err, boom) {
					t.Errorf("error %v does not carry the cause", err)
				}
				tfs.set(hook, nil)
				after, _ := s.Stat(ctx, "f")
				if after.SizeBytes != before.SizeBytes || after.EventCount != 5 {
					t.Fatalf("failed append left %d bytes, %d events", after.SizeBytes, after.EventCount)
				}
				if err := w.Append(ctx, turnEvents(5, 2)); err != nil {
					t.Fatalf("retry: %v", err)
				}
				if got, err := scanAll(t, s, "f"); err != nil || len(got) != 10 {
					t.Fatalf("read %d, %v", len(got), err)
				}
			})
		}
		t.Run("truncate", func(t *testing.T) {
			root := t.TempDir()
			s, tfs := openStore(t, root, Options{Compression: enc, BackupDir: t.TempDir()})
			create(t, s, header("f", 0), turnEvents(0, 1))
			snap, _ := s.Stat(ctx, "f")
			torn := []byte("{torn")
			if enc == Zstd {
				torn = zstdframe.AppendFrame(nil, []byte("{}\n"))[:5]
			}
			appendFile(t, snap.Location.Path, torn)
			w, err := s.Open(ctx, "f", seam.Write)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			tfs.set(&tfs.failTruncate, func(string) error { return boom })
			wantKind(t, w.Append(ctx, turnEvents(5, 2)), seam.ErrIO)
			tfs.set(&tfs.failTruncate, nil)
			if after, _ := s.Stat(ctx, "f"); after.SizeBytes != snap.SizeBytes+5 || after.EventCount != 5 {
				t.Fatalf("failed repair changed the log: %+v", after)
			}
			if err := w.Append(ctx, turnEvents(5, 2)); err != nil {
				t.Fatalf("retry: %v", err)
			}
			if got, err := scanAll(t, s, "f"); err != nil || len(got) != 10 {
				t.Fatalf("read %d, %v", len(got), err)
			}
		})
	})
}

// TestResumeDamagedFixtures appends to copies of the damaged stores that
// dsh resumed, as dsh's resume did.
func TestResumeDamagedFixtures(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name, id string
		next     int64
	}{
		{"zstd-torn-final-frame-checksum", "session-4f1c2a9e-8b3d-4e6f-a1c2-7d9e0b1f2a3c", 98},
		{"zstd-torn-final-frame-header", "session-4f1c2a9e-8b3d-4e6f-a1c2-7d9e0b1f2a3c", 98},
		{"none-torn-final-line", "session-4f1c2a9e-8b3d-4e6f-a1c2-7d9e0b1f2a3c", 112},
		{"none-corrupt-line-after-last-turn-end", "session-7a2b9c4d-1e3f-4a5b-8c6d-0e1f2a3b4c5d", 38},
		{"variant-zstd-cli-frames-with-content-size", "session-4f1c2a9e-8b3d-4e6f-a1c2-7d9e0b1f2a3c", 113},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := fixture.Copy(t, filepath.Join(fixturesDir(t), "dsh-0.1.0", "damaged", c.name))
			s, _ := openStore(t, root, Options{BackupDir: t.TempDir()})
			w, err := s.Open(ctx, c.id, seam.Write)
			if err != nil {
				t.Fatal(err)
			}
			batch := []seam.Event{event(c.next, "session/end-seed", `{}`)}
			batch = append(batch, turnEvents(c.next+1, 9)...)
			if err := w.Append(ctx, batch); err != nil {
				t.Fatal(err)
			}
			w.Close()
			got, err := scanAll(t, s, c.id)
			if err != nil || int64(len(got)) != c.next+6 {
				t.Fatalf("read %d events, %v", len(got), err)
			}
			if snap, err := s.Stat(ctx, c.id); err != nil || snap.EventCount != c.next+6 || snap.Location.TornBytes != 0 {
				t.Fatalf("Stat: %+v %v", snap, err)
			}
		})
	}
	// Damage before the last turn/end is in committed data, which a write
	// open does not read (it reads the tail from the last turn/end on): the
	// append goes after the last committed record, every stored byte stays
	// as it was, and a full read still reports the damage as before.
	for _, c := range []struct {
		name string
		next int64
		kind error
	}{
		{"none-corrupt-line-before-turn-end", 113, seam.ErrCorrupt},
		{"zstd-bad-checksum-middle-frame", 113, seam.ErrCorrupt},
		{"none-unknown-event-type", 17, seam.ErrUnsupportedFormat},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := fixture.Copy(t, filepath.Join(fixturesDir(t), "dsh-0.1.0", "damaged", c.name))
			s, _ := openStore(t, root, Options{})
			entries, _ := s.List(ctx)
			id := entries[0].Snapshot.Header.ID
			path := entries[0].Snapshot.Location.Path
			before, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			w, err := s.Open(ctx, id, seam.Write)
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Append(ctx, []seam.Event{event(c.next, "session/title", `{"title":"t"}`)}); err != nil {
				t.Fatal(err)
			}
			w.Close()
			after, _ := os.ReadFile(path)
			if !bytes.HasPrefix(after, before) || len(after) == len(before) {
				t.Fatalf("the append changed stored bytes or wrote nothing: %d → %d bytes", len(before), len(after))
			}
			_, err = scanAll(t, s, id)
			wantKind(t, err, c.kind)
			if snap, err := s.Stat(ctx, id); err != nil || snap.EventCount != c.next+1 {
				t.Fatalf("Stat after the append: %+v, %v", snap, err)
			}
		})
	}
	// Damage the tail shows is refused, and the failed open releases its
	// claim: a bad record with a turn/end after it, in the last turn.
	t.Run("damaged last turn", func(t *testing.T) {
		root := t.TempDir()
		s, _ := openStore(t, root, Options{Compression: None})
		create(t, s, header("d", 0), turnEvents(0, 1))
		snap, _ := s.Stat(ctx, "d")
		appendFile(t, snap.Location.Path, []byte("garbage\n"+`{"type":"turn/end","seq":"x"}`+"\n"))
		_, err := s.Open(ctx, "d", seam.Write)
		wantKind(t, err, seam.ErrCorrupt)
		_, err = s.Open(ctx, "d", seam.Write)
		if errors.Is(err, seam.ErrAlreadyOwned) {
			t.Fatalf("claim kept after a failed open: %v", err)
		}
	})
}

// TestSeeded checks the inherited event count of seeded sessions written
// by the store: v0 from seedLength, v2+ from the marker.
func TestSeeded(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	s, _ := openStore(t, root, Options{})
	seeded := true
	h := header("child", 3)
	h.IsSeeded, h.ParentSession, h.Origin, h.DelegationDepth = &seeded, "parent", "subagent", 1
	w, err := s.Create(ctx, h, seam.CreateOptions{InheritedEventCount: 5})
	if err != nil {
		t.Fatal(err)
	}
	events := append(turnEvents(0, 1), event(5, "session/end-seed", `{"inherited":true}`))
	events = append(events, turnEvents(6, 2)...)
	if err := w.Append(ctx, events); err != nil {
		t.Fatal(err)
	}
	w.Close()
	fresh, _ := openStore(t, root, Options{})
	for _, access := range []seam.Access{seam.Read, seam.Write} {
		r, err := fresh.Open(ctx, "child", access)
		if err != nil {
			t.Fatal(err)
		}
		if r.InheritedEventCount() != 5 {
			t.Errorf("%s handle: inherited %d", access, r.InheritedEventCount())
		}
		r.Close()
	}

	// A seeded header without its marker is corrupt.
	w, err = s.Create(ctx, func() seam.Header { h := h; h.ID = "nomarker"; return h }(), seam.CreateOptions{InheritedEventCount: 5})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Append(ctx, turnEvents(0, 1)); err != nil {
		t.Fatal(err)
	}
	w.Close()
	_, err = fresh.Open(ctx, "nomarker", seam.Read)
	wantKind(t, err, seam.ErrCorrupt)
}

// TestStaleTempsRemoved: a write open removes the temp files a killed
// writer left beside the log, and nothing else.
func TestStaleTempsRemoved(t *testing.T) {
	ctx := context.Background()
	eachEncoding(t, func(t *testing.T, enc Encoding) {
		root := t.TempDir()
		s, _ := openStore(t, root, Options{Compression: enc, BackupDir: t.TempDir()})
		w, err := s.Create(ctx, header("s1", 0), seam.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Append(ctx, turnEvents(0, 1)); err != nil {
			t.Fatal(err)
		}
		w.Close()
		snap, err := s.Stat(ctx, "s1")
		if err != nil {
			t.Fatal(err)
		}
		dir, log := filepath.Dir(snap.Location.Path), filepath.Base(snap.Location.Path)
		stale := []string{log + ".0123456789ab.tmp", log + ".ffffffffffff.tmp"}
		kept := []string{log + ".0123456789AB.tmp", log + ".0123456789a.tmp", "notes.0123456789ab.tmp", log + ".0123456789ab.tmp.bak"}
		for _, name := range append(stale, kept...) {
			if err := os.WriteFile(filepath.Join(dir, name), []byte("partial copy"), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		// A read open leaves them alone: it takes no lock.
		r, err := s.Open(ctx, "s1", seam.Read)
		if err != nil {
			t.Fatal(err)
		}
		r.Close()
		if _, err := os.Stat(filepath.Join(dir, stale[0])); err != nil {
			t.Fatalf("a read open removed a temp file: %v", err)
		}
		w, err = s.Open(ctx, "s1", seam.Write)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		for _, name := range stale {
			if _, err := os.Stat(filepath.Join(dir, name)); !os.IsNotExist(err) {
				t.Errorf("%s: still there after a write open (%v)", name, err)
			}
		}
		for _, name := range kept {
			if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
				t.Errorf("%s: removed: %v", name, err)
			}
		}
		if got, err := w.Read(ctx, 0, -1); err != nil || len(got) != len(turnEvents(0, 1)) {
			t.Errorf("after the cleanup: %d events, %v", len(got), err)
		}
	})
}
