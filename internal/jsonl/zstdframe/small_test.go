package zstdframe

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// sameResult fails t unless a fast-path result (got, err) is the stream
// path's (want, wantErr): the same content, nil or not, and the same error
// message and kind.
func sameResult(t *testing.T, what string, got []byte, err error, want []byte, wantErr error) {
	t.Helper()
	if (err == nil) != (wantErr == nil) || err != nil && err.Error() != wantErr.Error() {
		t.Fatalf("%s: error %v, stream path %v", what, err, wantErr)
	}
	for _, kind := range []error{ErrCorrupt, ErrTooLarge, ErrTorn} {
		if errors.Is(err, kind) != errors.Is(wantErr, kind) {
			t.Fatalf("%s: error %v, stream path %v: kinds differ", what, err, wantErr)
		}
	}
	if !bytes.Equal(got, want) || (got == nil) != (want == nil) {
		t.Fatalf("%s: %d bytes (nil %t), stream path %d (nil %t)", what, len(got), got == nil, len(want), want == nil)
	}
}

// comparePaths checks that verify, verifyKeep and DecodeAll of frame f of
// r return what the stream path returns, for keeps and limits up to bound
// around the content length and extra, and reports whether decodeSmall
// decoded f. The bound keeps crafted frames of huge content in check.
func comparePaths(t *testing.T, d *Decoder, r io.ReaderAt, f Frame, bound int64, extra ...int64) bool {
	t.Helper()
	full, fullErr := d.decodeAllStream(nil, r, f, bound)
	small, ok := d.decodeSmall(r, f)
	if ok && (fullErr != nil || !bytes.Equal(small, full)) {
		t.Fatalf("decodeSmall decoded %d bytes; stream path %d bytes, %v", len(small), len(full), fullErr)
	}
	err, wantErr := d.verify(r, f), d.verifyStream(r, f)
	sameResult(t, "verify", nil, err, nil, wantErr)
	sizes := []int64{-1, 0, bound}
	for _, n := range extra {
		sizes = append(sizes, min(n, bound))
	}
	if fullErr == nil {
		n := int64(len(full))
		sizes = append(sizes, n-1, n)
	}
	for _, n := range sizes {
		got, err := d.verifyKeep(r, f, n)
		want, wantErr := d.verifyKeepStream(r, f, n)
		sameResult(t, fmt.Sprintf("verifyKeep(%d)", n), got, err, want, wantErr)
		if f.ContentSize > n {
			continue // DecodeAll fails before it takes either path
		}
		got, err = d.DecodeAll(r, f, n)
		want, wantErr = d.decodeAllStream(nil, r, f, n)
		sameResult(t, fmt.Sprintf("DecodeAll(%d)", n), got, err, want, wantErr)
	}
	return ok
}

// frameOf encodes content with the given encoder options.
func frameOf(tb testing.TB, content []byte, opts ...zstd.EOption) []byte {
	tb.Helper()
	e, err := zstd.NewWriter(nil, append([]zstd.EOption{zstd.WithEncoderConcurrency(1)}, opts...)...)
	if err != nil {
		tb.Fatal(err)
	}
	defer e.Close()
	return e.EncodeAll(content, nil)
}

// patch returns a copy of b with b[i] set to v.
func patch(b []byte, i int, v byte) []byte {
	b = bytes.Clone(b)
	b[i] = v
	return b
}

// rleFrame is a checksummed frame with a 2 MiB window and no content size
// of n RLE blocks of 128 KiB of 'x'.
func rleFrame(n int) []byte {
	b := frameHeader(0x04, 0x58)
	for i := range n {
		b = cat(b, blockHeader(i == n-1, 1, maxBlockSize), []byte("x"))
	}
	return cat(b, checksumOf(bytes.Repeat([]byte("x"), n*maxBlockSize)))
}

type smallCase struct {
	name string
	data []byte // one frame
	fast bool   // decodeSmall decodes it
	kind error  // verify's error kind; nil when it decodes
}

// framed returns data, a frame, after checking that its header is as ok
// wants.
func framed(tb testing.TB, data []byte, ok func(Frame) bool) []byte {
	tb.Helper()
	f, err := ParseFrame(bytes.NewReader(data), 0, int64(len(data)))
	if err != nil || !ok(f) {
		tb.Fatalf("frame %+v, %v", f, err)
	}
	return data
}

