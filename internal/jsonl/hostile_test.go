package jsonl

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/metrics"
	"strings"
	"testing"
	"time"

	"github.com/dshctl/dshctl/internal/cputime"
	"github.com/dshctl/dshctl/internal/jsonl/hostile"
	"github.com/dshctl/dshctl/internal/seam"
)

// hostileCase is a log of one committed turn (seq 0 to 4) followed by
// hostile bytes, and what each read path must make of it.
type hostileCase struct {
	name string
	zstd bool
	tail func(path string) error // appends the hostile bytes
	// stat is the error kind of Stat and of a read open (nil: they
	// succeed), read the kind a full forward scan ends with, and write
	// the kind of a write open (which reads the whole log).
	stat, read, write error
	// want, in the message of a limit error.
	want string
	// torn and uncommitted are Stat's tail sizes when it succeeds.
	torn, uncommitted int64
}

func appendFrame(parts ...hostile.Part) func(string) error {
	return func(path string) error { return hostile.Append(path, hostile.Frame(nil, parts...)) }
}

func appendBytes(parts ...hostile.Part) func(string) error {
	return func(path string) error {
		var b []byte
		for _, p := range parts {
			if p.Data != nil {
				b = append(b, p.Data...)
			} else {
				b = append(b, bytes.Repeat([]byte{p.Byte}, int(p.N))...)
			}
		}
		return hostile.Append(path, b)
	}
}

const (
	kib = int64(1) << 10
	mib = int64(1) << 20
)

// hostileCases are scaled to the limits of hostileOpts: a record limit of
// 1 MiB and a frame limit of 32 MiB stand for 64 MiB and 256 MiB.
var hostileOpts = Options{MaxRecordBytes: 1 << 20, MaxFrameBytes: 32 << 20}

// hostileHeap bounds the heap of any one operation on a hostile case:
// what a reader may hold (a frame of up to frameMemLimit in memory, and
// its verification; a record) with room for garbage not yet collected.
const hostileHeap = 4 * frameMemLimit

