package zstdframe

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/klauspost/compress/zstd"
)

const (
	// maxWindow is the largest window a Decoder accepts. dsh writes 2 MiB
	// windows, the zstd CLI uses at most 8 MiB below --ultra/--long, and
	// RFC 8878 recommends that decoders support 8 MiB. A stream decode
	// holds about one window plus one block, whatever the content size.
	maxWindow = 8 << 20
	// maxMemory caps what klauspost may allocate for one frame. In streaming
	// mode it bounds the window too, so it is a hard ceiling should the
	// window limit ever be raised.
	maxMemory = 64 << 20
	// maxPrealloc caps the buffer DecodeAll sizes from a frame's declared
	// content size before decoding proves it.
	maxPrealloc = 4 << 20
	// maxSmallFrame bounds the frames decoded whole (decodeSmall), and so
	// the input buffer a Decoder keeps, to one maximum-size block. dsh
	// frames are append batches of a few KiB; a larger frame takes tens of
	// µs or more to decode, next to which the stream decoder's fixed cost
	// (about 0.5 µs and 5 allocations) is small, and streaming bounds its
	// memory by the window.
	maxSmallFrame = 128 << 10
	// maxSmallContent bounds the content decoded in memory, and so the
	// output buffer a Decoder keeps.
	maxSmallContent = 1 << 20
	// minSmallOut is the least output buffer a Decoder allocates for a
	// frame that declares its size, so that frames of growing size do not
	// reallocate it each time.
	minSmallOut = 64 << 10
	// smallRatio is the content-to-frame size ratio the output buffer is
	// sized for when the header omits the content size.
	smallRatio = 16
	// decodeSlack is the room klauspost's fast copies want past the
	// content (its compressedBlockOverAlloc, 32, with a margin).
	decodeSlack = 64
	// DefaultMaxContent is the most content a Decoder decodes from one
	// frame unless SetLimit says otherwise. A few KiB of RLE blocks can
	// declare a GiB: past the limit a frame is ErrTooLarge, whatever its
	// header says, so no frame costs more than this much work.
	DefaultMaxContent = 256 << 20
)

// A Decoder decodes the content of single complete frames. It verifies
// each frame's checksum, holds at most one window of content in memory
// and decodes on the calling goroutine. It decodes small frames whole,
// into buffers of at most maxSmallFrame and maxSmallContent bytes that it
// keeps. A Decoder is reusable but not safe for concurrent use; Close it
// when done.
type Decoder struct {
	zd *zstd.Decoder // streams
	// za decodes small frames whole (decodeSmall). It is not zd: with
	// concurrency 1 a stream and DecodeAll share zd's one block decoder.
	za  *zstd.Decoder
	br  *bufio.Reader
	in  []byte // a small frame read from the file
	out []byte // the content of the last small frame decoded
	gen uint64 // counts uses, so a stale reader fails

	limit   int64           // the most content decoded from one frame
	ctx     context.Context // stops decoding when done; nil never does
	decoded int64           // content bytes decoded, all frames
}

// SetLimit sets the most content the decoder decodes from one frame: a
// frame that declares or decodes to more fails with ErrTooLarge, having
// cost at most n bytes of work. n <= 0 restores DefaultMaxContent.
func (d *Decoder) SetLimit(n int64) {
	if n <= 0 {
		n = DefaultMaxContent
	}
	d.limit = n
}

// SetContext makes the decoder stop when ctx is done: reads of frame
// content, and LastFrame's search, then fail with ctx's error. A nil ctx
// never stops it.
func (d *Decoder) SetContext(ctx context.Context) { d.ctx = ctx }

// Decoded returns the content bytes the decoder has decoded so far, over
// all frames: a measure of the work done, for budgets.
func (d *Decoder) Decoded() int64 { return d.decoded }

// cancelled returns the error of the decoder's context, if it is done.
func (d *Decoder) cancelled() error {
	if d.ctx == nil {
		return nil
	}
	return d.ctx.Err()
}

