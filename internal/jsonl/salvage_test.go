package jsonl

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshctl/dshctl/internal/fixture"
	"github.com/dshctl/dshctl/internal/jsonl/zstdframe"
	"github.com/dshctl/dshctl/internal/seam"
)

// salvageTail is a complete zstd frame whose first record (seq 10) is
// committed and whose second is not: an uncommitted tail that starts
// inside a frame.
func salvageTail() []byte {
	lines := `{"type":"turn/start","seq":10,"time":1,"data":{"turn":3}}` + "\n" + `{"type":"step/start","seq":11,"ti` + "\n"
	return zstdframe.AppendFrame(nil, []byte(lines))
}

// salvageStore makes a zstd store holding session "f" with 11 committed
// events, the last of them in a frame that also holds an uncommitted
// record. It returns the store, its file system and the log's path.
func salvageStore(t *testing.T, root string) (*Store, *testFS, string) {
	t.Helper()
	if err := os.MkdirAll(root, 0o700); err != nil {
		t.Fatal(err)
	}
	s, tfs := openStore(t, root, Options{Compression: Zstd, BackupDir: filepath.Join(root, "..", "backups")})
	create(t, s, header("f", 0), append(turnEvents(0, 1), turnEvents(5, 2)...))
	snap, err := s.Stat(context.Background(), "f")
	if err != nil {
		t.Fatal(err)
	}
	appendFile(t, snap.Location.Path, salvageTail())
	if got, err := scanAll(t, s, "f"); err != nil || len(got) != 11 {
		t.Fatalf("set-up: %d events readable, %v", len(got), err)
	}
	return s, tfs, snap.Location.Path
}

// readable returns the number of events a fresh store reads from root.
func readable(t *testing.T, root string) int {
	t.Helper()
	s, _ := openStore(t, root, Options{})
	got, err := scanAll(t, s, "f")
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	return len(got)
}

// salvageWriteFailures makes every step of an append that rewrites the
// committed records of a frame fail in turn: the committed records are
// never lost, and a retry continues without a gap. TestWriteFailures runs
// it.
func salvageWriteFailures(t *testing.T) {
	ctx := context.Background()
	boom := errors.New("injected failure")
	for _, which := range []string{"write", "sync", "rename", "dir sync"} {
		t.Run(which, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "root")
			s, tfs, path := salvageStore(t, root)
			dir := filepath.Dir(path)
			before, _ := s.Stat(ctx, "f")
			w, err := s.Open(ctx, "f", seam.Write)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			hook, match := &tfs.failWrite, func(p string) bool { return filepath.Dir(p) == dir }
			switch which {
			case "sync":
				hook = &tfs.failSync
			case "rename":
				hook = &tfs.failRename
			case "dir sync":
				hook, match = &tfs.failSync, func(p string) bool { return p == dir }
			}
			tfs.set(hook, func(p string) error {
				if match(p) {
					return boom
				}
				return nil
			})
			err = w.Append(ctx, turnEvents(11, 3))
			tfs.set(hook, nil)
			wantKind(t, err, seam.ErrIO)
			if !errors.Is(err, boom) {
				t.Errorf("error %v does not carry the cause", err)
			}
			if tmps, _ := filepath.Glob(filepath.Join(dir, "*.tmp")); len(tmps) != 0 {
				t.Errorf("temp files left: %v", tmps)
			}
			if which == "dir sync" {
				// The rename happened: the batch is in the log, and the
				// handle continues after it.
				if n := readable(t, root); n != 16 {
					t.Fatalf("%d events readable after a failed directory sync, want 16", n)
				}
				if err := w.Append(ctx, turnEvents(16, 4)); err != nil {
					t.Fatalf("append after a failed directory sync: %v", err)
				}
				if n := readable(t, root); n != 21 {
					t.Fatalf("%d events readable, want 21", n)
				}
				return
			}
			after, _ := s.Stat(ctx, "f")
			if n := readable(t, root); n != 11 || after.SizeBytes != before.SizeBytes {
				t.Fatalf("failed append left %d events readable (want 11), %d bytes (want %d)", n, after.SizeBytes, before.SizeBytes)
			}
			if err := w.Append(ctx, turnEvents(11, 3)); err != nil {
				t.Fatalf("retry: %v", err)
			}
			if n := readable(t, root); n != 16 {
				t.Fatalf("%d events readable after the retry, want 16", n)
			}
		})
	}
}

