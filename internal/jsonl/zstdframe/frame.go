// Package zstdframe walks, checks, decodes and encodes the Zstandard frames
// of a dsh session log (session.jsonl.zstd).
//
// A dsh zstd log is a concatenation of independent standard frames (RFC 8878):
// frame 0 holds the header line, then one frame per append batch. The package
// finds frame boundaries from the frame structure alone (magic, frame header,
// block headers, checksum), without decompressing, so that a crash-torn final
// frame can be told apart from corruption and the last complete frame can be
// found from the tail of the file. Decoding is separate and works on one
// complete frame at a time, so a reader never sees a byte of an incomplete
// frame.
//
// Structure rules enforced here, beyond RFC 8878: only the standard frame
// magic 0xFD2FB528 is accepted (dsh rejects skippable frames), and a frame
// that names a dictionary is corrupt (dsh never writes dictionaries and could
// not decode such a frame).
package zstdframe

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"iter"
	"sync"
)

// Sentinel errors, for errors.Is. Errors about a particular frame are
// *Error values that match ErrCorrupt, ErrTorn or ErrTooLarge. Failures of
// the underlying io.ReaderAt are returned wrapped and match none of these.
var (
	// ErrCorrupt reports a frame with invalid structure, an unexpected magic
	// number, or content that fails to decode or to match its checksum.
	ErrCorrupt = errors.New("corrupt zstd frame")
	// ErrTorn reports a frame cut short by the end of the file: a valid
	// prefix of a frame, as a crash during an append leaves it.
	ErrTorn = errors.New("torn zstd frame")
	// ErrNoFrame reports that a file holds no complete frame.
	ErrNoFrame = errors.New("no complete zstd frame")
	// ErrTooLarge reports a frame whose window or content exceeds a
	// decoder limit. The frame may be valid; it is not decoded.
	ErrTooLarge = errors.New("zstd frame exceeds decoder limit")

	// ErrMagic and ErrChecksum say which ErrCorrupt a frame is: one that
	// does not start with the frame magic, one whose content does not
	// match its checksum.
	ErrMagic    = errors.New("invalid frame magic")
	ErrChecksum = errors.New("checksum mismatch")
)

// Error describes a problem with the frame that starts at Offset.
// It matches its kind (ErrCorrupt, ErrTorn or ErrTooLarge), ErrMagic or
// ErrChecksum where it is one, and its cause, if any, with errors.Is.
type Error struct {
	Offset int64  // byte offset of the frame's magic number in the file
	Kind   error  // ErrCorrupt, ErrTorn or ErrTooLarge
	Err    error  // underlying cause, such as a decoder error; may be nil
	prefix string // "frame at byte OFF: ", or ""
	detail string
	rule   error // ErrMagic or ErrChecksum, or nil
	limit  int64
}

// ContentLimit returns the content limit that a frame reported as
// ErrTooLarge exceeds (a Decoder's Limit, or the limit of a DecodeAll),
// or 0 when the error is about something else, such as its window.
func (e *Error) ContentLimit() int64 { return e.limit }

// Error returns the message ("frame at byte OFF: " and Detail).
func (e *Error) Error() string { return e.prefix + e.Detail() }

// Detail is what is wrong with the frame, without its offset, followed by
// the cause when there is one.
func (e *Error) Detail() string {
	if e.Err == nil {
		return e.detail
	}
	return e.detail + ": " + e.Err.Error()
}

// Unwrap returns the kind, ErrMagic or ErrChecksum, and the cause, so
// errors.Is matches each.
func (e *Error) Unwrap() []error {
	errs := []error{e.Kind}
	if e.rule != nil {
		errs = append(errs, e.rule)
	}
	if e.Err != nil {
		errs = append(errs, e.Err)
	}
	return errs
}

// frameError returns an *Error of the given kind whose message reads
// "frame at byte OFF: DETAIL".
func frameError(kind error, off int64, cause error, format string, args ...any) *Error {
	return &Error{
		Offset: off,
		Kind:   kind,
		Err:    cause,
		prefix: fmt.Sprintf("frame at byte %d: ", off),
		detail: fmt.Sprintf(format, args...),
	}
}

// Frame describes the structure of one zstd frame.
type Frame struct {
	Offset        int64  // byte offset of the magic number in the file
	Size          int64  // total bytes: header, blocks and checksum
	HeaderSize    int    // bytes of magic number plus frame header
	ContentSize   int64  // Frame_Content_Size, or -1 when the header omits it
	WindowSize    uint64 // window the decoder needs (the content size for single-segment frames)
	SingleSegment bool   // Single_Segment_Flag: no window descriptor, content size present
	HasChecksum   bool   // the frame ends with the low 32 bits of the content's XXH64
	Blocks        int    // number of blocks
}

