package jsonl

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/dshctl/dshctl/internal/seam"
)

// TestSessionFiles: a session's log files, oldest generation first, each
// read byte for byte up to its size when opened; never through a symbolic
// link; an unknown id is ErrNotFound.
func TestSessionFiles(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	older := headerFor("gens") + "{\"type\":\"torn\n"
	writeLog(t, root, "--p--", "gens", "session.jsonl", older)
	live := writeLog(t, root, "--p--", "gens", "session.v2.jsonl", headerFor("gens"))
	s, _ := openStore(t, root, Options{})
	files, err := s.SessionFiles(ctx, "gens")
	if err != nil || len(files) != 2 || files[0].Name != "session.jsonl" || files[1].Name != "session.v2.jsonl" {
		t.Fatalf("SessionFiles(gens) = %+v, %v", files, err)
	}
	r, err := files[0].Open()
	if err != nil {
		t.Fatal(err)
	}
	// What is appended after Open is not read.
	f, err := os.OpenFile(filepath.Join(filepath.Dir(live), "session.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("later\n")
	f.Close()
	b, err := io.ReadAll(r)
	r.Close()
	if err != nil || string(b) != older {
		t.Errorf("read %q, %v; want %q", b, err, older)
	}
	if _, err := s.SessionFiles(ctx, "absent"); !errors.Is(err, seam.ErrNotFound) {
		t.Errorf("SessionFiles(absent): %v, want ErrNotFound", err)
	}
	if runtime.GOOS == "windows" {
		return
	}
	// A log replaced by a symbolic link after the listing is not followed.
	target := filepath.Join(t.TempDir(), "elsewhere")
	os.WriteFile(target, []byte("secret\n"), 0o600)
	os.Remove(live)
	if err := os.Symlink(target, live); err != nil {
		t.Fatal(err)
	}
	if r, err := files[1].Open(); err == nil {
		r.Close()
		t.Error("opened a log through a symbolic link")
	}
}
