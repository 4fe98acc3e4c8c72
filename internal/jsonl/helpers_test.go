package jsonl

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/dshctl/dshctl/internal/fixture"
	"github.com/dshctl/dshctl/internal/jsonl/osfs"
	"github.com/dshctl/dshctl/internal/seam"
)

// fixturesDir returns the shared fixture tree.
func fixturesDir(tb testing.TB) string {
	tb.Helper()
	return fixture.Dir(tb)
}

// testFS wraps the real file system: it counts the bytes read and can make
// writes, syncs and truncations fail.
type testFS struct {
	osfs.OS
	read atomic.Int64
	// noSync makes Sync a no-op, for fuzzing speed.
	noSync bool

	mu           sync.Mutex
	failWrite    func(path string) error
	failSync     func(path string) error
	failTruncate func(path string) error
	failRename   func(path string) error // called with the new name
	failReadDir  func(path string) error
	beforeOpen   func(path string) error // called before every OpenFile
	// free, when set, replaces FreeSpace.
	free func(dir string) (int64, error)

	// crashIn, when positive, counts down the operations that change the
	// file system; the one that brings it to 0 and every later one fail
	// without effect (a Write first writes half its bytes), as if the
	// process had been killed there.
	crashIn atomic.Int64
	crashed atomic.Bool
}

// errCrashed is the failure of every operation after a simulated crash.
var errCrashed = errors.New("simulated crash")

// mutate counts one operation that changes the file system; it fails once
// the simulated crash happened. now says the crash is this operation.
func (t *testFS) mutate() (now bool, err error) {
	if t.crashed.Load() {
		return false, errCrashed
	}
	if t.crashIn.Load() > 0 && t.crashIn.Add(-1) == 0 {
		t.crashed.Store(true)
		return true, errCrashed
	}
	return false, nil
}

func (t *testFS) Rename(oldname, newname string) error {
	if _, err := t.mutate(); err != nil {
		return err
	}
	if err := t.hook(&t.failRename, newname); err != nil {
		return err
	}
	return t.OS.Rename(oldname, newname)
}

func (t *testFS) Remove(name string) error {
	if _, err := t.mutate(); err != nil {
		return err
	}
	return t.OS.Remove(name)
}

func (t *testFS) Link(oldname, newname string) error {
	if _, err := t.mutate(); err != nil {
		return err
	}
	return t.OS.Link(oldname, newname)
}

func (t *testFS) Mkdir(name string, perm fs.FileMode) error {
	if _, err := t.mutate(); err != nil {
		return err
	}
	return t.OS.Mkdir(name, perm)
}

func (t *testFS) OpenFile(name string, flag int, perm fs.FileMode) (file, error) {
	if err := t.hook(&t.beforeOpen, name); err != nil {
		return nil, err
	}
	if flag&os.O_CREATE != 0 {
		if _, err := t.mutate(); err != nil {
			return nil, err
		}
	}
	f, err := t.OS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &testFile{file: f, fs: t, path: name}, nil
}

func (t *testFS) CreateIn(dir, name string, perm fs.FileMode) (file, error) {
	path := filepath.Join(dir, name)
	if err := t.hook(&t.beforeOpen, path); err != nil {
		return nil, err
	}
	if _, err := t.mutate(); err != nil {
		return nil, err
	}
	f, err := t.OS.CreateIn(dir, name, perm)
	if err != nil {
		return nil, err
	}
	return &testFile{file: f, fs: t, path: path}, nil
}

func (t *testFS) ReadDir(name string) ([]fs.DirEntry, error) {
	if err := t.hook(&t.failReadDir, name); err != nil {
		return nil, err
	}
	return t.OS.ReadDir(name)
}

func (t *testFS) FreeSpace(dir string) (int64, error) {
	t.mu.Lock()
	f := t.free
	t.mu.Unlock()
	if f != nil {
		return f(dir)
	}
	return t.OS.FreeSpace(dir)
}

func (t *testFS) SyncDir(name string) error {
	if _, err := t.mutate(); err != nil {
		return err
	}
	if err := t.hook(&t.failSync, name); err != nil {
		return err
	}
	if t.noSync {
		return nil
	}
	return t.OS.SyncDir(name)
}

