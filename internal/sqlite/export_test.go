package sqlite_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/dshctl/dshctl/internal/export"
	"github.com/dshctl/dshctl/internal/fixture"
	"github.com/dshctl/dshctl/internal/seam"
	"github.com/dshctl/dshctl/internal/store"
)

// TestFixtureExportsMatch exports every session of the schema-14 store dsh
// wrote and the same session of the JSONL store dsh wrote: the ZIPs are
// byte for byte the same, subagents included.
func TestFixtureExportsMatch(t *testing.T) {
	ctx := context.Background()
	data, err := os.ReadFile(fixture.Path(t, "dsh-0.1.0", "sqlite", "sessions.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(t.TempDir(), "sessions.sqlite")
	if err := os.WriteFile(db, data, 0o600); err != nil {
		t.Fatal(err)
	}
	sq, err := store.Open(store.Spec{Path: "sqlite:" + db}, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer sq.Close()
	js, err := store.Open(store.Spec{Path: fixture.Path(t, "dsh-0.1.0", "jsonl-zstd")}, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer js.Close()
	entries, err := sq.List(ctx)
	if err != nil || len(entries) != 9 {
		t.Fatalf("List: %d entries, %v", len(entries), err)
	}
	for _, e := range entries {
		id := e.Snapshot.Header.ID
		t.Run(seam.SafeName(id), func(t *testing.T) {
			var a, b bytes.Buffer
			if _, err := export.Session(ctx, sq, id, &a, export.Options{}); err != nil {
				t.Fatal(err)
			}
			if _, err := export.Session(ctx, js, id, &b, export.Options{}); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(a.Bytes(), b.Bytes()) {
				t.Fatalf("the SQLite store's export (%d bytes) differs from the JSONL store's (%d bytes)", a.Len(), b.Len())
			}
		})
	}
}
