package jsonl

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/dshctl/dshctl/internal/jsonl/zstdframe"
	"github.com/dshctl/dshctl/internal/seam"
)

// TestInUseNotes checks the note dshctl keeps of its own writes in
// session.lock, for the rule that refuses a log another writer changed
// moments ago: every write of dshctl's own passes (a streamed batch too),
// and a change another writer made never passes for dshctl's, not even when
// a dshctl write was given up because of it.
func TestInUseNotes(t *testing.T) {
	ctx := context.Background()
	open := func(t *testing.T, enc Encoding) (*Store, string) {
		root := t.TempDir()
		s, _ := openStore(t, root, Options{Compression: enc, InUseWindow: time.Hour})
		create(t, s, header("f", 0), turnEvents(0, 1))
		snap, err := s.Stat(ctx, "f")
		if err != nil {
			t.Fatal(err)
		}
		return s, snap.Location.Path
	}
	reopen := func(t *testing.T, s *Store) error {
		w, err := s.Open(ctx, "f", seam.Write)
		if err == nil {
			w.Close()
		}
		return err
	}
	eachEncoding(t, func(t *testing.T, enc Encoding) {
		t.Run("streamed append", func(t *testing.T) {
			s, _ := open(t, enc)
			w, err := s.Open(ctx, "f", seam.Write)
			if err != nil {
				t.Fatal(err)
			}
			chunks := [][]seam.Event{turnEvents(5, 2), turnEvents(10, 3)}
			err = w.(seam.StreamAppender).AppendStream(ctx, func() ([]seam.Event, error) {
				if len(chunks) == 0 {
					return nil, nil
				}
				c := chunks[0]
				chunks = chunks[1:]
				return c, nil
			})
			w.Close()
			if err != nil {
				t.Fatal(err)
			}
			if err := reopen(t, s); err != nil {
				t.Fatalf("a write open after dshctl's own streamed append: %v", err)
			}
		})
		t.Run("create without events", func(t *testing.T) {
			root := t.TempDir()
			s, _ := openStore(t, root, Options{Compression: enc, InUseWindow: time.Hour})
			w, err := s.Create(ctx, header("e", 0), seam.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			w.Close()
			if w, err = s.Open(ctx, "e", seam.Write); err != nil {
				t.Fatalf("a write open after dshctl's own create of an empty session: %v", err)
			}
			w.Close()
		})
		t.Run("another writer's change", func(t *testing.T) {
			s, path := open(t, enc)
			w, err := s.Open(ctx, "f", seam.Write)
			if err != nil {
				t.Fatal(err)
			}
			other := fmt.Sprintln(`{"type":"session/title","seq":5,"time":9,"data":{"title":"dsh"}}`)
			if enc == Zstd {
				other = string(zstdframe.AppendFrame(nil, []byte(other)))
			}
			dshWrite(t, path, other)
			err = w.Append(ctx, turnEvents(5, 2))
			w.Close()
			if !errors.Is(err, seam.ErrOwnershipLost) {
				t.Fatalf("Append after another writer's: %v, want ErrOwnershipLost", err)
			}
			var iu *seam.InUseError
			if err := reopen(t, s); !errors.As(err, &iu) {
				t.Fatalf("a write open after another writer changed the log: %v, want an InUseError", err)
			}
		})
	})
	t.Run("renumber given up", func(t *testing.T) {
		root := raceLog(t, None, raceBatches...)
		path := filepath.Join(root, "--big--", "race", LogName(0, None))
		old := time.Now().Add(-2 * time.Hour)
		os.Chtimes(path, old, old)
		s, tfs := openStore(t, root, Options{InUseWindow: time.Hour})
		tfs.set(&tfs.beforeOpen, func(name string) error {
			if filepath.Ext(name) == ".tmp" {
				dshWrite(t, path, dshLine)
			}
			return nil
		})
		_, err := s.Renumber(ctx, "race", seam.RenumberOptions{})
		if !errors.As(err, new(*seam.InUseError)) {
			t.Fatalf("Renumber while another process appends: %v, want an InUseError", err)
		}
		tfs.set(&tfs.beforeOpen, nil)
		_, err = s.Renumber(ctx, "race", seam.RenumberOptions{})
		if !errors.As(err, new(*seam.InUseError)) {
			t.Fatalf("Renumber again at once: %v, want an InUseError (the log changed, not by dshctl)", err)
		}
	})
}
