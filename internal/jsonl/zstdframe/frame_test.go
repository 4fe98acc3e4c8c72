package zstdframe

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

func TestHandmadeFrames(t *testing.T) {
	dec := newTestDecoder(t)
	x1000 := bytes.Repeat([]byte("x"), 1000)
	c300 := bytes.Repeat([]byte("abc\n"), 75)
	for _, tc := range []struct {
		name    string
		data    []byte
		want    Frame  // Offset 0; Size is len(data)
		content []byte // decoded content
	}{
		{
			name:    "RLE block",
			data:    cat(frameHeader(0x04, 0x00), blockHeader(true, 1, 1000), []byte("x"), checksumOf(x1000)),
			want:    Frame{HeaderSize: 6, ContentSize: -1, WindowSize: 1 << 10, HasChecksum: true, Blocks: 1},
			content: x1000,
		},
		{
			name: "raw, RLE and empty raw blocks",
			data: cat(frameHeader(0x04, 0x50), blockHeader(false, 0, 4), []byte("abc\n"),
				blockHeader(false, 1, 3), []byte("z"), blockHeader(false, 0, 0), blockHeader(true, 0, 1), []byte("\n"),
				checksumOf([]byte("abc\nzzz\n"))),
			want:    Frame{HeaderSize: 6, ContentSize: -1, WindowSize: 1 << 20, HasChecksum: true, Blocks: 4},
			content: []byte("abc\nzzz\n"),
		},
		{
			name:    "no checksum",
			data:    cat(frameHeader(0x00, 0x50), blockHeader(true, 0, 3), []byte("ab\n")),
			want:    Frame{HeaderSize: 6, ContentSize: -1, WindowSize: 1 << 20, Blocks: 1},
			content: []byte("ab\n"),
		},
		{
			name:    "window mantissa",
			data:    cat(frameHeader(0x04, 0x53), blockHeader(true, 0, 3), []byte("ab\n"), checksumOf([]byte("ab\n"))),
			want:    Frame{HeaderSize: 6, ContentSize: -1, WindowSize: 1<<20 + 3<<17, HasChecksum: true, Blocks: 1},
			content: []byte("ab\n"),
		},
		{
			name:    "single segment, 1-byte content size",
			data:    cat(frameHeader(0x24, 3), blockHeader(true, 0, 3), []byte("ab\n"), checksumOf([]byte("ab\n"))),
			want:    Frame{HeaderSize: 6, ContentSize: 3, WindowSize: 3, SingleSegment: true, HasChecksum: true, Blocks: 1},
			content: []byte("ab\n"),
		},
		{
			name:    "2-byte content size (offset 256)",
			data:    cat(frameHeader(0x44, 0x50, 300-256, 0), blockHeader(true, 0, 300), c300, checksumOf(c300)),
			want:    Frame{HeaderSize: 8, ContentSize: 300, WindowSize: 1 << 20, HasChecksum: true, Blocks: 1},
			content: c300,
		},
		{
			name:    "4-byte content size",
			data:    cat(frameHeader(0x84, 0x50, 3, 0, 0, 0), blockHeader(true, 0, 3), []byte("ab\n"), checksumOf([]byte("ab\n"))),
			want:    Frame{HeaderSize: 10, ContentSize: 3, WindowSize: 1 << 20, HasChecksum: true, Blocks: 1},
			content: []byte("ab\n"),
		},
		{
			name:    "8-byte content size, single segment",
			data:    cat(frameHeader(0xE4, 3, 0, 0, 0, 0, 0, 0, 0), blockHeader(true, 0, 3), []byte("ab\n"), checksumOf([]byte("ab\n"))),
			want:    Frame{HeaderSize: 13, ContentSize: 3, WindowSize: 3, SingleSegment: true, HasChecksum: true, Blocks: 1},
			content: []byte("ab\n"),
		},
		{
			name:    "dictionary id 0 means none",
			data:    cat(frameHeader(0x06, 0x50, 0, 0), blockHeader(true, 0, 3), []byte("ab\n"), checksumOf([]byte("ab\n"))),
			want:    Frame{HeaderSize: 8, ContentSize: -1, WindowSize: 1 << 20, HasChecksum: true, Blocks: 1},
			content: []byte("ab\n"),
		},
		{
			name:    "unused descriptor bit 4 is ignored",
			data:    cat(frameHeader(0x14, 0x50), blockHeader(true, 0, 3), []byte("ab\n"), checksumOf([]byte("ab\n"))),
			want:    Frame{HeaderSize: 6, ContentSize: -1, WindowSize: 1 << 20, HasChecksum: true, Blocks: 1},
			content: []byte("ab\n"),
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, size := bytes.NewReader(tc.data), int64(len(tc.data))
			tc.want.Size = size
			f, err := ParseFrame(r, 0, size)
			if err != nil || f != tc.want {
				t.Fatalf("ParseFrame = %+v, %v; want %+v", f, err, tc.want)
			}
			got, err := dec.DecodeAll(r, f, 1<<20)
			if err != nil || !bytes.Equal(got, tc.content) {
				t.Fatalf("DecodeAll = %q, %v", got, err)
			}
			last, err := LastFrame(r, size, LastOptions{Decoder: dec})
			if err != nil || last != (Last{Frame: f}) {
				t.Fatalf("LastFrame = %+v, %v", last, err)
			}
		})
	}
}

