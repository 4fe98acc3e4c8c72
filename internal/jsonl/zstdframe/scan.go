package zstdframe

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"
)

// ErrSkippable marks a skippable frame (magic 0x184D2A50 to 0x184D2A5F).
// RFC 8878 lets decoders skip it, but dsh rejects any magic other than
// 0xFD2FB528, so a Scanner reports it as corruption that it can step over.
var ErrSkippable = errors.New("skippable frame")

const (
	// scanBuffer is the buffer a Scanner reads through. The frames that
	// fit in it (every dsh append batch) are parsed and decoded from it,
	// so the file is read once, in large sequential reads.
	scanBuffer = 1 << 20
	// maxResync bounds the magic matches Resync tries, so that input full
	// of frame-like bytes cannot make a check quadratic.
	maxResync = 1024
)

// scanBufs recycles the buffers of Scanners.
var scanBufs = sync.Pool{New: func() any {
	b := make([]byte, scanBuffer)
	return &b
}}

// A Scanner walks the frames of a file front to back, for a check of every
// byte. It reads the file once through a buffer: a frame that fits in the
// buffer is parsed and decoded from memory; only a larger one is parsed and
// decoded from the file (its block headers then cost small extra reads).
// Memory stays bounded by the buffer and the decoder's window, whatever
// the file holds. A Scanner is not safe for concurrent use; Close it when
// done.
type Scanner struct {
	r      io.ReaderAt
	size   int64
	dec    *Decoder
	buf    []byte // bytes [bufOff, bufOff+len(buf)) of r
	pooled *[]byte
	bufOff int64
	off    int64 // where the next frame starts
	cur    Frame // the frame Next returned last, if complete
	inBuf  bool  // cur lies in buf
}

// NewScanner returns a Scanner of the frames of r, a file of size bytes,
// starting at off, that decodes with d.
func NewScanner(r io.ReaderAt, off, size int64, d *Decoder) *Scanner {
	return &Scanner{r: r, size: size, dec: d, off: off, bufOff: off}
}

// Close gives the buffer back; s must not be used afterwards.
func (s *Scanner) Close() {
	if s.pooled != nil {
		scanBufs.Put(s.pooled)
	}
	s.buf, s.pooled = nil, nil
}

// Offset returns where the next frame starts.
func (s *Scanner) Offset() int64 { return s.off }

// bufEnd is the file offset just past the buffered bytes.
func (s *Scanner) bufEnd() int64 { return s.bufOff + int64(len(s.buf)) }

// fill makes the buffer start at off and hold as much of the file from
// there as fits, keeping (moving) what it holds already of it.
func (s *Scanner) fill(off int64) error {
	if s.pooled == nil {
		s.pooled = scanBufs.Get().(*[]byte)
		s.buf, s.bufOff = (*s.pooled)[:0], off
	}
	full := (*s.pooled)[:cap(*s.pooled)]
	n := 0
	if off >= s.bufOff && off < s.bufEnd() {
		n = copy(full, s.buf[off-s.bufOff:])
	}
	m := int(min(int64(len(full)-n), s.size-off-int64(n)))
	if err := readFull(s.r, full[n:n+m], off+int64(n)); err != nil {
		s.buf = full[:0]
		return err
	}
	s.buf, s.bufOff = full[:n+m], off
	return nil
}

// window is a source of the buffered bytes: parseFrame and the Decoder
// read them from memory through it.
func (s *Scanner) window() *source {
	return &source{r: s.r, size: s.bufEnd(), tail: s.buf}
}