// smallCases returns single frames at the edges of decodeSmall.
func smallCases(tb testing.TB) []smallCase {
	text := jsonl(3 << 10)
	sized := AppendFrame(nil, text)
	// Content of 3000 bytes in blocks of 1000, the last a copy of the
	// first: a match 2000 bytes back, in a frame that states a 4 KiB
	// window (byte 5), patched to 2 KiB and to 1 KiB.
	x := pseudoRandom(1000, 1)
	far := streamFrame(tb, cat(x, pseudoRandom(1000, 2), x), 4<<10, 1000, 1000)
	if len(far) > 2100 || far[5] != 0x10 {
		tb.Fatalf("far-match frame of %d bytes, window descriptor %#x", len(far), far[5])
	}
	// Descriptor 0x44: window byte at 5, then the content size in 2 bytes
	// at 6, plus 256.
	if sized[4] != 0x44 {
		tb.Fatalf("frame header descriptor %#x", sized[4])
	}
	longer, shorter := patch(sized, 6, sized[6]+1), patch(sized, 6, sized[6]-1)
	badCRC := patch(sized, len(sized)-1, sized[len(sized)-1]^1)
	repetitive := bytes.Repeat([]byte(`{"type":"tool/result","data":{}}`+"\n"), 16<<10)
	return []smallCase{
		{"with content size", sized, true, nil},
		{"without content size", framed(tb, streamFrame(tb, text, 2<<20), func(f Frame) bool { return f.ContentSize < 0 }), true, nil},
		{"multiple blocks", framed(tb, streamFrame(tb, text, 2<<20, 1000, 1000), func(f Frame) bool { return f.Blocks > 2 }), true, nil},
		{"empty", emptyFrame, true, nil},
		{"raw", rawFrame([]byte("raw\n")), true, nil},
		{"rle", cat(frameHeader(0x04, 0x00), blockHeader(true, 1, 1000), []byte("x"), checksumOf(bytes.Repeat([]byte("x"), 1000))), true, nil},
		{"incompressible", AppendFrame(nil, pseudoRandom(3<<10, 7)), true, nil},
		{"no checksum", framed(tb, frameOf(tb, text, zstd.WithEncoderCRC(false)), func(f Frame) bool { return !f.HasChecksum }), true, nil},
		{"single segment", framed(tb, frameOf(tb, text, zstd.WithSingleSegment(true)), func(f Frame) bool { return f.SingleSegment }), true, nil},
		{"small window", framed(tb, streamFrame(tb, jsonl(900), 1<<10), func(f Frame) bool { return f.WindowSize == 1<<10 }), true, nil},
		{"content over window", streamFrame(tb, text, 1<<10), false, nil},
		{"far match within window", far, true, nil},
		{"far match, content over window", patch(far, 5, 0x08), false, nil},
		{"far match beyond window", patch(far, 5, 0x00), false, ErrCorrupt},
		{"content size too large", longer, false, ErrCorrupt},
		{"content size too small", shorter, false, ErrCorrupt},
		{"bad checksum", badCRC, false, ErrCorrupt},
		{"damaged block", patch(sized, len(sized)/2, sized[len(sized)/2]^0xFF), false, ErrCorrupt},
		{"content over guess", streamFrame(tb, repetitive, 2<<20), false, nil},
		{"content over 1 MiB", rleFrame(12), false, nil},
		{"frame over 128 KiB", AppendFrame(nil, pseudoRandom(200<<10, 3)), false, nil},
		{"16 MiB window", cat(frameHeader(0x04, 0x70), blockHeader(true, 0, 3), []byte("ab\n"), checksumOf([]byte("ab\n"))), false, ErrTooLarge},
	}
}