// End returns the offset just past the frame.
func (f Frame) End() int64 { return f.Offset + f.Size }

// Torn locates an incomplete final frame: bytes [Offset, Offset+Size) of the
// file. Size is 0 when the file ends exactly at a frame boundary.
type Torn struct {
	Offset int64
	Size   int64
}

const (
	magic          = 0xFD2FB528
	maxHeaderSize  = 4 + 1 + 1 + 4 + 8 // magic, descriptor, window, dictionary id, content size
	blockHeaderLen = 3
	checksumLen    = 4
	maxBlockSize   = 128 << 10
	// readAhead is how much the forward walker reads at once. Small frames
	// then cost one read per several frames, and a frame of large blocks
	// still reads little more than its block headers.
	readAhead = 8 << 10
)

var magicBytes = binary.LittleEndian.AppendUint32(nil, magic)

// source reads the bytes [0, size) of an io.ReaderAt through a small
// read-ahead buffer, and optionally a fully loaded tail of the file.
type source struct {
	r      io.ReaderAt
	size   int64
	buf    []byte // read-ahead: bytes [bufOff, bufOff+len(buf))
	bufOff int64
	tail   []byte // bytes [size-len(tail), size), loaded by LastFrame
	// pooledBuf reports that buf came from readAheadBufs.
	pooledBuf bool
}

// readAheadBufs recycles the read-ahead buffers of sources, which most
// parse a frame or a few and are dropped.
var readAheadBufs = sync.Pool{New: func() any {
	b := make([]byte, readAhead)
	return &b
}}

// releaseBuf gives the read-ahead buffer back; nothing may refer to it
// afterwards (peek's results do not outlive the parse that asked).
func (s *source) releaseBuf() {
	if s.pooledBuf {
		b := s.buf[:cap(s.buf)]
		readAheadBufs.Put(&b)
	}
	s.buf, s.bufOff, s.pooledBuf = nil, 0, false
}

func newSource(r io.ReaderAt, size int64) *source {
	return &source{r: r, size: size}
}

// peek returns up to n bytes at off; fewer only where the file ends. The
// result is valid until the next call.
func (s *source) peek(off int64, n int) ([]byte, error) {
	if off >= s.size || n <= 0 {
		return nil, nil
	}
	n = int(min(int64(n), s.size-off))
	if tailOff := s.size - int64(len(s.tail)); off >= tailOff {
		i := off - tailOff
		return s.tail[i : i+int64(n)], nil
	}
	if off >= s.bufOff && off+int64(n) <= s.bufOff+int64(len(s.buf)) {
		i := off - s.bufOff
		return s.buf[i : i+int64(n)], nil
	}
	m := int(min(int64(max(n, readAhead)), s.size-off))
	if cap(s.buf) < m {
		s.releaseBuf()
		if m <= readAhead {
			s.buf, s.pooledBuf = *readAheadBufs.Get().(*[]byte), true
		} else {
			s.buf = make([]byte, m)
		}
	}
	s.buf = s.buf[:m]
	if err := readFull(s.r, s.buf, off); err != nil {
		s.buf = s.buf[:0]
		return nil, err
	}
	s.bufOff = off
	return s.buf[:n], nil
}

