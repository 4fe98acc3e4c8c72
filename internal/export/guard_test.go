package export

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/dshctl/dshctl/internal/seam"
)

// keeper is a service that names its files, as the backends do.
type keeper struct {
	seam.Service
	paths []string
}

func (k keeper) StorePaths() []string { return k.paths }

func TestWriteFileRefusesStoreFiles(t *testing.T) {
	ctx := context.Background()
	base := t.TempDir()
	root := filepath.Join(base, "store")
	logDir := filepath.Join(root, "--proj--", "s1")
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(logDir, "session.jsonl")
	db := filepath.Join(base, "home", "sessions.sqlite")
	os.MkdirAll(filepath.Dir(db), 0o755)
	for _, p := range []string{log, db} {
		if err := os.WriteFile(p, []byte("precious"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	jsonlStore := keeper{paths: []string{root}}
	sqliteStore := keeper{paths: []string{db, db + "-wal", db + "-shm", db + ".dshctl-lock"}}
	t.Chdir(base)

	refused := []struct {
		name string
		svc  seam.Service
		path string
	}{
		{"the log", jsonlStore, log},
		{"the log, relative", jsonlStore, filepath.Join("store", "--proj--", "s1", "session.jsonl")},
		{"a new file in the store", jsonlStore, filepath.Join(root, "new.zip")},
		{"a new file in a new folder of the store", jsonlStore, filepath.Join(root, "a", "b", "c.zip")},
		{"the store root itself", jsonlStore, root},
		{"the database", sqliteStore, db},
		{"the write-ahead log, not there yet", sqliteStore, db + "-wal"},
		{"the lock file", sqliteStore, db + ".dshctl-lock"},
		{"a dotted spelling of the database", sqliteStore, filepath.Join(base, "home", ".", "x", "..", "sessions.sqlite")},
	}
	if runtime.GOOS != "windows" {
		if err := os.Symlink(root, filepath.Join(base, "alias")); err != nil {
			t.Fatal(err)
		}
		if err := os.Link(db, filepath.Join(base, "hardlink")); err != nil {
			t.Fatal(err)
		}
		refused = append(refused,
			struct {
				name string
				svc  seam.Service
				path string
			}{"through a symlinked folder", jsonlStore, filepath.Join(base, "alias", "--proj--", "s1", "session.jsonl")},
			struct {
				name string
				svc  seam.Service
				path string
			}{"a .. after a symlink", jsonlStore, filepath.Join(base, "alias", "--proj--", "..", "x.zip")},
			struct {
				name string
				svc  seam.Service
				path string
			}{"a hard link to the database", sqliteStore, filepath.Join(base, "hardlink")},
		)
	}
	for _, c := range refused {
		t.Run(c.name, func(t *testing.T) {
			_, err := WriteFile(ctx, c.path, WriteOptions{Force: true}, c.svc, writeText("zip"))
			var se *StoreFileError
			if !errors.Is(err, ErrStoreFile) || !errors.As(err, &se) || se.Path != c.path {
				t.Fatalf("WriteFile(%s, force) = %v, want a *StoreFileError", c.path, err)
			}
			for _, p := range []string{log, db} {
				if readString(t, p) != "precious" {
					t.Fatalf("%s was changed", p)
				}
			}
			if _, err := os.Stat(filepath.Join(root, "new.zip")); err == nil {
				t.Fatal("a file was made in the store")
			}
		})
	}

	// Beside the database and outside the root is fine.
	for _, p := range []string{filepath.Join(base, "home", "ok.zip"), filepath.Join(base, "storex.zip")} {
		if _, err := WriteFile(ctx, p, WriteOptions{}, sqliteStore, writeText("zip")); err != nil {
			t.Errorf("WriteFile(%s) = %v", p, err)
		}
		if _, err := WriteFile(ctx, p, WriteOptions{Force: true}, jsonlStore, writeText("zip")); err != nil {
			t.Errorf("WriteFile(%s, force) = %v", p, err)
		}
	}
}

func TestWithin(t *testing.T) {
	for _, c := range []struct {
		path, dir string
		want      bool
	}{
		{"/a/b/c", "/a/b", true},
		{"/a/b", "/a/b", false},
		{"/a/bc", "/a/b", false},
		{"/a/..b/c", "/a", true},
		{"/x", "/a", false},
	} {
		if got := within(filepath.FromSlash(c.path), filepath.FromSlash(c.dir)); got != c.want {
			t.Errorf("within(%s, %s) = %v", c.path, c.dir, got)
		}
	}
}
