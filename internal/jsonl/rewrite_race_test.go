package jsonl

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshctl/dshctl/internal/jsonl/zstdframe"
	"github.com/dshctl/dshctl/internal/seam"
)

// dshWrite is what dsh 0.1.0's writer, which takes no lock, does: open the
// log O_APPEND, write, close.
func dshWrite(tb testing.TB, path string, text string) {
	tb.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		tb.Fatal(err)
	}
}

// backupsHolding returns the files under dir whose bytes contain text.
func backupsHolding(tb testing.TB, dir, text string) []string {
	tb.Helper()
	var found []string
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".bin") {
			if data, _ := os.ReadFile(path); bytes.Contains(data, []byte(text)) {
				found = append(found, path)
			}
		}
		return nil
	})
	return found
}

const dshLine = `{"type":"session/title","seq":9,"time":12,"data":{"title":"dsh wrote this"}}` + "\n"

// TestRenumberBesideAWriter checks that what a writer taking no lock (dsh
// 0.1.0) appends while a renumbering rewrites the log is never lost: while
// the new log is written, the rename is given up (an InUseError, the log
// unchanged but for that write); between the last check and the rename,
// the bytes that reach the replaced log are saved to a backup file, named
// in the error.
func TestRenumberBesideAWriter(t *testing.T) {
	ctx := context.Background()
	t.Run("while it rewrites", func(t *testing.T) {
		root := raceLog(t, None, raceBatches...)
		s, tfs := openStore(t, root, Options{})
		path := filepath.Join(root, "--big--", "race", LogName(0, None))
		before, _ := os.ReadFile(path)
		tfs.set(&tfs.beforeOpen, func(name string) error {
			if strings.HasSuffix(name, ".tmp") {
				dshWrite(t, path, dshLine)
			}
			return nil
		})
		_, err := s.Renumber(ctx, "race", seam.RenumberOptions{})
		var iu *seam.InUseError
		if !errors.As(err, &iu) || iu.Wrote != int64(len(dshLine)) || !errors.Is(err, seam.ErrAlreadyOwned) {
			t.Fatalf("Renumber while another process appends: %v, want an InUseError of %d bytes", err, len(dshLine))
		}
		if now, _ := os.ReadFile(path); string(now) != string(before)+dshLine {
			t.Fatal("the log is not the log as it was with the other process's write")
		}
		if tmps, _ := filepath.Glob(path + ".*.tmp"); len(tmps) != 0 {
			t.Fatalf("temp files left: %v", tmps)
		}
	})
	t.Run("as it renames", func(t *testing.T) {
		root := raceLog(t, None, raceBatches...)
		backups := t.TempDir()
		s, tfs := openStore(t, root, Options{BackupDir: backups})
		path := filepath.Join(root, "--big--", "race", LogName(0, None))
		tfs.set(&tfs.failRename, func(name string) error {
			if name == path {
				dshWrite(t, path, dshLine)
			}
			return nil
		})
		_, err := s.Renumber(ctx, "race", seam.RenumberOptions{})
		if !errors.Is(err, seam.ErrOwnershipLost) {
			t.Fatalf("Renumber with a write as it renames: %v, want ErrOwnershipLost", err)
		}
		saved := backupsHolding(t, backups, "dsh wrote this")
		if len(saved) != 1 || !strings.Contains(err.Error(), saved[0]) {
			t.Fatalf("the other process's write is saved in %v; the error: %v", saved, err)
		}
		if data, _ := os.ReadFile(saved[0]); string(data) != dshLine {
			t.Fatalf("the backup holds %q, want exactly the other process's write", data)
		}
		if got, err := scanAll(t, s, "race"); err != nil || len(got) != 11 {
			t.Fatalf("the renumbered log: %d events, %v", len(got), err)
		}
	})
}

// TestTailCutBesideAWriter checks that an append that removes a torn tail
// does not cut away what a writer taking no lock appended after the write
// open: the cut is given up, nothing written, the other write kept.
func TestTailCutBesideAWriter(t *testing.T) {
	ctx := context.Background()
	root := raceLog(t, None, raceBatches[0], `{"type":"session/title","seq":4,`)
	backups := t.TempDir()
	s, tfs := openStore(t, root, Options{BackupDir: backups})
	path := filepath.Join(root, "--big--", "race", LogName(0, None))
	before, _ := os.ReadFile(path)
	h, err := s.Open(ctx, "race", seam.Write)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	tfs.set(&tfs.beforeOpen, func(name string) error {
		if strings.HasPrefix(name, backups) && strings.HasSuffix(name, ".json") {
			dshWrite(t, path, dshLine) // as the backup is being described
		}
		return nil
	})
	err = h.Append(ctx, []seam.Event{{Type: "session/title", Seq: 4, Time: 5, Data: []byte(`{"title":"mine"}`)}})
	var iu *seam.InUseError
	if !errors.As(err, &iu) || iu.Wrote != int64(len(dshLine)) {
		t.Fatalf("Append while another process appends: %v, want an InUseError", err)
	}
	if now, _ := os.ReadFile(path); string(now) != string(before)+dshLine {
		t.Fatalf("the log is %q, want the log as it was with the other process's write", now)
	}
	if left := backupsHolding(t, backups, ""); len(left) != 0 {
		t.Fatalf("backups of a cut that was given up are left: %v", left)
	}
}

// TestTailRewriteBesideAWriter checks the same of an append that rewrites
// a zstd log whose uncommitted tail starts inside a frame (a copy renamed
// over the log): a write during the copy makes it give up, one as it
// renames is saved to a backup file.
func TestTailRewriteBesideAWriter(t *testing.T) {
	ctx := context.Background()
	frame := string(zstdframe.AppendFrame(nil, []byte(dshLine)))
	for _, when := range []string{"while it copies", "as it renames"} {
		t.Run(when, func(t *testing.T) {
			s, tfs, path := salvageStore(t, filepath.Join(t.TempDir(), "root"))
			before, _ := os.ReadFile(path)
			w, err := s.Open(ctx, "f", seam.Write)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			hook := &tfs.beforeOpen
			if when == "as it renames" {
				hook = &tfs.failRename
			}
			tfs.set(hook, func(name string) error {
				if strings.HasSuffix(name, ".tmp") || name == path {
					tfs.set(hook, nil)
					dshWrite(t, path, frame)
				}
				return nil
			})
			err = w.Append(ctx, turnEvents(11, 3))
			tfs.set(hook, nil)
			if when == "while it copies" {
				var iu *seam.InUseError
				if !errors.As(err, &iu) || iu.Wrote != int64(len(frame)) {
					t.Fatalf("Append: %v, want an InUseError", err)
				}
				if now, _ := os.ReadFile(path); string(now) != string(before)+frame {
					t.Fatal("the log is not the log as it was with the other process's write")
				}
				return
			}
			if !errors.Is(err, seam.ErrOwnershipLost) || !strings.Contains(err.Error(), "saved to ") {
				t.Fatalf("Append: %v, want ErrOwnershipLost naming the backup", err)
			}
		})
	}
}