// TestSalvageCrash simulates a crash at every file-system operation of an
// append that rewrites the committed records of a frame: whatever the
// point, a fresh store reads every committed record (and the batch or
// none of it), and a later append continues the log.
func TestSalvageCrash(t *testing.T) {
	ctx := context.Background()
	for k := int64(1); ; k++ {
		root := filepath.Join(t.TempDir(), "root")
		s, tfs, _ := salvageStore(t, root)
		w, err := s.Open(ctx, "f", seam.Write)
		if err != nil {
			t.Fatal(err)
		}
		tfs.crashIn.Store(k)
		err = w.Append(ctx, turnEvents(11, 3))
		crashed := tfs.crashed.Load()
		tfs.crashIn.Store(0)
		tfs.crashed.Store(false)
		w.Close()
		if err != nil && !crashed {
			t.Fatalf("crash at operation %d: append failed without the crash: %v", k, err)
		}
		n := readable(t, root)
		if n != 11 && n != 16 {
			t.Fatalf("crash at operation %d: %d events readable, want 11 or 16", k, n)
		}
		if !crashed && n != 16 {
			t.Fatalf("append returned after %d operations but %d events are readable", k-1, n)
		}
		// A fresh writer resumes from what survived.
		s2, _ := openStore(t, root, Options{BackupDir: t.TempDir()})
		w2, err := s2.Open(ctx, "f", seam.Write)
		if err != nil {
			t.Fatalf("crash at operation %d: write open: %v", k, err)
		}
		more := turnEvents(11, 3)
		if n == 16 {
			more = turnEvents(16, 4)
		}
		if err := w2.Append(ctx, more); err != nil {
			t.Fatalf("crash at operation %d: append after it: %v", k, err)
		}
		w2.Close()
		if m := readable(t, root); m != n+5 && !(n == 11 && m == 16) {
			t.Fatalf("crash at operation %d: %d events after resuming", k, m)
		}
		if !crashed {
			t.Logf("append takes %d file-system operations", k-1)
			return
		}
		if k > 100 {
			t.Fatal("append never completed")
		}
	}
}

// TestRepairsReported checks that a write handle reports the tails its
// appends removed, and that Stat reports an uncommitted tail.
func TestRepairsReported(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name      string
		enc       Encoding
		tail      func() []byte
		keep      int64
		kinds     string // the repairs' kinds
		uncommit  bool   // Stat reports an uncommitted tail
		torn      bool   // Stat reports a torn tail
		rewritten bool
	}{
		{"plain torn", None, func() []byte { return []byte(`{"type":"turn/start","seq":10,"ti`) }, 10, "torn", false, true, false},
		{"plain uncommitted", None, func() []byte { return []byte("{\"type\":\"tool/call\",\"seq\":garbage}\n") }, 10, "uncommitted", true, false, false},
		{"plain both", None, func() []byte { return []byte("{\"type\":\"tool/call\",\"seq\":garbage}\n{\"ty") }, 10, "uncommitted torn", true, true, false},
		{"zstd torn", Zstd, func() []byte { f := salvageTail(); return f[:len(f)-3] }, 10, "torn", false, true, false},
		{"zstd uncommitted frame", Zstd, func() []byte {
			return zstdframe.AppendFrame(nil, []byte("{\"type\":\"tool/call\",\"seq\":garbage}\n"))
		}, 10, "uncommitted", true, false, false},
		{"zstd uncommitted inside a frame", Zstd, salvageTail, 11, "uncommitted", true, false, true},
		{"zstd both", Zstd, func() []byte { f := salvageTail(); return append(f, f[:7]...) }, 11, "uncommitted torn", true, true, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, _ := openStore(t, t.TempDir(), Options{Compression: c.enc, BackupDir: t.TempDir()})
			create(t, s, header("rep", 0), append(turnEvents(0, 1), turnEvents(5, 2)...))
			clean, _ := s.Stat(ctx, "rep")
			if clean.Location.UncommittedBytes != 0 || clean.Location.TornBytes != 0 {
				t.Fatalf("clean log: %+v", clean.Location)
			}
			tail := c.tail()
			appendFile(t, clean.Location.Path, tail)
			snap, err := s.Stat(ctx, "rep")
			if err != nil {
				t.Fatal(err)
			}
			if snap.EventCount != c.keep || (snap.Location.UncommittedBytes > 0) != c.uncommit || (snap.Location.TornBytes > 0) != c.torn ||
				snap.Location.UncommittedBytes+snap.Location.TornBytes != int64(len(tail)) {
				t.Fatalf("Stat of the damaged log: %d events, %+v; want %d events, a %d-byte tail", snap.EventCount, snap.Location, c.keep, len(tail))
			}
			w, err := s.Open(ctx, "rep", seam.Write)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			tr, ok := w.(seam.TailRepairer)
			if !ok {
				t.Fatal("write handle is not a seam.TailRepairer")
			}
			if r := tr.Repairs(); len(r) != 0 {
				t.Fatalf("repairs before any append: %+v", r)
			}
			if err := w.Append(ctx, turnEvents(c.keep, 3)); err != nil {
				t.Fatal(err)
			}
			reps := tr.Repairs()
			var kinds []string
			var total int64
			for i, r := range reps {
				kinds = append(kinds, r.Kind)
				total += r.Bytes
				if r.Path != clean.Location.Path || r.Backup == "" {
					t.Errorf("repair %d: %+v", i, r)
				}
				if data, err := os.ReadFile(r.Backup); err != nil || int64(len(data)) != int64(len(tail)) {
					t.Errorf("backup %s: %d bytes, %v", r.Backup, len(data), err)
				}
				if (r.Rewritten > 0) != (c.rewritten && r.Kind == seam.RepairUncommitted) {
					t.Errorf("repair %d rewritten %d", i, r.Rewritten)
				}
			}
			if strings.Join(kinds, " ") != c.kinds || total != int64(len(tail)) || reps[0].Offset != clean.SizeBytes {
				t.Fatalf("repairs %+v; want kinds %q over %d bytes from %d", reps, c.kinds, len(tail), clean.SizeBytes)
			}
			if err := w.Append(ctx, turnEvents(c.keep+5, 4)); err != nil {
				t.Fatal(err)
			}
			if n := len(tr.Repairs()); n != len(reps) {
				t.Errorf("a clean append added repairs: %d, want %d", n, len(reps))
			}
			after, _ := s.Stat(ctx, "rep")
			if after.EventCount != c.keep+10 || after.Location.UncommittedBytes != 0 || after.Location.TornBytes != 0 {
				t.Fatalf("Stat after the repairing append: %d events, %+v", after.EventCount, after.Location)
			}
		})
	}
}

