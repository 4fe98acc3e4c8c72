package zstdframe

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"testing"
)

// scanAll walks data with a Scanner and returns the frames and their
// contents, and the error that ended the walk (nil at the end).
func scanAll(t *testing.T, r io.ReaderAt, size int64) ([]Frame, [][]byte, error) {
	t.Helper()
	s := NewScanner(r, 0, size, newTestDecoder(t))
	defer s.Close()
	var frames []Frame
	var contents [][]byte
	for {
		f, err := s.Next()
		if err == io.EOF {
			return frames, contents, nil
		}
		if err != nil {
			return frames, contents, err
		}
		content, rd, err := s.Content()
		if err == nil && rd != nil {
			content, err = io.ReadAll(rd)
		}
		if err != nil {
			return frames, contents, err
		}
		frames = append(frames, f)
		contents = append(contents, bytes.Clone(content))
	}
}

// scanLog is a log of small frames around one larger than the scan buffer
// and one whose content is too large to decode whole.
func scanLog() (data []byte, contents [][]byte) {
	for i, n := range []int{190, 1300, 700, 3 << 20, 2500, 900, 1<<20 + 5000, 80} {
		c := jsonl(n)
		if i == 3 {
			c = pseudoRandom(n, 7) // stays larger than the buffer once compressed
		}
		contents = append(contents, c)
		data = AppendFrame(data, c)
	}
	return data, contents
}