// ReadAt implements io.ReaderAt over [0, size), serving what it can from the
// loaded tail.
func (s *source) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errors.New("zstdframe: negative offset")
	}
	if off >= s.size {
		return 0, io.EOF
	}
	n := int(min(int64(len(p)), s.size-off))
	if tailOff := s.size - int64(len(s.tail)); off >= tailOff {
		copy(p, s.tail[off-tailOff:])
	} else if err := readFull(s.r, p[:n], off); err != nil {
		return 0, err
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// tailBufs recycles the tail buffers of LastFrame's first reads, which
// otherwise cost an allocation per search.
var tailBufs = sync.Pool{New: func() any { return new([]byte) }}

// maxPooledTail bounds the tail buffers kept in tailBufs.
const maxPooledTail = 1 << 20

// getTailBuf returns a buffer of n bytes, from tailBufs when one there is
// large enough; pooled says so.
func getTailBuf(n int64) (buf []byte, pooled bool) {
	if n <= maxPooledTail {
		p := tailBufs.Get().(*[]byte)
		if int64(cap(*p)) >= n {
			return (*p)[:n], true
		}
		tailBufs.Put(p)
	}
	return make([]byte, n), false
}

// loadTail extends the loaded tail down to offset lo.
func (s *source) loadTail(lo int64) error {
	have := int64(len(s.tail))
	need := s.size - lo
	if need <= have {
		return nil
	}
	t, _ := getTailBuf(need)
	if err := readFull(s.r, t[:need-have], lo); err != nil {
		if need <= maxPooledTail {
			tailBufs.Put(&t)
		}
		return err
	}
	copy(t[need-have:], s.tail)
	s.releaseTail()
	s.tail = t
	return nil
}

// releaseTail gives the loaded tail back to tailBufs; nothing may refer
// to it afterwards.
func (s *source) releaseTail() {
	if t := s.tail; cap(t) > 0 && cap(t) <= maxPooledTail {
		tailBufs.Put(&t)
	}
	s.tail = nil
}

// readError is a failure of the underlying io.ReaderAt. It is neither
// corruption nor a torn frame.
type readError struct {
	off int64
	err error
}

func (e *readError) Error() string {
	return fmt.Sprintf("zstdframe: read at byte %d: %v", e.off, e.err)
}

func (e *readError) Unwrap() error { return e.err }

// readFull reads len(p) bytes at off. A reader that ends early fails with
// io.ErrUnexpectedEOF: the caller's size promised those bytes.
func readFull(r io.ReaderAt, p []byte, off int64) error {
	n, err := r.ReadAt(p, off)
	if n == len(p) {
		return nil
	}
	if err == nil || err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return &readError{off: off, err: err}
}

// ParseFrame parses the structure of the frame at off in the file r of the
// given size, without decompressing it. It reads the frame header and every
// block header but no block content.
//
// If the file ends inside the frame, ParseFrame returns the fields parsed so
// far, Size set to the bytes present, and an error matching ErrTorn. Invalid
// structure before the end of the file is reported as ErrCorrupt instead:
// only a valid frame prefix is torn. ParseFrame returns io.EOF when off is
// size.
func ParseFrame(r io.ReaderAt, off, size int64) (Frame, error) {
	if off < 0 || off > size {
		return Frame{}, fmt.Errorf("zstdframe: offset %d outside file of %d bytes", off, size)
	}
	if off == size {
		return Frame{}, io.EOF
	}
	s := newSource(r, size)
	defer s.releaseBuf()
	return s.parseFrame(off)
}

// parseFrame implements ParseFrame; off must be below s.size.
func (s *source) parseFrame(off int64) (Frame, error) {
	f := Frame{Offset: off, Size: s.size - off, ContentSize: -1}
	h, err := s.peek(off, maxHeaderSize)
	if err != nil {
		return f, err
	}
	if err := f.parseHeader(h); err != nil {
		return f, err
	}
	end, err := s.blocks(&f)
	if err != nil {
		return f, err
	}
	f.Size = end - off
	return f, nil
}

// torn is the error of f, which the end of the file cuts short: its Size
// is what the file holds of it.
func (f *Frame) torn() error {
	return frameError(ErrTorn, f.Offset, nil, "file ends %d bytes into the frame", f.Size)
}

// parseHeader reads the magic number and frame header at the start of h
// into f.
func (f *Frame) parseHeader(h []byte) error {
	off := f.Offset
	if !bytes.HasPrefix(h, magicBytes[:min(len(h), 4)]) {
		return &Error{Offset: off, Kind: ErrCorrupt, rule: ErrMagic, detail: fmt.Sprintf("invalid frame magic at byte %d", off)}
	}
	if len(h) < 5 {
		return f.torn()
	}
	fhd := h[4]
	if fhd&0x08 != 0 {
		return frameError(ErrCorrupt, off, nil, "reserved bit set in frame header descriptor 0x%02x", fhd)
	}
	f.SingleSegment = fhd&0x20 != 0
	f.HasChecksum = fhd&0x04 != 0
	didLen := [4]int{0, 1, 2, 4}[fhd&3]
	fcsLen := [4]int{0, 2, 4, 8}[fhd>>6]
	if fcsLen == 0 && f.SingleSegment {
		fcsLen = 1
	}
	wdLen := 1
	if f.SingleSegment {
		wdLen = 0
	}
	f.HeaderSize = 5 + wdLen + didLen + fcsLen
	if len(h) < f.HeaderSize {
		return f.torn()
	}
	p := h[5:]
	if wdLen == 1 {
		exp, mantissa := uint64(p[0]>>3), uint64(p[0]&7)
		base := uint64(1) << (10 + exp)
		f.WindowSize = base + base/8*mantissa
	}
	p = p[wdLen:]
	var did uint32
	switch didLen {
	case 1:
		did = uint32(p[0])
	case 2:
		did = uint32(binary.LittleEndian.Uint16(p))
	case 4:
		did = binary.LittleEndian.Uint32(p)
	}
	if did != 0 {
		return frameError(ErrCorrupt, off, nil, "frame uses dictionary %d", did)
	}
	p = p[didLen:]
	switch fcsLen {
	case 1:
		f.ContentSize = int64(p[0])
	case 2:
		f.ContentSize = int64(binary.LittleEndian.Uint16(p)) + 256
	case 4:
		f.ContentSize = int64(binary.LittleEndian.Uint32(p))
	case 8:
		cs := binary.LittleEndian.Uint64(p)
		if cs > 1<<63-1 {
			return frameError(ErrCorrupt, off, nil, "content size %d out of range", cs)
		}
		f.ContentSize = int64(cs)
	}
	if f.SingleSegment {
		f.WindowSize = uint64(f.ContentSize)
	}
	return nil
}

// blocks walks the block headers of f, whose header parseHeader read, and
// its checksum, counting f.Blocks, and returns the offset past the frame.
func (s *source) blocks(f *Frame) (int64, error) {
	off := f.Offset
	// RFC 8878 3.1.1.2.4: Block_Maximum_Size is the smaller of Window_Size
	// and 128 KiB.
	blockMax := min(f.WindowSize, maxBlockSize)
	pos := off + int64(f.HeaderSize)
	for {
		bh, err := s.peek(pos, blockHeaderLen)
		if err != nil {
			return 0, err
		}
		if len(bh) < blockHeaderLen {
			return 0, f.torn()
		}
		v := uint32(bh[0]) | uint32(bh[1])<<8 | uint32(bh[2])<<16
		last, typ, bsize := v&1 != 0, (v>>1)&3, uint64(v>>3)
		payload := int64(bsize)
		switch typ {
		case 1: // RLE: one byte repeated bsize times
			payload = 1
		case 2: // compressed
			if bsize < 2 {
				return 0, frameError(ErrCorrupt, off, nil, "compressed block of %d bytes at byte %d", bsize, pos)
			}
		case 3:
			return 0, frameError(ErrCorrupt, off, nil, "reserved block type at byte %d", pos)
		}
		if bsize > blockMax {
			return 0, frameError(ErrCorrupt, off, nil, "block size %d exceeds maximum %d at byte %d", bsize, blockMax, pos)
		}
		f.Blocks++
		pos += blockHeaderLen + payload
		if pos > s.size {
			return 0, f.torn()
		}
		if last {
			break
		}
	}
	// No block decodes to more than blockMax, so a larger declared size
	// is false, whatever a decoder limit.
	if most := int64(f.Blocks) * int64(blockMax); f.ContentSize > most {
		return 0, frameError(ErrCorrupt, off, nil, "frame declares %d bytes of content, more than the %d its blocks can hold", f.ContentSize, most)
	}
	if f.HasChecksum {
		pos += checksumLen
		if pos > s.size {
			return 0, f.torn()
		}
	}
	return pos, nil
}

// Frames returns an iterator over the frames of the file r of the given
// size, in order, from offset 0. It holds one frame at a time, so it suits
// files of any length.
//
// Each complete frame is yielded with a nil error. The iteration ends after
// the last frame, or after yielding the first problem: a torn final frame
// (its Offset and Size set, error matching ErrTorn), corruption (error
// matching ErrCorrupt, Offset set) or an I/O error.
func Frames(r io.ReaderAt, size int64) iter.Seq2[Frame, error] {
	return newSource(r, size).frames()
}

func (s *source) frames() iter.Seq2[Frame, error] {
	return func(yield func(Frame, error) bool) {
		defer s.releaseBuf()
		for off := int64(0); off < s.size; {
			f, err := s.parseFrame(off)
			if !yield(f, err) || err != nil {
				return
			}
			off = f.End()
		}
	}
}

// Walk returns the complete frames of the file r of the given size, walking
// the frame structure forward from offset 0 without decompressing. If the
// file ends inside a frame, Walk returns that torn final frame's location
// in torn; it is not an error. On corruption or an I/O error Walk returns
// the frames before the problem and the error. Walk keeps every frame in
// memory; use Frames for huge files.
func Walk(r io.ReaderAt, size int64) (frames []Frame, torn Torn, err error) {
	return newSource(r, size).walk()
}

func (s *source) walk() (frames []Frame, torn Torn, err error) {
	for f, err := range s.frames() {
		if errors.Is(err, ErrTorn) {
			return frames, Torn{Offset: f.Offset, Size: f.Size}, nil
		}
		if err != nil {
			return frames, Torn{}, err
		}
		frames = append(frames, f)
	}
	return frames, Torn{}, nil
}
