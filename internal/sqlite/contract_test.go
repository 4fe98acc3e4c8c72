package sqlite

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/dshctl/dshctl/internal/export"
	"github.com/dshctl/dshctl/internal/seam"
	"github.com/dshctl/dshctl/internal/seam/seamtest"
)

func TestMain(m *testing.M) {
	if db := os.Getenv(crashChildEnv); db != "" {
		crashChild(db) // never returns
	}
	// A child process of seamtest.HoldInChild: hold the write lock of
	// session args[1] of the database args[0].
	seamtest.RunChild(func(args []string) (func(), error) {
		o, err := acquire(args[0], args[1])
		if err != nil {
			return nil, err
		}
		return func() { o.release() }, nil
	})
	os.Exit(m.Run())
}

// contractBackend runs the seam contract suite on one schema.
type contractBackend struct{ schema int }

func (b contractBackend) Versions() []int { return []int{0, 2, 4} }

func dbPath(dir string) string { return filepath.Join(dir, "sessions.sqlite") }

func (b contractBackend) New(t *testing.T, dir string) seam.Service {
	s, err := Open(dbPath(dir), Options{Create: true, Schema: b.schema, BackupDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func (b contractBackend) store(t *testing.T, dir string) *Store {
	t.Helper()
	s := b.New(t, dir).(*Store)
	t.Cleanup(func() { s.Close() })
	return s
}

// WriteLog stores the records as rows, unvalidated: packed v0 lines become
// packed rows in schema 17 and their member events in schema 14.
func (b contractBackend) WriteLog(t *testing.T, dir string, h seam.Header, records [][]byte) {
	s := b.store(t, dir)
	var rows []row
	for _, line := range records {
		var f map[string]json.RawMessage
		if err := json.Unmarshal(line, &f); err != nil {
			t.Fatal(err)
		}
		var typ string
		json.Unmarshal(f["type"], &typ)
		if _, packed := f["seq0"]; packed {
			rec, err := seam.DecodeRecord(line, 0)
			if err != nil {
				t.Fatal(err)
			}
			if b.schema == Schema17 {
				p := rec.Packed
				rows = append(rows, row{seq: p.Seq0, time: p.Time0, typ: p.Kind, data: string(f["data"]), ignorable: 0})
				continue
			}
			for _, e := range rec.Events() {
				rows = append(rows, row{seq: e.Seq, time: e.Time, typ: e.Type, data: string(e.Data)})
			}
			continue
		}
		r := row{typ: typ, data: string(f["data"])}
		json.Unmarshal(f["seq"], &r.seq)
		json.Unmarshal(f["time"], &r.time)
		if op, ok := f["surfaceOp"]; ok {
			r.surfaceOp = string(op)
		}
		if raw, ok := f["sourceEventSeqs"]; ok {
			seqs, err := seam.DecodeSourceSeqs(raw, h.Version)
			if err != nil {
				t.Fatal(err)
			}
			if b.schema == Schema17 {
				r.seqs = appendSourceSeqs([]byte{}, seqs)
			} else {
				r.seqs = string(appendSeqsJSON(nil, seqs))
			}
		}
		if string(f["ignorable"]) == "true" {
			if b.schema == Schema14 {
				t.Fatalf("schema 14 cannot store an ignorable event")
			}
			r.ignorable = 1
		}
		rows = append(rows, r)
	}
	c, err := s.Create(context.Background(), h, seam.CreateOptions{InheritedEventCount: inheritedFor(h)})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	c.Close()
	insertRaw(t, s, h.ID, rows)
}

func inheritedFor(h seam.Header) int64 {
	if h.SeedLength != nil {
		return *h.SeedLength
	}
	return 0
}

// insertRaw inserts rows of session id as they are.
func insertRaw(t *testing.T, s *Store, id string, rows []row) {
	t.Helper()
	ctx := context.Background()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.insertRows(ctx, tx, id, rows); err != nil {
		tx.Rollback()
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}

// TearTail adds the final row a broken writer leaves: in schema 17 a
// packed row whose zstd payload is cut short; in schema 14, which cannot
// hold a torn row (see NoTornTail), a row whose JSON is cut short.
func (b contractBackend) TearTail(t *testing.T, dir, id string) {
	s := b.store(t, dir)
	snap, err := s.Stat(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	r := row{seq: snap.EventCount, time: 1785331619000, typ: "turn/start", data: `{"turn":`}
	if b.schema == Schema17 {
		frame := compress([]byte(`{"turn":1,"step":1,"index":0,"dt":[1,1],"texts":["a","b","c"]}` + string(make([]byte, 5000))))
		r = row{seq: snap.EventCount, time: 1785331619000, typ: seam.TextChunks, data: frame[:len(frame)-7], ignorable: 0}
	}
	insertRaw(t, s, id, []row{r})
}

func (b contractBackend) HoldLockElsewhere(t *testing.T, dir, id string) func() {
	return seamtest.HoldInChild(t, dbPath(dir), id)
}

// schema14Backend is contractBackend on schema 14, which has no
// ignorable column.
type schema14Backend struct{ contractBackend }

func (schema14Backend) NoIgnorableFlag() {}

// Versions: a schema-14 database holds format v0 only.
func (schema14Backend) Versions() []int { return []int{0} }

// NoTornTail: schema 14 has no packed rows, and a scalar row is inserted
// whole in a transaction; its TearTail leaves a damaged final row.
func (schema14Backend) NoTornTail() {}

func TestContract(t *testing.T) {
	t.Run("schema17", func(t *testing.T) {
		seamtest.Run(t, contractBackend{Schema17}, seamtest.WithExport(exportSession))
	})
	t.Run("schema14", func(t *testing.T) {
		seamtest.Run(t, schema14Backend{contractBackend{Schema14}}, seamtest.WithExport(exportSession))
	})
}

// exportSession is the export point 22 checks.
func exportSession(ctx context.Context, svc seam.Service, id string, w io.Writer) error {
	_, err := export.Session(ctx, svc, id, w, export.Options{})
	return err
}