func hostileCases() []hostileCase {
	title := func(seq int) hostile.Part {
		return hostile.Text(fmt.Sprintf(`{"type":"session/title","seq":%d,"time":1,"data":{"title":"`, seq))
	}
	return []hostileCase{
		// A few KiB that decode to more than the frame limit.
		{name: "zstd/zeros over the frame limit", zstd: true, tail: appendFrame(hostile.Repeat(0, 256*mib)),
			stat: seam.ErrLimit, read: seam.ErrLimit, write: seam.ErrLimit, want: "frame at byte 618 holds more than 32 MiB of content, the frame limit"},
		// One record over the record limit, in a frame under the frame
		// limit; streamed (over 16 MiB would be) or held whole.
		{name: "zstd/long record", zstd: true, tail: appendFrame(title(5), hostile.Repeat('a', 4*mib), hostile.Text("\"}}\n")),
			stat: seam.ErrLimit, read: seam.ErrLimit, write: seam.ErrLimit, want: "exceeds the record limit of 1 MiB"},
		{name: "zstd/long record streamed", zstd: true, tail: appendFrame(title(5), hostile.Repeat('a', 24*mib), hostile.Text("\"}}\n")),
			stat: seam.ErrLimit, read: seam.ErrLimit, write: seam.ErrLimit, want: "exceeds the record limit of 1 MiB"},
		{name: "zstd/long record after a turn", zstd: true,
			tail: appendFrame(hostile.Text(hostile.Turn(5, 2)), title(10), hostile.Repeat('a', 2*mib), hostile.Text("\"}}\n")),
			stat: seam.ErrLimit, read: seam.ErrLimit, write: seam.ErrLimit, want: "exceeds the record limit of 1 MiB"},
		// Empty lines: an uncommitted tail, whatever its length.
		{name: "zstd/empty lines", zstd: true, tail: appendFrame(hostile.Repeat('\n', 6*mib)), uncommitted: -1},
		{name: "zstd/empty lines streamed", zstd: true, tail: appendFrame(hostile.Repeat('\n', 24*mib)), uncommitted: -1},
		{name: "zstd/empty lines over the frame limit", zstd: true, tail: appendFrame(hostile.Repeat('\n', 256*mib)),
			stat: seam.ErrLimit, read: seam.ErrLimit, write: seam.ErrLimit, want: "more than 32 MiB of content, the frame limit"},
		{name: "zstd/empty lines in frames", zstd: true, tail: func(path string) error {
			for range 6 {
				if err := appendFrame(hostile.Repeat('\n', 8*mib))(path); err != nil {
					return err
				}
			}
			return nil
		}, stat: seam.ErrLimit, want: "no valid record in the last"},
		// A frame that does not end on a record boundary.
		{name: "zstd/zeros under the frame limit", zstd: true, tail: appendFrame(hostile.Repeat(0, 6*mib)),
			stat: seam.ErrCorrupt, read: seam.ErrCorrupt, write: seam.ErrCorrupt, want: "does not end on a record boundary"},
		{name: "zstd/zeros over the memory limit", zstd: true, tail: appendFrame(hostile.Repeat(0, 20*mib)),
			stat: seam.ErrCorrupt, read: seam.ErrCorrupt, write: seam.ErrCorrupt, want: "does not end on a record boundary"},
		// Plain: a torn tail of any length is not a record.
		{name: "plain/torn tail", tail: func(path string) error { return hostile.Extend(path, 64*mib) }, torn: 64 * mib},
		{name: "plain/long record", tail: appendBytes(title(5), hostile.Repeat('a', 4*mib), hostile.Text("\"}}\n")),
			stat: seam.ErrLimit, read: seam.ErrLimit, write: seam.ErrLimit, want: "exceeds the record limit of 1 MiB"},
		{name: "plain/empty lines", tail: appendBytes(hostile.Repeat('\n', 16*mib)), uncommitted: 16 * mib},
		{name: "plain/junk lines", tail: appendBytes(hostile.Text(strings.Repeat("x\n", 4<<20))), uncommitted: 8 * mib},
	}
}

// TestHostileLogsBounded runs every read and write path over logs built
// to make a reader hold or decode far more than they store: each must end
// with the expected outcome, naming the record or frame at fault, within
// a bounded allocation and time, and leave the log as it was unless it
// repaired an uncommitted or torn tail.
func TestHostileLogsBounded(t *testing.T) {
	for _, c := range hostileCases() {
		t.Run(c.name, func(t *testing.T) {
			runHostile(t, c, hostileOpts, hostileHeap)
		})
	}
}

// peakHeap runs op and returns the most heap it held (sampled, with
// garbage not collected yet: about what the process's memory grows by)
// and the CPU time it took (which a loaded machine does not stretch).
func peakHeap(op func()) (peak int64, took time.Duration) {
	runtime.GC()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(sample)
	base := int64(sample[0].Value.Uint64())
	done := make(chan struct{})
	result := make(chan int64)
	go func() {
		var top int64
		for {
			metrics.Read(sample)
			top = max(top, int64(sample[0].Value.Uint64()))
			select {
			case <-done:
				result <- top
				return
			case <-time.After(200 * time.Microsecond):
			}
		}
	}()
	start := cputime.Now()
	op()
	took = cputime.Now() - start
	close(done)
	return max(<-result-base, 0), took
}