// NewDecoder returns a Decoder.
func NewDecoder() (*Decoder, error) {
	opts := []zstd.DOption{
		zstd.WithDecoderConcurrency(1),
		zstd.WithDecoderMaxWindow(maxWindow),
		zstd.WithDecoderMaxMemory(maxMemory),
	}
	// With the cap limit, DecodeAll fails with ErrDecoderSizeExceeded
	// rather than decode past the capacity of its destination.
	za, err := zstd.NewReader(nil, append(opts, zstd.WithDecodeAllCapLimit(true))...)
	if err != nil {
		return nil, fmt.Errorf("zstdframe: new decoder: %w", err)
	}
	zd, err := zstd.NewReader(nil, opts...)
	if err != nil {
		za.Close()
		return nil, fmt.Errorf("zstdframe: new decoder: %w", err)
	}
	return &Decoder{zd: zd, za: za, br: bufio.NewReaderSize(nil, 64<<10), limit: DefaultMaxContent}, nil
}

// Close releases the decoder's resources. The Decoder and its readers must
// not be used afterwards.
func (d *Decoder) Close() {
	d.zd.Close()
	d.za.Close()
}

// NewReader returns a reader of the content of frame f of r, where f was
// returned by ParseFrame, Frames, Walk or LastFrame for the same file.
//
// NewReader first checks that the bytes at f.Offset still hold a complete
// frame of f.Size bytes, so content of a torn frame is never produced. The
// checksum covers the whole content and is verified at the end: the reader
// returns io.EOF only after it matched, and data read before an error must
// not be trusted. Decoding errors are *Error values matching ErrCorrupt
// (or ErrTooLarge), located at f.Offset.
//
// The reader is valid until d is used again, also by LastFrame.
func (d *Decoder) NewReader(r io.ReaderAt, f Frame) (io.Reader, error) {
	if f.Size <= 0 || f.Offset < 0 {
		return nil, fmt.Errorf("zstdframe: invalid frame location %d+%d", f.Offset, f.Size)
	}
	if err := d.cancelled(); err != nil {
		return nil, err
	}
	g, err := checkFrame(subSource(r, f), f)
	if err != nil {
		return nil, err
	}
	if g.ContentSize > d.limit {
		return nil, d.tooLarge(f.Offset, g.ContentSize)
	}
	d.gen++
	d.br.Reset(&sectionReader{sr: io.NewSectionReader(r, f.Offset, f.Size), off: f.Offset})
	if err := d.zd.Reset(d.br); err != nil {
		return nil, d.decodeError(f.Offset, err)
	}
	return &frameReader{d: d, off: f.Offset, gen: d.gen}, nil
}

// tooLarge reports a frame at off whose content is n bytes or more,
// beyond the decoder's limit.
func (d *Decoder) tooLarge(off, n int64) error {
	return contentError(off, n, d.limit)
}

// contentError reports a frame at off whose content is n bytes or more,
// beyond limit.
func contentError(off, n, limit int64) error {
	e := frameError(ErrTooLarge, off, nil, "content of %d bytes or more exceeds the limit of %d", n, limit)
	e.limit = limit
	return e
}

// subSource returns a source of the bytes [0, f.End()) of r. When r is a
// source whose loaded tail holds the frame, the result reads it from
// there: the same bytes, without a read-ahead buffer.
func subSource(r io.ReaderAt, f Frame) *source {
	s := &source{r: r, size: f.End()}
	if rs, ok := r.(*source); ok && f.End() <= rs.size {
		if tailOff := rs.size - int64(len(rs.tail)); f.Offset >= tailOff {
			s.tail = rs.tail[f.Offset-tailOff : f.End()-tailOff]
		}
	}
	return s
}

// checkFrame re-parses frame f from s, a subSource for it, and checks
// that it is still f.Size bytes and within the window limit. It returns
// the frame parsed.
func checkFrame(s *source, f Frame) (Frame, error) {
	g, err := s.parseFrame(f.Offset)
	s.releaseBuf()
	if err != nil {
		return g, err
	}
	if g.Size != f.Size {
		return g, frameError(ErrCorrupt, f.Offset, nil, "frame is %d bytes, not %d", g.Size, f.Size)
	}
	if g.WindowSize > maxWindow {
		return g, frameError(ErrTooLarge, f.Offset, nil, "window of %d bytes exceeds %d", g.WindowSize, maxWindow)
	}
	return g, nil
}