// TestDecodeSmall checks where decodeSmall applies, and that the fast
// path and the stream path agree there and around it.
func TestDecodeSmall(t *testing.T) {
	for _, c := range smallCases(t) {
		t.Run(c.name, func(t *testing.T) {
			// A new Decoder: decodeSmall uses all of the output buffer
			// earlier frames grew.
			d := newTestDecoder(t)
			r := bytes.NewReader(c.data)
			f, err := ParseFrame(r, 0, int64(len(c.data)))
			if err != nil || f.Size != int64(len(c.data)) {
				t.Fatalf("ParseFrame = %+v, %v", f, err)
			}
			if fast := comparePaths(t, d, r, f, math.MaxInt64, 100, 4<<10, 1<<20); fast != c.fast {
				t.Errorf("decodeSmall decoded: %t, want %t", fast, c.fast)
			}
			if err := d.verify(r, f); c.kind == nil && err != nil || c.kind != nil && !errors.Is(err, c.kind) {
				t.Errorf("verify: %v, want %v", err, c.kind)
			}
			if cap(d.out) > maxSmallContent || cap(d.in) > maxSmallFrame {
				t.Errorf("buffers of %d and %d bytes", cap(d.in), cap(d.out))
			}
			// From a loaded tail, as LastFrame and Reverse decode.
			s := newSource(r, f.Size)
			if err := s.loadTail(0); err != nil {
				t.Fatal(err)
			}
			defer s.releaseTail()
			if fast := comparePaths(t, d, s, f, math.MaxInt64); fast != c.fast {
				t.Errorf("from the tail, decodeSmall decoded: %t, want %t", fast, c.fast)
			}
			// A frame that no longer matches the file, and read failures.
			torn := bytes.NewReader(c.data[:len(c.data)-1])
			if comparePaths(t, d, torn, f, math.MaxInt64) {
				t.Error("decodeSmall decoded a torn frame")
			}
			fail := errReaderAt{r: r, off: f.Size / 2, err: errors.New("disk on fire")}
			if comparePaths(t, d, fail, f, math.MaxInt64) {
				t.Error("decodeSmall decoded despite a read failure")
			}
		})
	}
}

// TestDecodeSmallOverflow shows why decodeSmall trusts no failure: content
// that overruns the output buffer inside a block fails as corruption, not
// with ErrDecoderSizeExceeded, though the frame is sound.
func TestDecodeSmallOverflow(t *testing.T) {
	d := newTestDecoder(t)
	data := streamFrame(t, jsonl(200<<10), 2<<20)
	_, err := d.za.DecodeAll(data, make([]byte, 0, 1000))
	if err == nil || errors.Is(err, zstd.ErrDecoderSizeExceeded) {
		t.Fatalf("DecodeAll into 1000 bytes: %v", err)
	}
	f, err := ParseFrame(bytes.NewReader(data), 0, int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	if err := d.verifyStream(bytes.NewReader(data), f); err != nil {
		t.Fatal(err)
	}
}

// TestDecodeSmallKeepLimit checks the keep and limit boundaries, with and
// without a content size in the header, and that the content handed out
// does not change when the Decoder is used again.
func TestDecodeSmallKeepLimit(t *testing.T) {
	d := newTestDecoder(t)
	content := jsonl(3 << 10)
	n := int64(len(content))
	parse := func(data []byte) (*bytes.Reader, Frame) {
		r := bytes.NewReader(data)
		f, err := ParseFrame(r, 0, int64(len(data)))
		if err != nil {
			t.Fatal(err)
		}
		return r, f
	}
	other, otherFrame := parse(AppendFrame(nil, jsonl(5<<10)))
	for _, data := range [][]byte{AppendFrame(nil, content), streamFrame(t, content, 2<<20)} {
		r, f := parse(data)
		if got, err := d.verifyKeep(r, f, n); err != nil || !bytes.Equal(got, content) {
			t.Fatalf("verifyKeep(len): %d bytes, %v", len(got), err)
		}
		if got, err := d.verifyKeep(r, f, n-1); err != nil || got != nil {
			t.Fatalf("verifyKeep(len-1): %d bytes, %v", len(got), err)
		}
		// keep+1 overflowed here once: nothing was read, nor verified.
		if got, err := d.verifyKeepStream(r, f, math.MaxInt64); err != nil || !bytes.Equal(got, content) {
			t.Fatalf("verifyKeepStream(MaxInt64): %d bytes, %v", len(got), err)
		}
		if got, err := d.verifyKeep(r, f, 0); err != nil || got != nil {
			t.Fatalf("verifyKeep(0): %d bytes, %v", len(got), err)
		}
		got, err := d.DecodeAll(r, f, n)
		if err != nil || !bytes.Equal(got, content) {
			t.Fatalf("DecodeAll(len): %d bytes, %v", len(got), err)
		}
		if _, err := d.DecodeAll(r, f, n-1); !errors.Is(err, ErrTooLarge) {
			t.Fatalf("DecodeAll(len-1): %v", err)
		}
		kept, err := d.verifyKeep(r, f, n)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := d.DecodeAll(other, otherFrame, 1<<20); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, content) || !bytes.Equal(kept, content) {
			t.Fatal("content changed when the Decoder decoded another frame")
		}
	}
	// Empty content is kept as an empty slice, not nil (not kept).
	r, f := parse(emptyFrame)
	if got, err := d.verifyKeep(r, f, 1); err != nil || got == nil || len(got) != 0 {
		t.Fatalf("verifyKeep of the empty frame: %q, %v", got, err)
	}
	if got, err := d.DecodeAll(r, f, 0); err != nil || got == nil || len(got) != 0 {
		t.Fatalf("DecodeAll of the empty frame: %q, %v", got, err)
	}
}