// Next parses the structure of the frame at Offset and moves past it.
//
// It returns the frame and a nil error for a complete frame, whose content
// Content then gives. At the end of the file it returns io.EOF. A file that
// ends inside the frame gives an error matching ErrTorn, with the frame's
// Offset and the Size of the bytes present; the Scanner is then at the end.
// A skippable frame gives an error matching ErrCorrupt and ErrSkippable,
// with its Offset and Size (to the end of the file if it is cut), and the
// Scanner moves past it. Any other invalid structure gives an error
// matching ErrCorrupt with the frame's Offset; the Scanner is then at the
// end, unless Resync finds a frame after it.
func (s *Scanner) Next() (Frame, error) {
	s.cur, s.inBuf = Frame{}, false
	off := s.off
	if off >= s.size {
		return Frame{}, io.EOF
	}
	if off < s.bufOff || off+maxHeaderSize > s.bufEnd() && s.bufEnd() < s.size {
		if err := s.fill(off); err != nil {
			return Frame{}, err
		}
	}
	if f, ok := s.skippable(off); ok {
		s.off = f.End()
		return f, frameError(ErrCorrupt, off, ErrSkippable, "skippable frame of %d bytes", f.Size)
	}
	f, err := s.window().parseFrame(off)
	if errors.Is(err, ErrTorn) && s.bufEnd() < s.size {
		// The frame runs past the buffer: read on from its start, or,
		// when it is larger than the buffer, parse it in the file.
		if off > s.bufOff {
			if err := s.fill(off); err != nil {
				return Frame{}, err
			}
			f, err = s.window().parseFrame(off)
		}
		if errors.Is(err, ErrTorn) && s.bufEnd() < s.size {
			f, err = ParseFrame(s.r, off, s.size)
		}
	}
	s.off = s.size
	if err != nil {
		return f, err
	}
	s.cur, s.inBuf, s.off = f, f.End() <= s.bufEnd(), f.End()
	return f, nil
}

// skippable reports whether a skippable frame starts at off, which the
// buffer holds, and returns it, cut at the end of the file.
func (s *Scanner) skippable(off int64) (Frame, bool) {
	b := s.buf[off-s.bufOff:]
	if len(b) < 4 || binary.LittleEndian.Uint32(b)&0xFFFFFFF0 != 0x184D2A50 {
		return Frame{}, false
	}
	f := Frame{Offset: off, Size: s.size - off, ContentSize: -1}
	if len(b) >= 8 {
		f.Size = min(f.Size, 8+int64(binary.LittleEndian.Uint32(b[4:])))
	}
	return f, true
}

// Content returns the content of the complete frame Next returned last.
// A small frame is decoded and verified whole: content holds it, valid
// until the Scanner or its Decoder is used again. A larger one comes as a
// stream, rd, valid until then too: its checksum is verified when it
// returns io.EOF, so what it yields before is unverified. Errors are those
// of the Decoder, matching ErrCorrupt or ErrTooLarge.
func (s *Scanner) Content() (content []byte, rd io.Reader, err error) {
	f := s.cur
	if f.Size == 0 {
		return nil, nil, errors.New("zstdframe: Content without a complete frame")
	}
	if !s.inBuf {
		rd, err = s.dec.NewReader(s.r, f)
		return nil, rd, err
	}
	w := s.window()
	if content, ok := s.dec.decodeSmall(w, f); ok {
		return content, nil, nil
	}
	rd, err = s.dec.NewReader(w, f)
	return nil, rd, err
}

// Resync looks, from offset from on, for the next frame that is complete
// and whose checksum matches, or whose content is past the decoder's limit
// (which Content then reports), and moves the Scanner there: the bytes in
// between belong to no frame. When it finds none before the end of the
// file (or after maxResync candidates, or after checking candidate frames
// of twice the bytes searched, so that the time stays linear), found is
// false and the Scanner is at the end. The error is a read failure.
func (s *Scanner) Resync(from int64) (at int64, found bool, err error) {
	s.cur, s.inBuf, s.off = Frame{}, false, s.size
	tried := 0
	budget := 2*(s.size-from) + scanBuffer
	for pos := from; s.size-pos >= 4 && tried < maxResync && budget > 0; {
		if pos < s.bufOff || pos+4 > s.bufEnd() {
			if err := s.fill(pos); err != nil {
				return 0, false, err
			}
		}
		i := bytes.Index(s.buf[pos-s.bufOff:], magicBytes)
		if i < 0 {
			// A magic may straddle the end of the buffer.
			pos = max(pos+1, s.bufEnd()-3)
			continue
		}
		p := pos + int64(i)
		tried++
		f, err := ParseFrame(s.r, p, s.size)
		if err == nil && f.HasChecksum {
			budget -= f.Size
			err = s.dec.Verify(s.r, f)
			// A frame whose content is past the decoder's limit cannot be
			// checked, and trying the next candidates could cost as much
			// each: stop there, for Next and Content to report it.
			var fe *Error
			if err == nil || errors.As(err, &fe) && fe.ContentLimit() > 0 {
				s.off = p
				return p, true, nil
			}
		}
		if rerr := readFailure(err); rerr != nil {
			return 0, false, rerr
		}
		pos = p + 1
	}
	return s.size, false, nil
}