func TestCorruptFrames(t *testing.T) {
	good := rawFrame([]byte("ok\n"))
	for _, tc := range []struct {
		name   string
		data   []byte
		offset int64  // of the reported frame
		msg    string // the error message
	}{
		{"skippable magic", cat(good, []byte{0x50, 0x2A, 0x4D, 0x18, 0, 0, 0, 0}), int64(len(good)),
			"invalid frame magic at byte 16"},
		{"garbage", []byte("{\"type\":\"session\"}\n"), 0, "invalid frame magic at byte 0"},
		{"partial magic that is not a prefix", cat(good, []byte{0x28, 0xB5, 0x00}), 16, "invalid frame magic at byte 16"},
		{"reserved descriptor bit", cat(frameHeader(0x0C, 0x50), blockHeader(true, 0, 0), checksumOf(nil)), 0,
			"frame at byte 0: reserved bit set in frame header descriptor 0x0c"},
		{"reserved block type", cat(good, frameHeader(0x04, 0x50), blockHeader(true, 3, 2), []byte("ab")), 16,
			"frame at byte 16: reserved block type at byte 22"},
		{"dictionary", cat(frameHeader(0x05, 0x50, 7), blockHeader(true, 0, 0), checksumOf(nil)), 0,
			"frame at byte 0: frame uses dictionary 7"},
		{"block larger than window", cat(frameHeader(0x04, 0x00), blockHeader(true, 1, 1025), []byte("x")), 0,
			"frame at byte 0: block size 1025 exceeds maximum 1024 at byte 6"},
		{"block larger than 128 KiB", cat(frameHeader(0x04, 0x50), blockHeader(true, 1, 128<<10+1), []byte("x")), 0,
			"frame at byte 0: block size 131073 exceeds maximum 131072 at byte 6"},
		{"block larger than single-segment content", cat(frameHeader(0x24, 2), blockHeader(true, 0, 3), []byte("ab\n")), 0,
			"frame at byte 0: block size 3 exceeds maximum 2 at byte 6"},
		{"compressed block too small", cat(frameHeader(0x04, 0x50), blockHeader(true, 2, 1), []byte("x")), 0,
			"frame at byte 0: compressed block of 1 bytes at byte 6"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, size := bytes.NewReader(tc.data), int64(len(tc.data))
			frames, torn, err := Walk(r, size)
			var ferr *Error
			if !errors.Is(err, ErrCorrupt) || errors.Is(err, ErrTorn) || !errors.As(err, &ferr) ||
				ferr.Offset != tc.offset || err.Error() != tc.msg {
				t.Fatalf("Walk error = %v, want %q", err, tc.msg)
			}
			if torn != (Torn{}) || int64(len(frames)) != tc.offset/int64(len(good)) {
				t.Fatalf("Walk = %v, %+v", frames, torn)
			}
			if _, err := LastFrame(r, size, LastOptions{}); err == nil || err.Error() != tc.msg {
				t.Fatalf("LastFrame error = %v, want %q", err, tc.msg)
			}
		})
	}
}