func TestScannerReadsFramesOnce(t *testing.T) {
	data, want := scanLog()
	cr := &countingReaderAt{r: bytes.NewReader(data)}
	frames, got, err := scanAll(t, cr, int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	walked, _, err := Walk(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	if len(frames) != len(walked) {
		t.Fatalf("%d frames, Walk finds %d", len(frames), len(walked))
	}
	for i := range frames {
		if frames[i] != walked[i] {
			t.Errorf("frame %d: %+v, Walk: %+v", i, frames[i], walked[i])
		}
		if !bytes.Equal(got[i], want[i]) {
			t.Errorf("frame %d: content differs", i)
		}
	}
	// The large frame's block headers cost extra reads; everything else is
	// read once.
	big := walked[3]
	extra := int64(big.Blocks) * readAhead
	if n := cr.bytes.Load(); n > int64(len(data))+big.Size+extra {
		t.Errorf("read %d bytes of a %d-byte file", n, len(data))
	}
}

func TestScannerSmallFramesReadOnce(t *testing.T) {
	var data []byte
	for i := range 5000 {
		data = AppendFrame(data, jsonl(200+i%700))
	}
	cr := &countingReaderAt{r: bytes.NewReader(data)}
	frames, _, err := scanAll(t, cr, int64(len(data)))
	if err != nil || len(frames) != 5000 {
		t.Fatalf("%d frames, %v", len(frames), err)
	}
	// A frame that straddles the buffer's end is read again from its
	// start: at most one frame per buffer.
	if n, max := cr.bytes.Load(), int64(len(data))+int64(len(data)/scanBuffer+1)*2048; n > max {
		t.Errorf("read %d bytes of a %d-byte file, want at most %d", n, len(data), max)
	}
}

func TestScannerTorn(t *testing.T) {
	var data []byte
	for _, n := range []int{190, 1300, 300 << 10, 700} {
		data = AppendFrame(data, jsonl(n))
	}
	walked, _, _ := Walk(bytes.NewReader(data), int64(len(data)))
	last := walked[len(walked)-1]
	for cut := last.Offset + 1; cut < last.End(); cut++ {
		frames, _, err := scanAll(t, bytes.NewReader(data[:cut]), cut)
		var fe *Error
		if !errors.Is(err, ErrTorn) || !errors.As(err, &fe) || fe.Offset != last.Offset {
			t.Fatalf("cut at %d: %v, want torn at %d", cut, err, last.Offset)
		}
		if len(frames) != len(walked)-1 {
			t.Fatalf("cut at %d: %d complete frames, want %d", cut, len(frames), len(walked)-1)
		}
	}
}

func TestScannerSkippableAndResync(t *testing.T) {
	a, b, c := AppendFrame(nil, jsonl(500)), AppendFrame(nil, jsonl(700)), AppendFrame(nil, jsonl(900))
	skip := []byte{0x50, 0x2A, 0x4D, 0x18, 3, 0, 0, 0, 'x', 'y', 'z'}
	data := cat(a, skip, b, c)
	s := NewScanner(bytes.NewReader(data), 0, int64(len(data)), newTestDecoder(t))
	defer s.Close()
	if _, err := s.Next(); err != nil {
		t.Fatal(err)
	}
	f, err := s.Next()
	if !errors.Is(err, ErrSkippable) || !errors.Is(err, ErrCorrupt) || f.Offset != int64(len(a)) || f.Size != int64(len(skip)) {
		t.Fatalf("skippable: %+v %v", f, err)
	}
	if f, err := s.Next(); err != nil || f.Offset != int64(len(a)+len(skip)) {
		t.Fatalf("after the skippable frame: %+v %v", f, err)
	}

	// A reserved bit in b's descriptor: Resync finds c.
	bad := cat(a, b, c)
	bad[len(a)+4] |= 0x08
	s = NewScanner(bytes.NewReader(bad), 0, int64(len(bad)), newTestDecoder(t))
	defer s.Close()
	s.Next()
	if _, err := s.Next(); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("reserved bit: %v", err)
	}
	at, found, err := s.Resync(int64(len(a)) + 1)
	if err != nil || !found || at != int64(len(a)+len(b)) {
		t.Fatalf("Resync: %d %v %v", at, found, err)
	}
	if f, err := s.Next(); err != nil || f.Offset != at {
		t.Fatalf("after Resync: %+v %v", f, err)
	}
	// A frame whose checksum fails is not a place to resync to.
	bad = cat(a, b, c)
	bad[len(bad)-1] ^= 0xFF
	s = NewScanner(bytes.NewReader(bad), 0, int64(len(bad)), newTestDecoder(t))
	defer s.Close()
	if _, found, err := s.Resync(int64(len(a) + 1)); found || err != nil {
		t.Fatalf("Resync found a frame with a bad checksum: %v %v", found, err)
	}
	if _, err := s.Next(); err != io.EOF {
		t.Fatalf("after a failed Resync: %v", err)
	}
}

// TestResyncPastTheLimit: a frame whose content is past the decoder's
// limit is where Resync stops, for Content to report; one that declares
// more content than its blocks hold is not a frame at all.
func TestResyncPastTheLimit(t *testing.T) {
	a, c := AppendFrame(nil, jsonl(500)), AppendFrame(nil, jsonl(900))
	content := jsonl(100)
	declares := cat(frameHeader(0xC4, 0x50), binary.LittleEndian.AppendUint64(nil, 1<<50),
		blockHeader(true, 0, len(content)), content, checksumOf(content))
	for _, tc := range []struct {
		name  string
		frame []byte
		stop  bool // Resync stops at frame
	}{
		{"content past the limit", repeatFrame(' ', testLimit+1), true},
		{"declared past the blocks", declares, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := cat(a, []byte("JUNK"), tc.frame, c)
			s := NewScanner(bytes.NewReader(data), 0, int64(len(data)), newTestDecoder(t))
			defer s.Close()
			at, found, err := s.Resync(int64(len(a)))
			want := int64(len(a) + 4)
			if !tc.stop {
				want += int64(len(tc.frame))
			}
			if err != nil || !found || at != want {
				t.Fatalf("Resync: %d %v %v; want %d", at, found, err, want)
			}
			f, err := s.Next()
			if !tc.stop {
				return
			}
			if err != nil {
				t.Fatalf("Next: %+v %v", f, err)
			}
			_, rd, err := s.Content()
			if err == nil {
				_, err = io.Copy(io.Discard, rd)
			}
			var fe *Error
			if !errors.As(err, &fe) || fe.ContentLimit() != testLimit {
				t.Fatalf("Content: %v, want the content limit", err)
			}
		})
	}
	if _, err := ParseFrame(bytes.NewReader(declares), 0, int64(len(declares))); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("ParseFrame of a frame declaring more than its blocks hold: %v", err)
	}
}

