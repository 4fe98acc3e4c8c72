package sqlite

import (
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/dshctl/dshctl/internal/seam"
	"github.com/dshctl/dshctl/internal/verify"
)

// TestDamagedDatabases opens damaged databases: a store holding packed,
// compressed and plain rows, with bytes of its file changed throughout
// (header, b-tree pages, payloads). Whatever the file holds, Open, List,
// Stat, reading every session and verify of the whole store end in a
// result or an error of a seam kind, never a panic, and soon. (A
// coverage-guided fuzz target would instrument SQLite itself, which is too
// slow to explore; the decoders of stored values have FuzzDecodeRow.)
func TestDamagedDatabases(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 17))
	for _, schema := range []int{Schema17, Schema14} {
		s, err := Open(filepath.Join(t.TempDir(), "seed.sqlite"), Options{Create: true, Schema: schema})
		if err != nil {
			t.Fatal(err)
		}
		h, err := s.Create(ctx, seam.Header{Version: 0, ID: "s", CreatedAt: 1, Cwd: "/w"}, seam.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		batch := chunkEvents(0, 40, func(i int) string { return "chunk " })
		big := make([]byte, 6000)
		for i := range big {
			big[i] = byte('a' + rng.IntN(26))
		}
		batch = append(batch, seam.Event{Type: "session/title", Seq: 40, Time: 2, Data: []byte(`{"title":"` + string(big) + `"}`)})
		if err := h.Append(ctx, batch); err != nil {
			t.Fatal(err)
		}
		h.Close()
		s.Close() // checkpoints the WAL into the file
		data, err := os.ReadFile(s.Path())
		if err != nil {
			t.Fatal(err)
		}
		for at := 0; at < len(data); at += 173 {
			d := append([]byte(nil), data...)
			d[at] ^= byte(1 + rng.IntN(255))
			if rng.IntN(4) == 0 { // and a second byte elsewhere
				d[rng.IntN(len(d))] = byte(rng.IntN(256))
			}
			readDamaged(t, d, at)
		}
	}
}

// readDamaged writes data as a database and reads all of it.
func readDamaged(t *testing.T, data []byte, at int) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "db.sqlite")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	defer func() {
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("byte %d: reading took %v", at, d)
		}
	}()
	verifyDamaged(t, path, at)
	// A damaged file can make SQLite report a busy database; do not wait
	// for a lock nobody holds.
	s, err := Open(path, Options{BusyTimeout: 20 * time.Millisecond})
	if err != nil {
		seamKind(t, at, err)
		return
	}
	defer s.Close()
	entries, err := s.List(ctx)
	if err != nil {
		seamKind(t, at, err)
		return
	}
	for _, e := range entries {
		id := e.Snapshot.Header.ID
		if _, err := s.Stat(ctx, id); err != nil {
			seamKind(t, at, err)
		}
		h, err := s.Open(ctx, id, seam.Read)
		if err != nil {
			seamKind(t, at, err)
			continue
		}
		for _, err := range h.Scan(ctx, seam.ScanOptions{}) {
			if err != nil {
				seamKind(t, at, err)
				break
			}
		}
		h.Close()
	}
}

// verifyDamaged verifies the database at path as dshctl verify does: the
// whole store, from a store opened even when damaged. It reports or fails
// with a seam error, never panics.
func verifyDamaged(t *testing.T, path string, at int) {
	t.Helper()
	s, err := Open(path, Options{OpenDamaged: true, BusyTimeout: 20 * time.Millisecond})
	if err != nil {
		seamKind(t, at, err)
		return
	}
	defer s.Close()
	_, err = verify.Run(ctx, s, nil, verify.Options{Report: func(r *verify.SessionReport) error {
		if r.Err != nil {
			seamKind(t, at, r.Err)
		}
		return nil
	}})
	if err != nil {
		seamKind(t, at, err)
	}
}

// seamKind fails t unless err is a *seam.Error: no backend returns a bare
// database error.
func seamKind(t *testing.T, at int, err error) {
	t.Helper()
	var se *seam.Error
	if !errors.As(err, &se) {
		t.Errorf("byte %d: %T %v is not a *seam.Error", at, err, err)
	}
}
