package jsonl

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/dshctl/dshctl/internal/seam"
)

// seqEvents returns n events from seq first on: a turn per 3 events.
func seqEvents(first, n int64) []seam.Event {
	var out []seam.Event
	for seq := first; seq < first+n; seq++ {
		turn := seq/3 + 1
		var e seam.Event
		switch seq % 3 {
		case 0:
			e = seam.Event{Type: "turn/start", Data: json.RawMessage(fmt.Sprintf(`{"turn":%d}`, turn))}
		case 1:
			e = seam.Event{Type: "user/message", SurfaceOp: json.RawMessage(`"append"`),
				Data: json.RawMessage(fmt.Sprintf(`{"id":"u%d","role":"user","content":[{"type":"text","text":"hi"}],"source":{"kind":"user"}}`, seq))}
		default:
			e = seam.Event{Type: "turn/end", Data: json.RawMessage(fmt.Sprintf(`{"turn":%d,"reason":{"kind":"completed"}}`, turn))}
		}
		e.Seq, e.Time = seq, 1000+seq
		out = append(out, e)
	}
	return out
}

// newSessionStore makes a store of enc holding session "s" with n events.
func newSessionStore(t *testing.T, enc Encoding, n int64) (string, *Store) {
	t.Helper()
	ctx := context.Background()
	root := t.TempDir()
	w, _ := openStore(t, root, Options{Compression: enc, BackupDir: t.TempDir()})
	h, err := w.Create(ctx, seam.Header{ID: "s", Version: 0, CreatedAt: 1, Cwd: "/p"}, seam.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Append(ctx, seqEvents(0, n)); err != nil {
		t.Fatal(err)
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	s, err := Open(root, Options{Compression: enc, BackupDir: t.TempDir(), fs: &testFS{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return root, s
}

// appendElsewhere appends n events to id through another store, as
// another process would.
func appendElsewhere(t *testing.T, root string, enc Encoding, id string, n int64) {
	t.Helper()
	ctx := context.Background()
	o, _ := openStore(t, root, Options{Compression: enc, BackupDir: t.TempDir()})
	defer o.Close()
	snap, err := o.Stat(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	h, err := o.Open(ctx, id, seam.Write)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if err := h.Append(ctx, seqEvents(snap.EventCount, n)); err != nil {
		t.Fatal(err)
	}
}

// TestOpenDuplicateAfterList checks that Open reports an id found in two
// project folders after a List too.
func TestOpenDuplicateAfterList(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	writeLog(t, root, "--p--", "dup", "session.jsonl", headerFor("dup"))
	writeLog(t, root, "--q--", "dup", "session.jsonl", headerFor("dup"))
	s, _ := openStore(t, root, Options{})
	if _, err := s.List(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Open(ctx, "dup", seam.Read); err == nil {
		t.Fatal("Open of a duplicate id after List succeeded")
	}
}

// TestDecoderPoolClose checks that Close drains the decoder pool and that
// handles still work after it.
func TestDecoderPoolClose(t *testing.T) {
	ctx := context.Background()
	_, s := newSessionStore(t, Zstd, 7)
	if _, err := s.List(ctx); err != nil {
		t.Fatal(err)
	}
	h, err := s.Open(ctx, "s", seam.Read)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	s.decs.mu.Lock()
	idle := len(s.decs.idle)
	s.decs.mu.Unlock()
	if idle == 0 {
		t.Error("no idle decoder after List")
	}
	s.Close()
	s.decs.mu.Lock()
	idle = len(s.decs.idle)
	s.decs.mu.Unlock()
	if idle != 0 {
		t.Errorf("%d idle decoders after Close", idle)
	}
	if evs, err := h.Read(ctx, 0, -1); err != nil || len(evs) != 7 {
		t.Fatalf("Read after store Close: %d events, %v", len(evs), err)
	}
	s.decs.mu.Lock()
	idle = len(s.decs.idle)
	s.decs.mu.Unlock()
	if idle != 0 {
		t.Errorf("a closed pool kept %d decoders", idle)
	}
}

// TestOpenLastFrameReuse checks the decoded last frame that an open hands
// to the handle's first reverse scan: it serves the same events as a scan
// without it, and an append made after the open, even without any read in
// between, makes the scan decode the new tail instead.
func TestOpenLastFrameReuse(t *testing.T) {
	reverse := func(t *testing.T, h seam.Handle) []int64 {
		t.Helper()
		var seqs []int64
		for e, err := range h.Scan(context.Background(), seam.ScanOptions{Reverse: true}) {
			if err != nil {
				t.Fatal(err)
			}
			seqs = append(seqs, e.Seq)
		}
		return seqs
	}
	for _, list := range []bool{true, false} {
		t.Run(fmt.Sprintf("list=%v", list), func(t *testing.T) {
			ctx := context.Background()
			root, s := newSessionStore(t, Zstd, 7)
			if list {
				if _, err := s.List(ctx); err != nil {
					t.Fatal(err)
				}
			}
			h, err := s.Open(ctx, "s", seam.Read)
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			if h.(*handle).tail == nil {
				t.Fatal("the open kept no last frame")
			}
			if got := reverse(t, h); len(got) != 7 || got[0] != 6 || got[6] != 0 {
				t.Fatalf("reverse scan with the kept frame: %v", got)
			}
			appendElsewhere(t, root, Zstd, "s", 4)
			if got := reverse(t, h); len(got) != 11 || got[0] != 10 {
				t.Fatalf("reverse scan after an append: %v, want 10 down to 0", got)
			}
			if h.(*handle).tail != nil {
				t.Error("the kept frame outlived a change of the log")
			}
		})
	}
}
