package zstdframe

import (
	"bytes"
	"encoding/binary"
	"github.com/dshctl/dshctl/internal/cputime"
	"testing"
	"time"
)

// sameLast fails t unless LastFrame and Reverse.LastFrame gave the same
// frame, torn frame, error and kept content.
func sameLast(t *testing.T, end int64, want Last, wantErr error, wantContent []byte, got Last, gotErr error, gotContent []byte) {
	t.Helper()
	if got != want || (gotErr == nil) != (wantErr == nil) || (gotErr != nil && gotErr.Error() != wantErr.Error()) {
		t.Fatalf("end %d: Reverse.LastFrame = %+v, %v; LastFrame = %+v, %v", end, got, gotErr, want, wantErr)
	}
	if (gotContent == nil) != (wantContent == nil) || !bytes.Equal(gotContent, wantContent) {
		t.Fatalf("end %d: Reverse.LastFrame kept %q; LastFrame kept %q", end, gotContent, wantContent)
	}
}

// checkReverse checks that a Reverse gives, call for call, what LastFrame
// gives: along a reverse scan (each end the offset of the frame found
// before, as internal/jsonl calls it), and along the ends in ends, which
// may go up and down.
func checkReverse(t *testing.T, d1, d2 *Decoder, data []byte, window, keep int64, ends []int64) {
	r, n := bytes.NewReader(data), int64(len(data))
	var c1, c2 []byte
	opts := func(d *Decoder, c *[]byte) LastOptions {
		return LastOptions{Window: window, Decoder: d, KeepContent: keep, Content: c}
	}
	check := func(rv *Reverse, end int64) (Last, error) {
		want, wantErr := LastFrame(r, end, opts(d1, &c1))
		got, gotErr := rv.LastFrame(end)
		sameLast(t, end, want, wantErr, c1, got, gotErr, c2)
		return want, wantErr
	}
	rv, err := NewReverse(r, n, opts(d2, &c2))
	if err != nil {
		t.Fatal(err)
	}
	for end, steps := n, 0; steps < 1000; steps++ {
		last, err := check(rv, end)
		if err != nil || last.Frame.Offset >= end || last.Frame.Offset == 0 {
			break
		}
		end = last.Frame.Offset
	}
	rv.Close()
	rv, err = NewReverse(r, n, opts(d2, &c2))
	if err != nil {
		t.Fatal(err)
	}
	defer rv.Close()
	for _, end := range ends {
		check(rv, end)
	}
}

// endsFrom derives a sequence of ends within [0, n] from b.
func endsFrom(b []byte, n int64) []int64 {
	var ends []int64
	for len(b) >= 2 && len(ends) < 16 {
		ends = append(ends, int64(binary.LittleEndian.Uint16(b))%(n+1))
		b = b[2:]
	}
	return ends
}

func FuzzReverse(f *testing.F) {
	addSeeds(f, func(b []byte) {
		f.Add(b, uint16(0), uint8(0), []byte(nil))
		f.Add(b, uint16(300), uint8(3), []byte{0xff, 0xff, 9, 0, 40, 0})
	})
	d1, d2 := newTestDecoder(f), newTestDecoder(f)
	defer func(c int64) { firstChunk = c }(firstChunk)
	f.Fuzz(func(t *testing.T, data []byte, window uint16, chunk uint8, ends []byte) {
		// A small first chunk makes the searches of small inputs step,
		// grow their tail and meet the window, as large logs do.
		firstChunk = 64 << 10
		if chunk > 0 {
			firstChunk = int64(chunk)
		}
		keep := int64(1 << 20)
		if window%3 == 1 {
			keep = int64(window % 64) // some content too large to keep
		}
		// CPU time, since a loaded machine stretches wall time tenfold.
		start := cputime.Now()
		checkReverse(t, d1, d2, data, int64(window), keep, endsFrom(ends, int64(len(data))))
		if d := cputime.Now() - start; d > 2*time.Second {
			t.Fatalf("%d bytes took %v of CPU", len(data), d)
		}
	})
}

// TestReverseFixtures runs the reverse scan of every fixture log, whole
// and cut at every frame boundary and at odd places, with several search
// steps.
func TestReverseFixtures(t *testing.T) {
	d1, d2 := newTestDecoder(t), newTestDecoder(t)
	defer func(c int64) { firstChunk = c }(firstChunk)
	seeds := 0
	addSeeds(t, func(b []byte) {
		seeds++
		n := int64(len(b))
		for _, chunk := range []int64{64 << 10, 1000, 37, 1} {
			firstChunk = chunk
			for _, window := range []int64{0, 4096, 100} {
				checkReverse(t, d1, d2, b, window, 1<<20, []int64{n, n / 2, max(0, n-1), n, min(n, 7), n / 3, 0, n})
			}
		}
		frames, _, _ := Walk(bytes.NewReader(b), n)
		for _, fr := range frames {
			firstChunk = 64 << 10
			checkReverse(t, d1, d2, b[:fr.End()], 0, 1<<20, nil)
		}
	})
	if seeds == 0 {
		t.Fatal("no seeds")
	}
}

// TestReverseNested checks the rule against a complete frame stored
// verbatim in another frame's data, and that the walker steps over it as
// LastFrame does.
func TestReverseNested(t *testing.T) {
	inner := AppendFrame(nil, []byte("inner\n"))
	outer := rawFrame(cat(inner, []byte("\n")))
	data := cat(AppendFrame(nil, []byte("h\n")), outer, AppendFrame(nil, []byte("a\n")), outer)
	r, n := bytes.NewReader(data), int64(len(data))
	frames, _, err := Walk(r, n)
	if err != nil {
		t.Fatal(err)
	}
	rv, err := NewReverse(r, n, LastOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer rv.Close()
	end := n
	for i := len(frames) - 1; i >= 0; i-- {
		last, err := rv.LastFrame(end)
		if err != nil || last.Frame != frames[i] || last.Torn.Size != 0 {
			t.Fatalf("step %d: %+v, %v; want %+v", i, last, err, frames[i])
		}
		end = last.Frame.Offset
	}
	d1, d2 := newTestDecoder(t), newTestDecoder(t)
	checkReverse(t, d1, d2, data, 0, 1<<20, []int64{n, 3, n - 1})
}
