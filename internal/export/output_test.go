package export

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
)

func writeText(text string) func(io.Writer) error {
	return func(w io.Writer) error {
		_, err := io.WriteString(w, text)
		return err
	}
}

// dirNames lists dir, to show that no temporary file is left behind.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, de := range des {
		names = append(names, de.Name())
	}
	return names
}

func readString(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestWriteFile(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "out.zip")

	n, err := WriteFile(ctx, path, WriteOptions{}, nil, writeText("first"))
	if err != nil || n != 5 || readString(t, path) != "first" {
		t.Fatalf("new file: %d, %v", n, err)
	}
	if fi, _ := os.Stat(path); runtime.GOOS != "windows" && fi.Mode().Perm() != fileMode {
		t.Errorf("new file has mode %v, want %v", fi.Mode().Perm(), os.FileMode(fileMode))
	}

	_, err = WriteFile(ctx, path, WriteOptions{}, nil, writeText("second"))
	if !errors.Is(err, ErrExists) || readString(t, path) != "first" {
		t.Fatalf("existing file without force: %v", err)
	}

	if err := os.Chmod(path, 0o640); err != nil {
		t.Fatal(err)
	}
	if _, err := WriteFile(ctx, path, WriteOptions{Force: true}, nil, writeText("third")); err != nil || readString(t, path) != "third" {
		t.Fatalf("force: %v", err)
	}
	if fi, _ := os.Stat(path); runtime.GOOS != "windows" && fi.Mode().Perm() != 0o640 {
		t.Errorf("replaced file has mode %v, want its old 0640", fi.Mode().Perm())
	}

	failing := func(w io.Writer) error {
		io.WriteString(w, "half a zip")
		return errDisk
	}
	if _, err := WriteFile(ctx, filepath.Join(dir, "failed.zip"), WriteOptions{}, nil, failing); !errors.Is(err, errDisk) {
		t.Fatalf("failed write: %v", err)
	}
	if _, err := WriteFile(ctx, path, WriteOptions{Force: true}, nil, failing); !errors.Is(err, errDisk) || readString(t, path) != "third" {
		t.Fatalf("failed forced write: %v", err)
	}

	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := WriteFile(cctx, filepath.Join(dir, "cancelled.zip"), WriteOptions{}, nil, writeText("x")); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled write: %v", err)
	}

	if got := dirNames(t, dir); !slices.Equal(got, []string{"out.zip"}) {
		t.Fatalf("the folder holds %q, want only out.zip", got)
	}

	if _, err := WriteFile(ctx, dir, WriteOptions{Force: true}, nil, writeText("x")); err == nil {
		t.Fatal("a directory was replaced")
	}
	if _, err := WriteFile(ctx, filepath.Join(dir, "nosuch", "x.zip"), WriteOptions{}, nil, writeText("x")); err == nil {
		t.Fatal("no error for a missing folder")
	}
}

// TestWriteFileAppeared: a file that appears while the export runs is not
// replaced without force.
func TestWriteFileAppeared(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.zip")
	_, err := WriteFile(context.Background(), path, WriteOptions{}, nil, func(w io.Writer) error {
		return os.WriteFile(path, []byte("theirs"), 0o644)
	})
	if !errors.Is(err, ErrExists) || readString(t, path) != "theirs" {
		t.Fatalf("got %v; file holds %q", err, readString(t, path))
	}
	if got := dirNames(t, filepath.Dir(path)); len(got) != 1 {
		t.Fatalf("the folder holds %q", got)
	}
}

// TestWriteFileSymlink: a symlink at the path is neither replaced nor
// followed, with or without force (issue 24 item 1).
func TestWriteFileSymlink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "precious")
	if err := os.WriteFile(target, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "out.zip")
	if err := os.Symlink(target, link); err != nil {
		t.Skip("no symlinks here:", err)
	}
	for _, o := range []WriteOptions{{}, {Force: true}, {Force: true, Stream: true}} {
		if _, err := WriteFile(context.Background(), link, o, nil, writeText("zip")); !errors.Is(err, ErrNotReplaced) {
			t.Fatalf("symlink, %+v: %v", o, err)
		}
		if fi, _ := os.Lstat(link); fi.Mode()&fs.ModeSymlink == 0 || readString(t, target) != "keep" {
			t.Fatalf("symlink replaced or followed: link %v, target %q", fi.Mode(), readString(t, target))
		}
	}
	if got := dirNames(t, dir); len(got) != 2 {
		t.Fatalf("the folder holds %q", got)
	}
}