// decodeSmall decodes frame f of r whole, if it is small, into d.out and
// reports whether it did; the content is valid until d is used again. It
// declines every failure, for the stream path to decide and report as
// before, and so answers only where the stream path succeeds with the
// same content:
//
//   - It makes NewReader's checks on the same bytes.
//   - klauspost's DecodeAll makes the stream decoder's checks (block
//     sizes, match offsets, content size, checksum), but with all the
//     output as history, where the stream keeps one window. The output
//     buffer holds at most WindowSize bytes, or the declared content
//     size (itself at most WindowSize) and a slack that content which
//     decodes only fails, so an offset within the output is within the
//     window too.
//   - DecodeAll fails where the content overruns the buffer, with
//     ErrDecoderSizeExceeded or, inside a block, with what reads as
//     corruption ("output bigger than max block size"): no verdict.
func (d *Decoder) decodeSmall(r io.ReaderAt, f Frame) ([]byte, bool) {
	return d.decodeSmallTo(&d.out, r, f)
}

// decodeSmallTo is decodeSmall decoding into the storage of *buf (which
// keeps it as it grew) instead of d.out.
func (d *Decoder) decodeSmallTo(buf *[]byte, r io.ReaderAt, f Frame) ([]byte, bool) {
	d.gen++ // as for NewReader: any use ends the open reader
	if f.Size <= 0 || f.Size > maxSmallFrame || f.Offset < 0 {
		return nil, false
	}
	s := subSource(r, f)
	if s.tail == nil {
		if cap(d.in) < int(f.Size) {
			d.in = make([]byte, f.Size)
		}
		if readFull(r, d.in[:f.Size], f.Offset) != nil {
			return nil, false
		}
		s.tail = d.in[:f.Size]
	}
	g, err := checkFrame(s, f)
	if err != nil {
		return nil, false
	}
	maxOut := min(int64(min(g.WindowSize, maxSmallContent)), d.limit)
	n := g.ContentSize
	if n > maxOut {
		return nil, false
	}
	// The output is capped at maxOut, and so at the window. klauspost
	// decodes a block with its slower, bounds-exact copies unless the cap
	// leaves room past it. A declared content size holds the output to n
	// by itself (klauspost fails the frame as soon as it passes it), so
	// then the cap is n and a slack. Else (dsh's frames declare no size)
	// the buffer is a guess from the frame's size and a block more, and
	// content past it is decoded by the stream path again.
	capOut := maxOut
	want := min(maxOut, max(smallRatio*f.Size, minSmallOut)+maxBlockSize+decodeSlack)
	if g.ContentSize >= 0 {
		capOut = n + decodeSlack
		want = max(capOut, min(maxOut, minSmallOut))
	}
	if int64(cap(*buf)) < min(capOut, want) {
		*buf = make([]byte, 0, want)
	}
	out, err := d.za.DecodeAll(s.tail, (*buf)[:0:min(int64(cap(*buf)), capOut)])
	if err != nil {
		return nil, false
	}
	d.decoded += int64(len(out))
	// The content in the storage whole: a caller that gives it back for
	// the next frame gives all of it.
	return (*buf)[:len(out)], true
}

// clone returns a copy of content that the caller may keep: never nil,
// as nil stands for content not kept.
func clone(content []byte) []byte {
	return append([]byte{}, content...)
}

// DecodeAll returns the content of frame f of r, as NewReader would read
// it, or an error matching ErrTooLarge if the content exceeds limit bytes.
func (d *Decoder) DecodeAll(r io.ReaderAt, f Frame, limit int64) ([]byte, error) {
	return d.DecodeTo(nil, r, f, limit)
}

