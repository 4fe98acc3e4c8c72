package jsonl

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dshctl/dshctl/internal/jsonl/zstdframe"
)

// memFile is a log in memory that notes the furthest byte read.
type memFile struct {
	file
	b   []byte
	end atomic.Int64
}

func (m *memFile) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 || off >= int64(len(m.b)) {
		return 0, io.EOF
	}
	n := copy(p, m.b[off:])
	for e := off + int64(n); ; {
		cur := m.end.Load()
		if e <= cur || m.end.CompareAndSwap(cur, e) {
			break
		}
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// testContent is n bytes of lines of pseudo-random hex (which compress
// poorly, so that frames keep about their size), with a run of empty
// lines now and then.
func testContent(r *rand.Rand, n int) []byte {
	const hex = "0123456789abcdef"
	b := make([]byte, 0, n)
	for len(b) < n {
		if r.IntN(8) == 0 {
			for range min(1+r.IntN(5), n-len(b)) {
				b = append(b, '\n')
			}
			continue
		}
		k := min(20+r.IntN(300), n-len(b)-1)
		if k <= 0 {
			b = append(b, '\n')
			continue
		}
		b = append(b, `{"t":"`...)
		for range k {
			b = append(b, hex[r.IntN(16)])
		}
		b = append(b, "\"}\n"...)
	}
	return b
}

// readAll reads every record of a log of bytes b from the start, as the
// prefetching reader (a read without a budget) or the sequential one,
// continuing after an error until limit errors.
func readAll(t *testing.T, b []byte, lim limits, prefetch bool) (recs []string, errs []string, torn int64) {
	t.Helper()
	l := &logFile{f: &memFile{b: b}, id: "s", enc: Zstd, decs: &decoderPool{}, lim: lim}
	bud := budget{phys: 1 << 62}
	if prefetch {
		bud = budget{}
	}
	br, err := l.newBodyReader(context.Background(), position{}, int64(len(b)), bud)
	if err != nil {
		t.Fatal(err)
	}
	defer br.close()
	if has := br.(*zstdReader).pf != nil; has != prefetch {
		t.Fatalf("prefetcher %v, want %v", has, prefetch)
	}
	for {
		rec, err := br.next()
		if err == io.EOF {
			return recs, errs, br.torn()
		}
		if err != nil {
			// A reader stops at its first error; what follows it is
			// not served.
			return recs, append(errs, fmt.Sprintf("%T %v", err, err)), br.torn()
		}
		recs = append(recs, fmt.Sprintf("%q %d %d %d %d %d %d %d %d %v", rec.line, rec.size, rec.lines, rec.off,
			rec.lineNo, rec.frame, rec.frameOff, rec.frameSize, rec.frameText, rec.first))
	}
}

// testLog builds a zstd log of frames of the given content sizes; damage
// edits the bytes of frame i, when not nil.
func testLog(seed uint64, sizes []int, damage func(i int, frame []byte) []byte) []byte {
	r := rand.New(rand.NewPCG(seed, 1))
	var log []byte
	for i, n := range sizes {
		frame := zstdframe.AppendFrame(nil, testContent(r, n))
		if damage != nil {
			frame = damage(i, frame)
		}
		log = append(log, frame...)
	}
	return log
}

func repeatSizes(n, size int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = size
	}
	return s
}

