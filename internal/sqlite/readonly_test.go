package sqlite

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/dshctl/dshctl/internal/seam"
)

// withWAL leaves a commit in the WAL of the database at path, not
// checkpointed, as a writer killed before its checkpoint does.
func withWAL(t *testing.T, path string) {
	t.Helper()
	db, err := sql.Open("sqlite", path+"?_pragma=wal_autocheckpoint(0)")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	if _, err := db.Exec("UPDATE sessions SET cwd = '/wal' WHERE id LIKE 'session-4f1c%'"); err != nil {
		t.Fatal(err)
	}
	main, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	wal, err := os.ReadFile(path + "-wal")
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	if err := os.WriteFile(path, main, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path+"-wal", wal, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestReadOnlyChangesNothing: a store opened ReadOnly reads the commits in
// the WAL and leaves the database and its WAL byte for byte as they were
// (issue 24 item 4: a read checkpointed the WAL into the database when it
// closed); its writes fail with seam.ErrReadOnly.
func TestReadOnlyChangesNothing(t *testing.T) {
	ctx := context.Background()
	path := fixtureCopy(t)
	withWAL(t, path)
	before := fileSum(t, path)
	s, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	entries, err := s.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, en := range entries {
		found = found || en.Snapshot.Header.Cwd == "/wal"
	}
	if !found {
		t.Errorf("the commit in the WAL is not read")
	}
	if _, err := s.Open(ctx, "session-4f1c2a9e-8b3d-4e6f-a1c2-7d9e0b1f2a3c", seam.Write); !errors.Is(err, seam.ErrReadOnly) {
		t.Errorf("write open of a read-only store: %v", err)
	}
	if _, err := s.Create(ctx, seam.Header{ID: "new", CreatedAt: 1}, seam.CreateOptions{}); !errors.Is(err, seam.ErrReadOnly) {
		t.Errorf("create in a read-only store: %v", err)
	}
	s.Close()
	if fileSum(t, path) != before {
		t.Errorf("a read-only store changed the database or its WAL")
	}
}

// TestWALProblem checks the WAL header checks against a WAL SQLite wrote
// and damaged copies of it.
func TestWALProblem(t *testing.T) {
	path := fixtureCopy(t)
	withWAL(t, path)
	good, err := os.ReadFile(path + "-wal")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		damage func(b []byte) []byte
		want   string
	}{
		{"sound", func(b []byte) []byte { return b }, ""},
		{"empty", func(b []byte) []byte { return nil }, ""},
		{"short", func(b []byte) []byte { return b[:20] }, "shorter than a WAL header"},
		{"magic", func(b []byte) []byte { b[0] = 'x'; return b }, "does not start with a WAL header"},
		{"version", func(b []byte) []byte { binary.BigEndian.PutUint32(b[4:], 1); return b }, "WAL format version 1"},
		{"page size", func(b []byte) []byte { binary.BigEndian.PutUint32(b[8:], 1000); return b }, "page size of 1000"},
		{"checksum", func(b []byte) []byte { b[16]++; return b }, "checksum does not match"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if err := os.WriteFile(path+"-wal", c.damage(append([]byte(nil), good...)), 0o600); err != nil {
				t.Fatal(err)
			}
			problem, _, err := walProblem(path)
			if err != nil || (c.want == "") != (problem == "") || !strings.Contains(problem, c.want) {
				t.Errorf("walProblem = %q, %v; want %q", problem, err, c.want)
			}
		})
	}
}