func runHostile(t *testing.T, c hostileCase, opts Options, heapBound int64) {
	ctx := context.Background()
	root := t.TempDir()
	path, err := hostile.Session(root, "s", c.zstd)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.tail(path); err != nil {
		t.Fatal(err)
	}
	opts.BackupDir = t.TempDir()
	s, _ := openStore(t, root, opts)
	before, _ := os.ReadFile(path)

	// bounded runs op, checks its peak heap and time, and returns its
	// error.
	bounded := func(what string, op func() error) error {
		t.Helper()
		var err error
		peak, took := peakHeap(func() { err = op() })
		if peak > heapBound {
			t.Errorf("%s: heap peaked at %d MiB, over %d MiB", what, peak>>20, heapBound>>20)
		}
		if took > 5*time.Second {
			t.Errorf("%s took %v of CPU", what, took)
		}
		return err
	}
	checkKind := func(what string, err, kind error) {
		t.Helper()
		switch {
		case kind == nil && err != nil:
			t.Errorf("%s: %v", what, err)
		case kind != nil && !errors.Is(err, kind):
			t.Errorf("%s: error %v, want %v", what, err, kind)
		case kind != nil && !strings.Contains(err.Error(), c.want):
			t.Errorf("%s: error %q does not say %q", what, err, c.want)
		}
	}

	var snap seam.Snapshot
	err = bounded("Stat", func() (err error) { snap, err = s.Stat(ctx, "s"); return err })
	checkKind("Stat", err, c.stat)
	if c.stat == nil && err == nil {
		if snap.EventCount != 5 || snap.Location.TornBytes != c.torn {
			t.Errorf("Stat: %d events, torn tail %d bytes; want 5 and %d", snap.EventCount, snap.Location.TornBytes, c.torn)
		}
		if u := snap.Location.UncommittedBytes; c.uncommitted < 0 && u == 0 || c.uncommitted >= 0 && u != c.uncommitted {
			t.Errorf("Stat: uncommitted tail %d bytes, want %d", u, c.uncommitted)
		}
	}
	var entries []seam.Entry
	bounded("List", func() (err error) { entries, err = s.List(ctx); return err })
	if len(entries) != 1 {
		t.Fatalf("List: %d entries, want 1", len(entries))
	}
	checkKind("List entry", entries[0].Err, c.stat)

	h, err := s.Open(ctx, "s", seam.Read)
	checkKind("Open", err, c.stat)
	if err == nil {
		scan := func(opts seam.ScanOptions) (n int, err error) {
			for _, err := range h.Scan(ctx, opts) {
				if err != nil {
					return n, err
				}
				n++
			}
			return n, nil
		}
		var n int
		err := bounded("forward scan", func() (err error) { n, err = scan(seam.ScanOptions{}); return err })
		checkKind("forward scan", err, c.read)
		if n < 5 {
			t.Errorf("forward scan read %d events, want the 5 committed ones", n)
		}
		err = bounded("reverse scan", func() (err error) { n, err = scan(seam.ScanOptions{Reverse: true}); return err })
		if err == nil && n != 5 {
			t.Errorf("reverse scan read %d events, want 5", n)
		}
		// Budgeted scans end with the budget or succeed, and cost about
		// their budget.
		for _, o := range []seam.ScanOptions{{MaxBytes: 64 << 10}, {Reverse: true, MaxBytes: 64 << 10}} {
			var err error
			var m0, m1 runtime.MemStats
			runtime.ReadMemStats(&m0)
			_, err = scan(o)
			runtime.ReadMemStats(&m1)
			if err != nil && !errors.Is(err, seam.ErrScanBudget) && !errors.Is(err, c.read) {
				t.Errorf("scan %+v: %v", o, err)
			}
			if a := m1.TotalAlloc - m0.TotalAlloc; a > uint64(2*seam.ScanDecodedFactor*o.MaxBytes+4*mib) {
				t.Errorf("scan %+v allocated %d KiB", o, a>>10)
			}
		}
		bounded("raw", func() error {
			for _, err := range h.(seam.RawReader).Raw(ctx) {
				if err != nil {
					return err
				}
			}
			return nil
		})
		h.Close()
	}
	after, _ := os.ReadFile(path)
	if !bytes.Equal(before, after) {
		t.Fatalf("reading changed the log")
	}

	var w seam.Handle
	err = bounded("write open", func() (err error) { w, err = s.Open(ctx, "s", seam.Write); return err })
	if c.write != nil {
		checkKind("write open", err, c.write)
		if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
			t.Fatalf("a failed write open changed the log")
		}
		return
	}
	if err != nil {
		t.Fatalf("write open: %v", err)
	}
	defer w.Close()
	err = bounded("append", func() error {
		return w.Append(ctx, []seam.Event{{Type: "session/title", Seq: 5, Time: 1, Data: []byte(`{"title":"after"}`)}})
	})
	if err != nil {
		t.Fatalf("append: %v", err)
	}
	if got, err := scanAll(t, s, "s"); err != nil || len(got) != 6 {
		t.Fatalf("after the append: %d events, %v; want 6", len(got), err)
	}
}