func TestSalvage(t *testing.T) {
	d := newTestDecoder(t)
	// Three raw blocks, as a frame dsh writes for a batch over 128 KiB.
	content := jsonl(300 << 10)
	blocks := [][]byte{content[:128<<10], content[128<<10 : 256<<10], content[256<<10:]}
	frame := frameHeader(0x04, 0x60) // 4 MiB window
	for i, b := range blocks {
		frame = cat(frame, blockHeader(i == 2, 0, len(b)), b)
	}
	frame = cat(frame, checksumOf(content))
	hdr := 6
	ends := []int{hdr + 3 + len(blocks[0]), hdr + 6 + len(blocks[0]) + len(blocks[1]), len(frame) - 4}
	for _, tc := range []struct {
		cut  int
		want int // bytes of content salvaged
	}{
		{3, 0}, {hdr, 0}, {hdr + 2, 0}, {ends[0] - 1, 0}, {ends[0], 128 << 10}, {ends[0] + 2, 128 << 10},
		{ends[1] + 100, 256 << 10}, {ends[2], len(content)}, {len(frame) - 1, len(content)},
	} {
		t.Run(fmt.Sprint(tc.cut), func(t *testing.T) {
			data := frame[:tc.cut]
			rd, err := d.Salvage(bytes.NewReader(data), Torn{Offset: 0, Size: int64(len(data))})
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(rd)
			if err != nil || !bytes.Equal(got, content[:tc.want]) {
				t.Fatalf("salvaged %d bytes, %v; want %d", len(got), err, tc.want)
			}
		})
	}
	// Compressed blocks too: a torn dsh frame of several blocks.
	whole := jsonl(400 << 10)
	c := AppendFrame(nil, whole)
	fr, _ := ParseFrame(bytes.NewReader(c), 0, int64(len(c)))
	if fr.Blocks < 2 {
		t.Fatalf("frame of %d blocks", fr.Blocks)
	}
	prev := 0
	var cuts []int
	for cut := 1; cut < len(c)-4; cut += 97 {
		cuts = append(cuts, cut)
	}
	for _, cut := range append(cuts, len(c)-2) { // the last in the checksum
		rd, err := d.Salvage(bytes.NewReader(c[:cut]), Torn{Size: int64(cut)})
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(rd)
		if err != nil || !bytes.HasPrefix(whole, got) || len(got) < prev {
			t.Fatalf("cut at %d: %d bytes (%d before), %v", cut, len(got), prev, err)
		}
		prev = len(got)
	}
	if prev != len(whole) {
		t.Fatalf("cut in the checksum: %d bytes salvaged", prev)
	}
	// A complete block that does not decode is corruption.
	bad := cat(frameHeader(0x04, 0x50), blockHeader(false, 2, 10), bytes.Repeat([]byte{0xFF}, 10), blockHeader(false, 0, 100), []byte("partial"))
	rd, err := d.Salvage(bytes.NewReader(bad), Torn{Size: int64(len(bad))})
	if err == nil {
		_, err = io.ReadAll(rd)
	}
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("corrupt block: %v", err)
	}
	if _, err := d.Salvage(bytes.NewReader(c), Torn{Size: int64(len(c))}); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("a complete frame: %v", err)
	}
}

// FuzzScanner holds the Scanner to Walk: the same complete frames, and the
// same problem, at the same offset, where Walk stops.
func FuzzScanner(f *testing.F) {
	a, b := AppendFrame(nil, jsonl(300)), AppendFrame(nil, jsonl(5000))
	f.Add(cat(a, b))
	f.Add(cat(a, b)[:len(a)+7])
	f.Add(cat(a, []byte{0x50, 0x2A, 0x4D, 0x18, 2, 0, 0, 0, 'x', 'y'}, b))
	f.Add(cat(a, []byte("junk"), b))
	f.Add(rawFrame([]byte("x\n")))
	d := newTestDecoder(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		size := int64(len(data))
		walked, torn, werr := Walk(bytes.NewReader(data), size)
		s := NewScanner(bytes.NewReader(data), 0, size, d)
		defer s.Close()
		var frames []Frame
		for {
			fr, err := s.Next()
			if err == io.EOF {
				if werr != nil || torn.Size != 0 {
					t.Fatalf("Scanner ends cleanly; Walk: %v, torn %+v", werr, torn)
				}
				break
			}
			if err != nil {
				var fe *Error
				switch {
				case errors.Is(err, ErrTorn):
					if werr != nil || torn != (Torn{Offset: fr.Offset, Size: fr.Size}) {
						t.Fatalf("torn at %d+%d; Walk: %v, torn %+v", fr.Offset, fr.Size, werr, torn)
					}
				case !errors.As(err, &fe):
					t.Fatalf("Next: %v", err)
				default:
					var we *Error
					if !errors.As(werr, &we) || we.Offset != fe.Offset {
						t.Fatalf("Next: %v; Walk: %v", err, werr)
					}
				}
				break
			}
			frames = append(frames, fr)
			if _, rd, err := s.Content(); err == nil && rd != nil {
				io.Copy(io.Discard, rd)
			}
		}
		if len(frames) != len(walked) {
			t.Fatalf("%d frames; Walk finds %d", len(frames), len(walked))
		}
		for i := range frames {
			if frames[i] != walked[i] {
				t.Fatalf("frame %d: %+v; Walk: %+v", i, frames[i], walked[i])
			}
		}
	})
}