// TestTruncation cuts a multi-frame file at every byte offset and checks
// that exactly the frames ending at or before the cut are complete, that
// the rest is one torn frame, and that LastFrame agrees.
func TestTruncation(t *testing.T) {
	dec := newTestDecoder(t)
	inner := AppendFrame(nil, []byte("nested frame\n"))
	parts := [][]byte{
		AppendFrame(nil, []byte(`{"type":"session","version":0}`+"\n")),
		AppendFrame(nil, bytes.Repeat([]byte(`{"type":"turn/start","seq":1}`+"\n"), 40)),
		// Magic bytes inside compressed data, followed by a plausible header.
		AppendFrame(nil, cat([]byte("x\n"), pseudoRandom(300, 1), inner, pseudoRandom(300, 2), []byte("\n"))),
		// A complete frame nested in a raw block.
		rawFrame(cat(inner, []byte("\n"))),
		cat(frameHeader(0x04, 0x00), blockHeader(false, 1, 999), []byte("y"), blockHeader(true, 0, 1), []byte("\n"),
			checksumOf(append(bytes.Repeat([]byte("y"), 999), '\n'))),
		AppendFrame(nil, nil),
	}
	if bytes.Count(parts[2], magicBytes) < 2 {
		t.Fatal("test frame holds no magic bytes inside its data")
	}
	data := cat(parts...)
	var ends []int64
	var end int64
	for _, p := range parts {
		end += int64(len(p))
		ends = append(ends, end)
	}
	for _, p := range parts {
		f, err := ParseFrame(bytes.NewReader(p), 0, int64(len(p)))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := dec.DecodeAll(bytes.NewReader(p), f, 1<<20); err != nil {
			t.Fatal(err)
		}
	}
	for cut := int64(0); cut <= int64(len(data)); cut++ {
		r := bytes.NewReader(data[:cut])
		frames, torn, err := Walk(r, cut)
		if err != nil {
			t.Fatalf("cut %d: Walk error %v", cut, err)
		}
		n := 0
		for n < len(ends) && ends[n] <= cut {
			n++
		}
		start := int64(0)
		if n > 0 {
			start = ends[n-1]
		}
		if len(frames) != n || torn != (Torn{Offset: start, Size: cut - start}) && !(cut == start && torn == Torn{}) {
			t.Fatalf("cut %d: %d frames, torn %+v; want %d frames, torn at %d", cut, len(frames), torn, n, start)
		}
		for i, f := range frames {
			if f.End() != ends[i] {
				t.Fatalf("cut %d: frame %d ends at %d, want %d", cut, i, f.End(), ends[i])
			}
		}
		last, err := LastFrame(r, cut, LastOptions{Decoder: dec})
		if n == 0 {
			if !errors.Is(err, ErrNoFrame) || last.Torn != torn {
				t.Fatalf("cut %d: LastFrame = %+v, %v; want ErrNoFrame", cut, last, err)
			}
			continue
		}
		if err != nil || last != (Last{Frame: frames[n-1], Torn: torn}) {
			t.Fatalf("cut %d: LastFrame = %+v, %v; want %+v, %+v", cut, last, err, frames[n-1], torn)
		}
	}
}

func TestLastFrameLargerThanWindow(t *testing.T) {
	dec := newTestDecoder(t)
	big := AppendFrame(nil, append(pseudoRandom(64<<10, 3), '\n'))
	data := cat(AppendFrame(nil, []byte("header\n")), big)
	for _, tail := range [][]byte{nil, big[:100]} { // complete, then torn
		file := cat(data, tail)
		cr := &countingReaderAt{r: bytes.NewReader(file)}
		bf, err := ParseFrame(bytes.NewReader(big), 0, int64(len(big)))
		if err != nil {
			t.Fatal(err)
		}
		bf.Offset = int64(len(data) - len(big))
		want := Last{Frame: bf}
		last, err := LastFrame(cr, int64(len(file)), LastOptions{Window: 4 << 10, Decoder: dec})
		if len(tail) > 0 {
			want.Torn = Torn{Offset: int64(len(data)), Size: int64(len(tail))}
		}
		if err != nil || last != want {
			t.Fatalf("LastFrame = %+v, %v; want %+v", last, err, want)
		}
		if cr.bytes.Load() < 4<<10 {
			t.Fatalf("read %d bytes: the fallback walk did not run", cr.bytes.Load())
		}
	}
}