// DecodeTo is DecodeAll decoding into the storage of *buf, overwriting it,
// when buf is not nil: *buf keeps the storage as the decoding grew it, also
// when the frame turns out too large, so that a reader of frame after
// frame reuses one buffer instead of leaving one behind per frame.
func (d *Decoder) DecodeTo(buf *[]byte, r io.ReaderAt, f Frame, limit int64) ([]byte, error) {
	if f.ContentSize > limit {
		return nil, contentError(f.Offset, f.ContentSize, limit)
	}
	if buf == nil {
		if content, ok := d.decodeSmall(r, f); ok {
			// The stream path reads limit+1 bytes of the same content.
			if int64(len(content)) > limit {
				return nil, contentError(f.Offset, limit+1, limit)
			}
			return clone(content), nil
		}
	} else if content, ok := d.decodeSmallTo(buf, r, f); ok {
		if int64(len(content)) > limit {
			return nil, contentError(f.Offset, limit+1, limit)
		}
		return content, nil
	}
	return d.decodeAllStream(buf, r, f, limit)
}

// decodeAllStream is DecodeTo by the stream decoder, after the content
// size check.
func (d *Decoder) decodeAllStream(buf *[]byte, r io.ReaderAt, f Frame, limit int64) ([]byte, error) {
	var into []byte
	if buf != nil {
		into = *buf
	}
	content, over, _, err := d.readUpTo(into, r, f, limit)
	if buf != nil && cap(content) > cap(*buf) {
		*buf = content[:0]
	}
	if err != nil {
		return nil, err
	}
	if over {
		return nil, contentError(f.Offset, limit+1, limit)
	}
	return content, nil
}

// readUpTo streams frame f of r and reads its content, into into's
// storage if it is large enough, up to n bytes: all of it, verified, when
// it is at most n bytes, else n bytes, over set and the reader positioned
// after one more. The buffer grows by doubling, but never past n bytes: one
// byte past them is read into a scratch byte, so a frame over the limit
// does not cost a copy of its first n bytes to hold one more. On an error
// it returns the storage read into, with no content.
func (d *Decoder) readUpTo(into []byte, r io.ReaderAt, f Frame, n int64) (content []byte, over bool, rd io.Reader, err error) {
	rd, err = d.NewReader(r, f)
	if err != nil {
		return into[:0], false, nil, err
	}
	buf := into[:0]
	if n < 0 {
		return buf, true, rd, nil // even empty content is over
	}
	if want := preallocFor(f, n); cap(buf) < want {
		buf = make([]byte, 0, want)
	}
	for {
		if int64(len(buf)) >= n {
			var one [1]byte
			m, err := io.ReadFull(rd, one[:])
			if err == io.EOF {
				return buf, false, rd, nil
			}
			if err != nil {
				return buf[:0], false, nil, err
			}
			return buf, m == 1, rd, nil
		}
		if len(buf) == cap(buf) {
			nb := make([]byte, len(buf), min(int64(2*cap(buf)), n))
			copy(nb, buf)
			buf = nb
		}
		m, err := rd.Read(buf[len(buf):int(min(int64(cap(buf)), n))])
		buf = buf[:len(buf)+m]
		if err == io.EOF {
			return buf, false, rd, nil
		}
		if err != nil {
			return buf[:0], false, nil, err
		}
	}
}

// preallocFor is the buffer size to decode frame f into, at most limit
// bytes of content: its declared content size (trusted only so far: it is
// checked at the end), or else a guess from its compressed size, so that a
// typical frame is decoded without growing the buffer. The extra bytes
// spare ReadFrom, which wants room for a minimum read, a final grow.
func preallocFor(f Frame, limit int64) int {
	n := f.ContentSize
	if n < 0 {
		n = 4 * f.Size
	}
	return int(min(n, limit, maxPrealloc) + bytes.MinRead)
}

// Verify decodes frame f of r without keeping its content, to check that
// it decodes and that its checksum matches. Memory stays bounded by the
// frame's window, so it suits frames too large for DecodeAll. Errors are
// those of NewReader and of reading its content.
func (d *Decoder) Verify(r io.ReaderAt, f Frame) error { return d.verify(r, f) }