// TestCancelStopsWork checks that every read and write path stops soon
// after its context is cancelled, inside a long decode or scan, and that a
// cancelled write open or append leaves the log and the backup directory
// as they were.
func TestCancelStopsWork(t *testing.T) {
	if testing.Short() {
		t.Skip("builds logs that take seconds to read")
	}
	zroot, proot := t.TempDir(), t.TempDir()
	title := `{"type":"session/title","seq":5,"time":1,"data":{"title":"t"}}` + "\n"
	// z: frames of empty lines just under the frame limit, which a full
	// read decodes twice each, then a valid row (so that the tail search
	// stops at once); z2: the same without it (the tail search decodes).
	var paths []string
	for _, id := range []string{"z", "z2"} {
		path, err := hostile.Session(zroot, id, true)
		if err != nil {
			t.Fatal(err)
		}
		for range 12 {
			if err := hostile.Append(path, hostile.Frame(nil, hostile.Repeat('\n', DefaultMaxFrameBytes-1))); err != nil {
				t.Fatal(err)
			}
		}
		if id == "z" {
			if err := hostile.Append(path, hostile.Frame(nil, hostile.Text(title))); err != nil {
				t.Fatal(err)
			}
		}
		paths = append(paths, path)
	}
	// p: a sparse line of 8 GiB of zeros, then a valid row; p2: the same
	// line as a torn tail.
	for _, id := range []string{"p", "p2"} {
		path, err := hostile.Session(proot, id, false)
		if err != nil {
			t.Fatal(err)
		}
		if err := hostile.Extend(path, 8<<30); err != nil {
			t.Fatal(err)
		}
		if id == "p" {
			if err := hostile.Append(path, []byte("\n"+title)); err != nil {
				t.Fatal(err)
			}
		}
		paths = append(paths, path)
	}
	backups := t.TempDir()
	zs, _ := openStore(t, zroot, Options{BackupDir: backups})
	ps, _ := openStore(t, proot, Options{BackupDir: backups})
	var before []int64
	for _, p := range paths {
		fi, _ := os.Stat(p)
		before = append(before, fi.Size())
	}

	// stopped runs op with a context cancelled after a moment and checks
	// that it returns a cancellation within 100 ms of it. On a loaded
	// machine a goroutine may wait that long for a CPU: the best of three
	// tries counts.
	stopped := func(what string, op func(ctx context.Context) error) {
		t.Helper()
		best := time.Hour
		for try := 0; try < 3 && best > 100*time.Millisecond; try++ {
			ctx, cancel := context.WithCancel(context.Background())
			var at time.Time
			timer := time.AfterFunc(50*time.Millisecond, func() { at = time.Now(); cancel() })
			err := op(ctx)
			end := time.Now()
			if timer.Stop() {
				t.Errorf("%s returned before the cancellation (%v): the case is too fast to test it", what, err)
				return
			}
			if !errors.Is(err, context.Canceled) {
				t.Errorf("%s: %v, want context.Canceled", what, err)
				return
			}
			best = min(best, end.Sub(at))
		}
		if best > 100*time.Millisecond {
			t.Errorf("%s returned %v after the cancellation", what, best)
		}
	}
	scan := func(s *Store, id string, o seam.ScanOptions) func(ctx context.Context) error {
		return func(ctx context.Context) error {
			h, err := s.Open(ctx, id, seam.Read)
			if err != nil {
				return err
			}
			defer h.Close()
			for _, err := range h.Scan(ctx, o) {
				if err != nil {
					return err
				}
			}
			return nil
		}
	}
	stat := func(s *Store, id string) func(ctx context.Context) error {
		return func(ctx context.Context) error { _, err := s.Stat(ctx, id); return err }
	}
	list := func(s *Store) func(ctx context.Context) error {
		return func(ctx context.Context) error {
			entries, err := s.List(ctx)
			for _, e := range entries {
				if e.Err != nil && !errors.Is(e.Err, seam.ErrLimit) {
					return e.Err
				}
			}
			return err
		}
	}
	write := func(s *Store, id string) func(ctx context.Context) error {
		return func(ctx context.Context) error {
			w, err := s.Open(ctx, id, seam.Write)
			if err == nil {
				w.Close()
			}
			return err
		}
	}
	stopped("zstd forward scan", scan(zs, "z", seam.ScanOptions{}))
	stopped("zstd reverse scan", scan(zs, "z", seam.ScanOptions{Reverse: true}))
	stopped("zstd stat", stat(zs, "z2"))
	stopped("zstd list", list(zs))
	stopped("zstd write open", write(zs, "z"))
	stopped("plain forward scan", scan(ps, "p", seam.ScanOptions{}))
	stopped("plain stat", stat(ps, "p2"))
	stopped("plain list", list(ps))
	stopped("plain write open", write(ps, "p"))
	for i, p := range paths {
		if fi, _ := os.Stat(p); fi.Size() != before[i] {
			t.Errorf("%s changed", p)
		}
	}
	if entries, _ := os.ReadDir(backups); len(entries) != 0 {
		t.Errorf("backups left: %v", entries)
	}
}