func (t *testFS) hook(which *func(string) error, path string) error {
	t.mu.Lock()
	f := *which
	t.mu.Unlock()
	if f == nil {
		return nil
	}
	return f(path)
}

func (t *testFS) set(which *func(string) error, f func(string) error) {
	t.mu.Lock()
	*which = f
	t.mu.Unlock()
}

type testFile struct {
	file
	fs   *testFS
	path string
}

func (f *testFile) ReadAt(p []byte, off int64) (int, error) {
	n, err := f.file.ReadAt(p, off)
	f.fs.read.Add(int64(n))
	return n, err
}

func (f *testFile) Write(p []byte) (int, error) {
	if now, err := f.fs.mutate(); err != nil {
		if now {
			n, _ := f.file.Write(p[:len(p)/2])
			return n, err
		}
		return 0, err
	}
	if err := f.fs.hook(&f.fs.failWrite, f.path); err != nil {
		// Write half, as a full disk would, then fail.
		n, _ := f.file.Write(p[:len(p)/2])
		return n, err
	}
	return f.file.Write(p)
}

func (f *testFile) Sync() error {
	if _, err := f.fs.mutate(); err != nil {
		return err
	}
	if err := f.fs.hook(&f.fs.failSync, f.path); err != nil {
		return err
	}
	if f.fs.noSync {
		return nil
	}
	return f.file.Sync()
}

func (f *testFile) Truncate(size int64) error {
	if _, err := f.fs.mutate(); err != nil {
		return err
	}
	if err := f.fs.hook(&f.fs.failTruncate, f.path); err != nil {
		return err
	}
	return f.file.Truncate(size)
}

// openStore opens root with opts and the test file system; repairs keep
// their bytes in a temp dir unless opts names one.
func openStore(tb testing.TB, root string, opts Options) (*Store, *testFS) {
	tb.Helper()
	tfs := &testFS{}
	opts.fs = tfs
	if opts.BackupDir == "" {
		opts.BackupDir = tb.TempDir()
	}
	s, err := Open(root, opts)
	if err != nil {
		tb.Fatalf("Open(%s): %v", root, err)
	}
	tb.Cleanup(func() { s.Close() })
	return s, tfs
}

// scanAll reads every event of a session through a read handle.
func scanAll(tb testing.TB, s *Store, id string) ([]seam.Event, error) {
	tb.Helper()
	ctx := context.Background()
	h, err := s.Open(ctx, id, seam.Read)
	if err != nil {
		return nil, err
	}
	defer h.Close()
	return collect(h.Scan(ctx, seam.ScanOptions{}))
}

// readJSONL returns the JSON values of the lines of a file.
func readJSONL(tb testing.TB, path string) []any {
	tb.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	var out []any
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.UseNumber()
	for {
		var v any
		if err := dec.Decode(&v); err == io.EOF {
			return out
		} else if err != nil {
			tb.Fatalf("%s: %v", path, err)
		}
		out = append(out, v)
	}
}

// jsonValue decodes the canonical JSON of a value for comparison.
func jsonValue(tb testing.TB, v any) any {
	tb.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.UseNumber()
	var out any
	if err := dec.Decode(&out); err != nil {
		tb.Fatal(err)
	}
	return out
}

// sameEvents compares events with expected JSON values.
func sameEvents(tb testing.TB, got []seam.Event, want []any) {
	tb.Helper()
	if len(got) != len(want) {
		tb.Fatalf("got %d events, want %d", len(got), len(want))
	}
	for i := range got {
		if g := jsonValue(tb, got[i]); !reflect.DeepEqual(g, want[i]) {
			tb.Fatalf("event %d:\n got %s\nwant %s", i, mustJSON(g), mustJSON(want[i]))
		}
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// wantKind fails unless err matches kind.
func wantKind(tb testing.TB, err, kind error) {
	tb.Helper()
	if !errors.Is(err, kind) {
		tb.Fatalf("error %v, want kind %v", err, kind)
	}
	var se *seam.Error
	if !errors.As(err, &se) {
		tb.Fatalf("error %v is not a *seam.Error", err)
	}
}
