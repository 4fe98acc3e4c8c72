package jsonl

import (
	"bytes"
	"context"
	"errors"
	"iter"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/dshctl/dshctl/internal/fixture"
	"github.com/dshctl/dshctl/internal/jsonl/zstdframe"
	"github.com/dshctl/dshctl/internal/seam"
)

// TestHandleSnapshotMatchesStat: on every damaged store dsh's reader was
// tried on, a read handle reports exactly what Stat reports, and a write
// handle (which validated the whole log) the same event count and the same
// torn and uncommitted tails.
func TestHandleSnapshotMatchesStat(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(fixturesDir(t), "dsh-0.1.0", "damaged")
	cases, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		if !c.IsDir() {
			continue
		}
		t.Run(c.Name(), func(t *testing.T) {
			s, _ := openStore(t, fixture.Copy(t, filepath.Join(dir, c.Name())), Options{})
			entries, err := s.List(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, en := range entries {
				id := en.Snapshot.Header.ID
				st, err := s.Stat(ctx, id)
				if err != nil {
					continue // refused at Stat: no handle to compare
				}
				if r, err := s.Open(ctx, id, seam.Read); err == nil {
					got, err := r.Snapshot(ctx)
					r.Close()
					if err != nil || !reflect.DeepEqual(got, st) {
						t.Errorf("read handle Snapshot\n %+v, %v\nStat\n %+v", got, err, st)
					}
				}
				w, err := s.Open(ctx, id, seam.Write)
				if err != nil {
					continue // refused for writing, which verify reports
				}
				got, err := w.Snapshot(ctx)
				w.Close()
				if err != nil || got.EventCount != st.EventCount || got.Revision != st.Revision || got.SizeBytes != st.SizeBytes ||
					got.Location.TornBytes != st.Location.TornBytes || got.Location.UncommittedBytes != st.Location.UncommittedBytes {
					t.Errorf("write handle Snapshot\n %+v, %v\nStat\n %+v", got, err, st)
				}
			}
		})
	}
}

// TestReplacedLogsClosedWithTheirLastScan: a read handle that follows its
// log through many replacements (a writer renaming a rewritten log over
// it, as a long `cat -f` sees) keeps no replaced log open once no scan
// reads it; one that a scan still reads stays open, and readable, until
// that scan ends.
func TestReplacedLogsClosedWithTheirLastScan(t *testing.T) {
	eachEncoding(t, func(t *testing.T, enc Encoding) {
		ctx := context.Background()
		s, _ := openStore(t, t.TempDir(), Options{Compression: enc})
		create(t, s, header("f", 0), append(turnEvents(0, 1), turnEvents(5, 2)...))
		r, err := s.Open(ctx, "f", seam.Read)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		h := r.(*handle)
		snap, _ := s.Stat(ctx, "f")
		path := snap.Location.Path
		replace := func() {
			t.Helper()
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path+".new", data, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(path+".new", path); err != nil {
				t.Fatal(err)
			}
		}
		held := func() (stale, scanned int) {
			h.mu.Lock()
			defer h.mu.Unlock()
			return len(h.stale), len(h.readers)
		}
		count := func(seq iter.Seq2[seam.Event, error]) int {
			t.Helper()
			n := 0
			for _, err := range seq {
				if err != nil {
					t.Fatal(err)
				}
				n++
			}
			return n
		}
		for range 50 {
			replace()
			if n := count(r.Scan(ctx, seam.ScanOptions{})); n != 10 {
				t.Fatalf("scan after a replacement: %d events, want 10", n)
			}
			if stale, scanned := held(); stale != 0 || scanned != 0 {
				t.Fatalf("after the scans: %d replaced logs held, %d logs counted as scanned", stale, scanned)
			}
		}

		next, stop := iter.Pull2(r.Scan(ctx, seam.ScanOptions{}))
		defer stop()
		if _, err, ok := next(); !ok || err != nil {
			t.Fatalf("first event: %v", err)
		}
		old := h.log
		replace()
		if n := count(r.Scan(ctx, seam.ScanOptions{})); n != 10 {
			t.Fatalf("scan after a replacement: %d events, want 10", n)
		}
		if stale, _ := held(); stale != 1 || h.stale[0] != old {
			t.Fatalf("%d replaced logs held while a scan reads the old one, want it alone", stale)
		}
		rest := 0
		for {
			_, err, ok := next()
			if !ok {
				break
			}
			if err != nil {
				t.Fatalf("the paused scan of the replaced log: %v", err)
			}
			rest++
		}
		if rest != 9 {
			t.Fatalf("the paused scan read %d more events, want 9", rest)
		}
		if stale, scanned := held(); stale != 0 || scanned != 0 {
			t.Fatalf("after the paused scan ended: %d replaced logs held, %d counted", stale, scanned)
		}
	})
}

// TestRepairNeedsBackupDir: a store opened without a backup directory
// refuses to remove a tail, and leaves the log as it was.
func TestRepairNeedsBackupDir(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	s, err := Open(root, Options{Compression: Zstd})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	create(t, s, header("f", 0), turnEvents(0, 1))
	snap, _ := s.Stat(ctx, "f")
	frame := zstdframe.AppendFrame(nil, []byte(`{"type":"turn/start","seq":5,"time":1,"data":{"turn":2}}`+"\n"))
	appendFile(t, snap.Location.Path, frame[:len(frame)-2])
	before, _ := os.ReadFile(snap.Location.Path)
	w, err := s.Open(ctx, "f", seam.Write)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	err = w.Append(ctx, turnEvents(5, 2))
	if !errors.Is(err, ErrNoBackupDir) || !errors.Is(err, seam.ErrIO) {
		t.Fatalf("Append without a backup directory: %v, want ErrNoBackupDir", err)
	}
	if after, _ := os.ReadFile(snap.Location.Path); !bytes.Equal(after, before) {
		t.Fatalf("the log changed (%d bytes, was %d)", len(after), len(before))
	}
}