// TestRawKeepsEmptyLines: raw records, concatenated, are the log's text,
// runs of empty lines included (served in slices, not a record per line),
// with each record's Offset where its text starts.
func TestRawKeepsEmptyLines(t *testing.T) {
	ctx := context.Background()
	for _, zstd := range []bool{false, true} {
		root := t.TempDir()
		path, err := hostile.Session(root, "s", zstd)
		if err != nil {
			t.Fatal(err)
		}
		run := strings.Repeat("\n", 70000) // longer than one slice
		body := hostile.Turn(0, 1) + "\n\n\n" + hostile.Turn(5, 2) + run + hostile.Turn(10, 3)
		text := hostile.Header("s") + body
		var log []byte
		if zstd { // the header in a frame of its own, as dsh writes it
			log = hostile.Frame(hostile.Frame(nil, hostile.Text(hostile.Header("s"))), hostile.Text(body))
		} else {
			log = []byte(text)
		}
		if err := os.WriteFile(path, log, 0o644); err != nil {
			t.Fatal(err)
		}
		s, _ := openStore(t, root, Options{})
		h, err := s.Open(ctx, "s", seam.Read)
		if err != nil {
			t.Fatal(err)
		}
		var raw bytes.Buffer
		for r, err := range h.(seam.RawReader).Raw(ctx) {
			if err != nil {
				t.Fatal(err)
			}
			if r.Offset != int64(raw.Len()) {
				t.Fatalf("zstd %v: raw record at %d has Offset %d", zstd, raw.Len(), r.Offset)
			}
			raw.Write(r.Line)
		}
		h.Close()
		if raw.String() != text {
			t.Errorf("zstd %v: raw records hold %d bytes, the log %d", zstd, raw.Len(), len(text))
		}
	}
}