// FuzzDecodePaths checks that the fast path and the stream path agree on
// every frame of the input, read through an io.ReaderAt and from a loaded
// tail, and that neither writes to the input.
func FuzzDecodePaths(f *testing.F) {
	addSeeds(f, func(b []byte) { f.Add(b, int64(0)) })
	for _, c := range smallCases(f) {
		f.Add(c.data, int64(len(c.data)))
		f.Add(c.data[:len(c.data)*2/3], int64(-1))
	}
	d := newTestDecoder(f)
	f.Fuzz(func(t *testing.T, data []byte, n int64) {
		orig := bytes.Clone(data)
		r, size := bytes.NewReader(data), int64(len(data))
		s := newSource(r, size)
		if err := s.loadTail(0); err != nil {
			t.Fatal(err)
		}
		defer s.releaseTail()
		for fr := range Frames(r, size) {
			if fr.Size > 0 {
				// The bound is over maxSmallContent, so that the limits
				// tried cover the fast path's reach.
				comparePaths(t, d, r, fr, 2<<20, n)
				comparePaths(t, d, s, fr, 2<<20, n)
			}
		}
		if !bytes.Equal(data, orig) || !bytes.Equal(s.tail, orig) {
			t.Fatal("decoding changed the input")
		}
	})
}

// TestDecodeToOwnBuffer checks that DecodeTo decodes a small frame
// straight into the caller's buffer, not into the decoder's and then a
// copy; that the content it returns keeps the buffer's whole storage, so
// that a reader that gives it back for the next frame does not shrink it;
// and that it leaves klauspost room past the content for its fast copies.
func TestDecodeToOwnBuffer(t *testing.T) {
	d := newTestDecoder(t)
	var buf []byte
	for _, c := range []struct {
		n        int
		declared bool
	}{{300 << 10, true}, {100, false}, {2000, true}, {200 << 10, false}} {
		content := pseudoRandom(c.n, uint64(c.n))
		var frame []byte
		if c.declared {
			frame = AppendFrame(nil, content)
		} else {
			var b bytes.Buffer
			w, err := NewWriter(&b)
			if err != nil {
				t.Fatal(err)
			}
			w.Write(content)
			if err := w.EndFrame(&b); err != nil {
				t.Fatal(err)
			}
			frame = b.Bytes()
		}
		f, err := ParseFrame(bytes.NewReader(frame), 0, int64(len(frame)))
		if err != nil {
			t.Fatal(err)
		}
		if (f.ContentSize >= 0) != c.declared {
			t.Fatalf("content size %d, declared %t", f.ContentSize, c.declared)
		}
		before := cap(buf)
		got, err := d.DecodeTo(&buf, bytes.NewReader(frame), f, 1<<20)
		if err != nil || !bytes.Equal(got, content) {
			t.Fatalf("%d bytes: DecodeTo = %d bytes, %v", c.n, len(got), err)
		}
		if cap(d.out) != 0 {
			t.Errorf("%d bytes: decoded into the decoder's buffer (%d bytes), not the caller's", c.n, cap(d.out))
		}
		if &got[:1][0] != &buf[:1][0] || cap(got) != cap(buf) || cap(buf) < before {
			t.Errorf("%d bytes: content of %d bytes (%d of storage) is not the caller's buffer of %d", c.n, len(got), cap(got), cap(buf))
		}
		room := decodeSlack
		if !c.declared {
			room = maxBlockSize // the next block's worth
		}
		if cap(buf) < c.n+room {
			t.Errorf("%d bytes: buffer of %d bytes, want room for %d past the content", c.n, cap(buf), room)
		}
		buf = got[:0] // given back, as the prefetcher does
	}
}