// Salvage returns a reader of the content of the complete blocks of the
// torn final frame t of r: what dsh 0.1.0 salvaged from it (store.md 4,
// "Torn final frame"). The content is unverified, since the checksum is
// missing or cut, and may end inside a record. The reader returns io.EOF
// once it has decoded every complete block, and an error matching
// ErrCorrupt if one fails to decode; a frame cut inside its header holds
// nothing. The reader is valid until d is used again.
func (d *Decoder) Salvage(r io.ReaderAt, t Torn) (io.Reader, error) {
	f, err := ParseFrame(r, t.Offset, t.Offset+t.Size)
	switch {
	case err == nil:
		return nil, frameError(ErrCorrupt, t.Offset, nil, "frame is complete, not torn")
	case !errors.Is(err, ErrTorn):
		return nil, err
	case f.HeaderSize == 0 || t.Size <= int64(f.HeaderSize):
		return bytes.NewReader(nil), nil
	case f.WindowSize > maxWindow:
		return nil, frameError(ErrTooLarge, t.Offset, nil, "window of %d bytes exceeds %d", f.WindowSize, maxWindow)
	}
	start := t.Offset + int64(f.HeaderSize)
	end, err := completeBlocksEnd(r, start, t.Offset+t.Size)
	if err != nil || end == start {
		return bytes.NewReader(nil), err
	}
	// Clear the checksum flag: the decoder would drop the last block's
	// content when the checksum after it is cut. It reads exactly what it
	// decodes, so running out of input after the last complete block is
	// the cut, not corruption.
	hdr := make([]byte, f.HeaderSize)
	if err := readFull(r, hdr, t.Offset); err != nil {
		return nil, err
	}
	hdr[4] &^= 0x04
	sr := &sectionReader{sr: io.NewSectionReader(r, start, end-start), off: start}
	d.gen++
	if err := d.zd.Reset(io.MultiReader(bytes.NewReader(hdr), sr)); err != nil {
		return nil, d.decodeError(t.Offset, err)
	}
	return &salvageReader{d: d, off: t.Offset, gen: d.gen, sr: sr, n: end - start}, nil
}

// completeBlocksEnd returns the end of the last complete block of a frame
// whose blocks start at pos and whose bytes end at end.
func completeBlocksEnd(r io.ReaderAt, pos, end int64) (int64, error) {
	var bh [blockHeaderLen]byte
	for pos+blockHeaderLen <= end {
		if err := readFull(r, bh[:], pos); err != nil {
			return 0, err
		}
		v := uint32(bh[0]) | uint32(bh[1])<<8 | uint32(bh[2])<<16
		payload := int64(v >> 3)
		if (v>>1)&3 == 1 {
			payload = 1 // RLE
		}
		next := pos + blockHeaderLen + payload
		if next > end {
			break
		}
		pos = next
		if v&1 != 0 {
			break // the last block: only the checksum is missing
		}
	}
	return pos, nil
}

// salvageReader reads the salvaged content of a torn frame.
type salvageReader struct {
	d   *Decoder
	off int64
	gen uint64
	sr  *sectionReader
	n   int64 // bytes of blocks to decode
	err error
}

func (s *salvageReader) Read(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	if s.gen != s.d.gen {
		s.err = fmt.Errorf("zstdframe: salvage of frame at byte %d used after its Decoder moved on", s.off)
		return 0, s.err
	}
	n, err := s.d.zd.Read(p)
	if err != nil && err != io.EOF {
		pos, _ := s.sr.sr.Seek(0, io.SeekCurrent)
		var rerr *readError
		if pos == s.n && errors.Is(err, io.ErrUnexpectedEOF) && !errors.As(err, &rerr) {
			err = io.EOF // every complete block decoded: the cut
		} else {
			err = s.d.decodeError(s.off, err)
		}
	}
	s.err = err
	return n, err
}
