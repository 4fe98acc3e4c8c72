package zstdframe

import (
	"bufio"
	"bytes"
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
)

// A Decoder decodes the content of single complete frames. It verifies
// each frame's checksum, holds at most one window of content in memory
// and decodes on the calling goroutine. A Decoder is reusable but not safe
// for concurrent use; Close it when done.
type Decoder struct {
	zd  *zstd.Decoder
	br  *bufio.Reader
	gen uint64 // counts NewReader calls, so a stale reader fails
}

// NewDecoder returns a Decoder.
func NewDecoder() (*Decoder, error) {
	zd, err := zstd.NewReader(nil,
		zstd.WithDecoderConcurrency(1),
		zstd.WithDecoderMaxWindow(maxWindow),
		zstd.WithDecoderMaxMemory(maxMemory),
	)
	if err != nil {
		return nil, fmt.Errorf("zstdframe: new decoder: %w", err)
	}
	return &Decoder{zd: zd, br: bufio.NewReaderSize(nil, 64<<10)}, nil
}

// Close releases the decoder's resources. The Decoder and its readers must
// not be used afterwards.
func (d *Decoder) Close() {
	d.zd.Close()
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
	ss := subSource(r, f)
	g, err := ss.parseFrame(f.Offset)
	ss.releaseBuf()
	if err != nil {
		return nil, err
	}
	if g.Size != f.Size {
		return nil, frameError(ErrCorrupt, f.Offset, nil, "frame is %d bytes, not %d", g.Size, f.Size)
	}
	if g.WindowSize > maxWindow {
		return nil, frameError(ErrTooLarge, f.Offset, nil, "window of %d bytes exceeds %d", g.WindowSize, maxWindow)
	}
	d.gen++
	d.br.Reset(&sectionReader{sr: io.NewSectionReader(r, f.Offset, f.Size), off: f.Offset})
	if err := d.zd.Reset(d.br); err != nil {
		return nil, d.decodeError(f.Offset, err)
	}
	return &frameReader{d: d, off: f.Offset, gen: d.gen}, nil
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

// DecodeAll returns the content of frame f of r, as NewReader would read
// it, or an error matching ErrTooLarge if the content exceeds limit bytes.
func (d *Decoder) DecodeAll(r io.ReaderAt, f Frame, limit int64) ([]byte, error) {
	if f.ContentSize > limit {
		return nil, frameError(ErrTooLarge, f.Offset, nil, "content of %d bytes exceeds limit %d", f.ContentSize, limit)
	}
	rd, err := d.NewReader(r, f)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	buf.Grow(preallocFor(f, limit))
	if _, err := buf.ReadFrom(io.LimitReader(rd, max(limit, limit+1))); err != nil {
		return nil, err
	}
	if int64(buf.Len()) > limit {
		return nil, frameError(ErrTooLarge, f.Offset, nil, "content exceeds limit %d", limit)
	}
	return buf.Bytes(), nil
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
	if keep <= 0 || f.ContentSize > keep {
		return nil, d.verify(r, f)
	}
	rd, err := d.NewReader(r, f)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	buf.Grow(preallocFor(f, keep))
	if _, err := buf.ReadFrom(io.LimitReader(rd, keep+1)); err != nil {
		return nil, err
	}
	if int64(buf.Len()) <= keep {
		// The limit was not reached, so the reader hit io.EOF: verified.
		return buf.Bytes(), nil
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
		return frameError(ErrCorrupt, off, nil, "checksum mismatch")
	}
	return frameError(ErrCorrupt, off, err, "content does not decode")
}

// frameReader reads the content of one frame through its Decoder.
type frameReader struct {
	d   *Decoder
	off int64
	gen uint64
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
	n, err := fr.d.zd.Read(p)
	if err != nil {
		if err != io.EOF {
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