// verify decodes frame f of r to check its content and checksum.
func (d *Decoder) verify(r io.ReaderAt, f Frame) error {
	if _, ok := d.decodeSmall(r, f); ok {
		return nil
	}
	return d.verifyStream(r, f)
}

// verifyStream is verify by the stream decoder.
func (d *Decoder) verifyStream(r io.ReaderAt, f Frame) error {
	rd, err := d.NewReader(r, f)
	if err != nil {
		return err
	}
	_, err = io.Copy(io.Discard, rd)
	return err
}

// verifyKeep is verify, also returning the content when keep > 0 and the
// content is at most keep bytes (nil otherwise).
func (d *Decoder) verifyKeep(r io.ReaderAt, f Frame, keep int64) ([]byte, error) {
	content, ok := d.decodeSmall(r, f)
	if !ok {
		return d.verifyKeepStream(r, f, keep)
	}
	if keep <= 0 || f.ContentSize > keep || int64(len(content)) > keep {
		return nil, nil
	}
	return clone(content), nil
}

// verifyKeepStream is verifyKeep by the stream decoder.
func (d *Decoder) verifyKeepStream(r io.ReaderAt, f Frame, keep int64) ([]byte, error) {
	if keep <= 0 || f.ContentSize > keep {
		return nil, d.verifyStream(r, f)
	}
	content, over, rd, err := d.readUpTo(nil, r, f, keep)
	if err != nil {
		return nil, err
	}
	if !over {
		// The limit was not reached, so the reader hit io.EOF: verified.
		return content, nil
	}
	// Too large to keep: finish verifying without it.
	if _, err := io.Copy(io.Discard, rd); err != nil {
		return nil, err
	}
	return nil, nil
}

// decodeError classifies an error from the klauspost decoder for the frame
// at off. Read errors from the file pass through unchanged. Everything else
// is corruption: the window was checked against the limits beforehand, and
// klauspost also reports data that overruns the window as "window size
// exceeded".
func (d *Decoder) decodeError(off int64, err error) error {
	var rerr *readError
	switch {
	case errors.As(err, &rerr):
		return err
	case errors.Is(err, zstd.ErrCRCMismatch):
		e := frameError(ErrCorrupt, off, nil, "checksum mismatch")
		e.rule = ErrChecksum
		return e
	}
	return frameError(ErrCorrupt, off, err, "content does not decode")
}

// frameReader reads the content of one frame through its Decoder.
type frameReader struct {
	d   *Decoder
	off int64
	gen uint64
	n   int64 // content bytes read
	err error
}

func (fr *frameReader) Read(p []byte) (int, error) {
	if fr.err != nil {
		return 0, fr.err
	}
	if fr.gen != fr.d.gen {
		fr.err = fmt.Errorf("zstdframe: reader of frame at byte %d used after its Decoder moved on", fr.off)
		return 0, fr.err
	}
	if err := fr.d.cancelled(); err != nil {
		fr.err = err
		return 0, err
	}
	// Never more than one byte past the limit: that byte proves the
	// content too large.
	if left := fr.d.limit + 1 - fr.n; int64(len(p)) > left {
		p = p[:left]
	}
	n, err := fr.d.zd.Read(p)
	fr.n += int64(n)
	fr.d.decoded += int64(n)
	if fr.n > fr.d.limit {
		n, err = n-1, fr.d.tooLarge(fr.off, fr.n)
	}
	if err != nil {
		if err != io.EOF && !errors.Is(err, ErrTooLarge) {
			err = fr.d.decodeError(fr.off, err)
		}
		fr.err = err
	}
	return n, err
}

// sectionReader reads one frame's bytes and marks read failures as
// *readError, so that decodeError does not mistake them for corruption.
type sectionReader struct {
	sr  *io.SectionReader
	off int64
}

func (s *sectionReader) Read(p []byte) (int, error) {
	n, err := s.sr.Read(p)
	if err != nil && err != io.EOF {
		pos, _ := s.sr.Seek(0, io.SeekCurrent)
		err = &readError{off: s.off + pos, err: err}
	}
	return n, err
}