func TestChecksumMismatch(t *testing.T) {
	dec := newTestDecoder(t)
	bad := AppendFrame(nil, []byte("last\n"))
	bad[len(bad)-1] ^= 0x80
	head := AppendFrame(nil, []byte("first\n"))
	data := cat(head, bad)
	r, size := bytes.NewReader(data), int64(len(data))
	frames, _, err := Walk(r, size)
	if err != nil || len(frames) != 2 {
		t.Fatal(frames, err)
	}
	want := fmt.Sprintf("frame at byte %d: checksum mismatch", len(head))
	if _, err := dec.DecodeAll(r, frames[1], 1<<10); !errors.Is(err, ErrCorrupt) || err.Error() != want {
		t.Fatalf("DecodeAll error = %v", err)
	}
	rd, err := dec.NewReader(r, frames[1])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadAll(rd); !errors.Is(err, ErrCorrupt) || err.Error() != want {
		t.Fatalf("ReadAll error = %v", err)
	}
	// The corrupt last frame is not skipped in favour of an earlier one.
	if _, err := LastFrame(r, size, LastOptions{Decoder: dec}); !errors.Is(err, ErrCorrupt) || err.Error() != want {
		t.Fatalf("LastFrame error = %v", err)
	}
}

func TestTornPartialMagic(t *testing.T) {
	head := AppendFrame(nil, []byte("h\n"))
	for n := 1; n <= 3; n++ {
		data := cat(head, magicBytes[:n])
		frames, torn, err := Walk(bytes.NewReader(data), int64(len(data)))
		if err != nil || len(frames) != 1 || torn != (Torn{Offset: int64(len(head)), Size: int64(n)}) {
			t.Fatalf("%d magic bytes: %v, %+v, %v", n, frames, torn, err)
		}
	}
}

func TestReadErrors(t *testing.T) {
	data := cat(AppendFrame(nil, []byte("a\n")), AppendFrame(nil, bytes.Repeat([]byte("b\n"), 5000)))
	boom := errors.New("boom")
	r := errReaderAt{r: bytes.NewReader(data), off: 20, err: boom}
	_, _, err := Walk(r, int64(len(data)))
	if !errors.Is(err, boom) || errors.Is(err, ErrCorrupt) || errors.Is(err, ErrTorn) {
		t.Fatalf("Walk error = %v", err)
	}
	if _, err := LastFrame(r, int64(len(data)), LastOptions{}); !errors.Is(err, boom) {
		t.Fatalf("LastFrame error = %v", err)
	}
	// A reader shorter than the size it was given is a read error, not a torn frame.
	_, _, err = Walk(bytes.NewReader(data[:10]), int64(len(data)))
	if !errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, ErrTorn) {
		t.Fatalf("Walk of short reader: %v", err)
	}
	dec := newTestDecoder(t)
	frames, _, _ := Walk(bytes.NewReader(data), int64(len(data)))
	// NewReader's structure check reads once; then decoding fails.
	rd, err := dec.NewReader(&flakyReaderAt{r: bytes.NewReader(data), ok: 1, err: boom}, frames[1])
	if err != nil {
		t.Fatal(err)
	}
	if _, err = io.ReadAll(rd); !errors.Is(err, boom) || errors.Is(err, ErrCorrupt) {
		t.Fatalf("decode with failing reader: %v", err)
	}
}

func TestFramesIterator(t *testing.T) {
	data := cat(AppendFrame(nil, []byte("a\n")), AppendFrame(nil, []byte("b\n")), []byte("junk"))
	var offs []int64
	var last error
	for f, err := range Frames(bytes.NewReader(data), int64(len(data))) {
		offs = append(offs, f.Offset)
		last = err
	}
	if len(offs) != 3 || !strings.HasPrefix(last.Error(), "invalid frame magic") {
		t.Fatalf("offsets %v, last error %v", offs, last)
	}
	for range Frames(bytes.NewReader(data), int64(len(data))) {
		break // stopping early must not panic
	}
	if _, err := ParseFrame(bytes.NewReader(data), int64(len(data)), int64(len(data))); err != io.EOF {
		t.Fatalf("ParseFrame at end: %v", err)
	}
	if _, err := ParseFrame(bytes.NewReader(data), -1, int64(len(data))); err == nil {
		t.Fatal("ParseFrame at -1: no error")
	}
}