// TestPrefetchSameAsSequential checks that the prefetching read, whose
// frames decode on several goroutines, gives the records, errors and torn
// tail of the sequential read, in order, on logs whole and damaged.
func TestPrefetchSameAsSequential(t *testing.T) {
	mixed := make([]int, 300)
	r := rand.New(rand.NewPCG(7, 7))
	for i := range mixed {
		mixed[i] = 100 + r.IntN(40<<10)
		if i%50 == 0 {
			mixed[i] = 300<<10 + r.IntN(300<<10)
		}
	}
	// at replaces frame i of a log with the frame of content.
	at := func(i int, content []byte) func(int, []byte) []byte {
		return func(j int, f []byte) []byte {
			if j == i {
				return zstdframe.AppendFrame(nil, content)
			}
			return f
		}
	}
	flip := func(i int) func(int, []byte) []byte {
		return func(j int, f []byte) []byte {
			if j == i {
				f[len(f)/2] ^= 0x55
			}
			return f
		}
	}
	longLine := append(bytes.Repeat([]byte("x"), 100<<10), '\n')
	lim := limits{record: DefaultMaxRecordBytes, frame: DefaultMaxFrameBytes}
	cases := []struct {
		name string
		log  []byte
		lim  limits
		// fails: the read ends with an error (else at the end, or a
		// torn tail).
		fails bool
	}{
		{"small frames", testLog(1, repeatSizes(400, 8<<10), nil), lim, false},
		{"mixed sizes", testLog(2, mixed, nil), lim, false},
		{"one frame", testLog(3, []int{50 << 10}, nil), lim, false},
		{"damaged frame midway", testLog(4, repeatSizes(400, 8<<10), flip(300)), lim, true},
		{"damaged first frame", testLog(5, repeatSizes(100, 8<<10), flip(0)), lim, true},
		{"frame over the frame limit midway", testLog(6, repeatSizes(300, 8<<10), at(250, bytes.Repeat([]byte("{}\n"), 150<<10))),
			limits{record: 64 << 10, frame: 256 << 10}, true},
		{"record over the record limit midway", testLog(6, repeatSizes(300, 8<<10), at(250, longLine)),
			limits{record: 64 << 10, frame: DefaultMaxFrameBytes}, true},
		{"torn tail", func() []byte { b := testLog(7, repeatSizes(300, 8<<10), nil); return b[:len(b)-2000] }(), lim, false},
		{"garbage midway", func() []byte {
			b := testLog(8, repeatSizes(300, 8<<10), nil)
			return append(append(b, "not a frame at all"...), testLog(9, repeatSizes(3, 1000), nil)...)
		}(), lim, true},
		{"frame without a last newline", testLog(10, repeatSizes(300, 8<<10), at(250, []byte(`{"no":"newline"}`))), lim, true},
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, c := range cases {
		for _, procs := range []int{1, 4} {
			t.Run(fmt.Sprintf("%s/procs=%d", c.name, procs), func(t *testing.T) {
				runtime.GOMAXPROCS(procs)
				want, wantErrs, wantTorn := readAll(t, c.log, c.lim, false)
				got, gotErrs, gotTorn := readAll(t, c.log, c.lim, true)
				if len(got) != len(want) {
					t.Errorf("%d records, want %d", len(got), len(want))
				}
				for i := range min(len(got), len(want)) {
					if got[i] != want[i] {
						t.Fatalf("record %d:\n got %.200s\nwant %.200s", i, got[i], want[i])
					}
				}
				if (len(wantErrs) > 0) != c.fails {
					t.Errorf("sequential read: errors %q, want failure %v", wantErrs, c.fails)
				}
				if fmt.Sprint(gotErrs) != fmt.Sprint(wantErrs) || gotTorn != wantTorn {
					t.Errorf("errors %q torn %d, want %q torn %d", gotErrs, gotTorn, wantErrs, wantTorn)
				}
			})
		}
	}
}

// checkGoroutines fails t unless the goroutine count comes down to base
// (goroutines may take a moment to exit after their work ends).
func checkGoroutines(t *testing.T, base int) {
	t.Helper()
	n := runtime.NumGoroutine()
	for deadline := time.Now().Add(2 * time.Second); n > base && time.Now().Before(deadline); n = runtime.NumGoroutine() {
		time.Sleep(5 * time.Millisecond)
	}
	if n > base {
		buf := make([]byte, 1<<16)
		t.Errorf("%d goroutines after close, want %d:\n%s", n, base, buf[:runtime.Stack(buf, true)])
	}
}

// TestPrefetchBoundedAndClosed checks that a prefetching read whose
// consumer stops decodes a bounded number of frames ahead, and that
// closing it midway, or cancelling its context, ends its goroutines.
func TestPrefetchBoundedAndClosed(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	runtime.GOMAXPROCS(4)
	const frameSize = 200 << 10
	b := testLog(11, repeatSizes(100, frameSize), nil)
	lim := limits{record: DefaultMaxRecordBytes, frame: DefaultMaxFrameBytes}

	// open starts a read; its close closes the pool of decoders too, whose
	// idle decoders have goroutines of their own.
	open := func(ctx context.Context) (*memFile, bodyReader, func()) {
		t.Helper()
		m := &memFile{b: b}
		pool := &decoderPool{}
		l := &logFile{f: m, id: "s", enc: Zstd, decs: pool, lim: lim}
		br, err := l.newBodyReader(ctx, position{}, int64(len(b)), budget{})
		if err != nil {
			t.Fatal(err)
		}
		return m, br, func() { br.close(); pool.close() }
	}

	t.Run("bounded", func(t *testing.T) {
		base := runtime.NumGoroutine()
		m, br, closeAll := open(context.Background())
		// Past the first decodeAheadAfter bytes, so that every decoder runs.
		var last physRecord
		for last.frameOff < 2*decodeAheadAfter {
			rec, err := br.next()
			if err != nil {
				t.Fatal(err)
			}
			last = rec
		}
		time.Sleep(300 * time.Millisecond)
		// The walk holds the frames decoding or waiting beyond the
		// reader's, and reads at most walkAhead bytes past the last.
		ahead := m.end.Load() - last.frameOff
		if limit := int64(maxDecoders()+2)*frameSize + walkAhead; ahead > limit {
			t.Errorf("read %d bytes ahead of the reader, want at most %d", ahead, limit)
		}
		if m.end.Load() >= int64(len(b)) {
			t.Errorf("the walk read the whole log while the reader waited")
		}
		closeAll()
		checkGoroutines(t, base)
	})

	t.Run("cancelled", func(t *testing.T) {
		base := runtime.NumGoroutine()
		ctx, cancel := context.WithCancel(context.Background())
		_, br, closeAll := open(ctx)
		for range 10 {
			if _, err := br.next(); err != nil {
				t.Fatal(err)
			}
		}
		cancel()
		// The frames decoded before the cancellation may be served;
		// then the read fails with it.
		var err error
		var records int
		for ; err == nil; records++ {
			_, err = br.next()
		}
		if !errors.Is(err, context.Canceled) {
			t.Errorf("after the cancellation: %v, want context.Canceled", err)
		}
		if limit := (maxDecoders() + 2) * frameSize / 20; records > limit {
			t.Errorf("%d records served after the cancellation, want at most %d", records, limit)
		}
		closeAll()
		checkGoroutines(t, base)
	})

	t.Run("closed before reading", func(t *testing.T) {
		base := runtime.NumGoroutine()
		_, _, closeAll := open(context.Background())
		closeAll()
		checkGoroutines(t, base)
	})
}