// TestReadHandleFollowsRewrite checks that a read handle opened before an
// append that rewrote the log (and renamed it over the old one) sees the
// append.
func TestReadHandleFollowsRewrite(t *testing.T) {
	ctx := context.Background()
	root := filepath.Join(t.TempDir(), "root")
	s, _, _ := salvageStore(t, root)
	r, err := s.Open(ctx, "f", seam.Read)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if got, err := r.Read(ctx, 0, -1); err != nil || len(got) != 11 {
		t.Fatalf("read %d events before, %v", len(got), err)
	}
	w, err := s.Open(ctx, "f", seam.Write)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.Append(ctx, turnEvents(11, 3)); err != nil {
		t.Fatal(err)
	}
	if got, err := r.Read(ctx, 0, -1); err != nil || len(got) != 16 {
		t.Fatalf("read %d events after the rewrite, %v", len(got), err)
	}
	if got, err := w.Read(ctx, 5, -1); err != nil || len(got) != 11 {
		t.Fatalf("the writer reads %d events from seq 5, %v", len(got), err)
	}
}

// TestSalvageRepairCrash simulates a crash at every file-system operation
// of a repair that salvages the complete records of a torn final frame
// (dsh 0.1.0's fixture: 98 events, 15 more in the torn frame): whatever
// the point, a fresh store reads either the 98 events with the torn frame
// still there to salvage, or all 113 with no tail; never the tail cut
// without its records written back (durability review finding 5).
func TestSalvageRepairCrash(t *testing.T) {
	ctx := context.Background()
	src := filepath.Join(fixturesDir(t), "dsh-0.1.0", "damaged", "zstd-torn-final-frame-checksum")
	const id = "session-4f1c2a9e-8b3d-4e6f-a1c2-7d9e0b1f2a3c"
	for k := int64(1); ; k++ {
		root := fixture.Copy(t, src)
		s, tfs := openStore(t, root, Options{Compression: Zstd})
		h, err := s.Open(ctx, id, seam.Write)
		if err != nil {
			t.Fatal(err)
		}
		before, err := s.Stat(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		torn := before.Location.TornBytes
		plan := seam.TrimPlan{Tails: []seam.Repair{{Offset: before.SizeBytes - torn, Bytes: torn, Kind: seam.RepairTorn}}, Salvage: 15}
		tfs.crashIn.Store(k)
		res, err := h.(seam.TailTrimmer).TrimTail(ctx, plan)
		crashed := tfs.crashed.Load()
		tfs.crashIn.Store(0)
		tfs.crashed.Store(false)
		h.Close()
		if err != nil && !crashed {
			t.Fatalf("crash at operation %d: repair failed without the crash: %v", k, err)
		}
		if !crashed && res.Salvaged != 15 {
			t.Fatalf("the repair salvaged %d events, want 15", res.Salvaged)
		}
		fresh, _ := openStore(t, root, Options{Compression: Zstd})
		snap, err := fresh.Stat(ctx, id)
		if err != nil {
			t.Fatalf("crash at operation %d: stat: %v", k, err)
		}
		switch torn := snap.Location.TornBytes; {
		case snap.EventCount == 113 && torn == 0:
		case snap.EventCount == 98 && torn > 0 && crashed:
		default:
			t.Fatalf("crash at operation %d: %d events and a %d-byte torn tail; want 98 with the torn frame, or 113", k, snap.EventCount, torn)
		}
		if !crashed {
			t.Logf("a salvaging repair takes %d file-system operations", k-1)
			return
		}
		if k > 100 {
			t.Fatal("the repair never completed")
		}
	}
}
