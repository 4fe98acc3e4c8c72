package jsonl

import (
	"bytes"
	"errors"
	"io"

	"github.com/dshctl/dshctl/internal/jsonl/zstdframe"
	"github.com/dshctl/dshctl/internal/seam"
)

// position is a record boundary where a forward read can start: any line
// start of a plain log, a frame start of a zstd log.
type position struct {
	fileOff int64 // byte offset in the file
	textOff int64 // byte offset in the decoded text
	lineNo  int   // lines of decoded text before it
	frame   int   // index of the frame starting at fileOff (zstd)
	// relative says lineNo and frame count from this position, whose own
	// numbers are unknown: a read that starts from the tail (the write
	// open) knows byte offsets only. Errors then give no line or frame.
	relative bool
}

// frameNo is the index of the current frame for a message, -1 when the
// numbering is relative.
func (p *position) frameNo() int {
	if p.relative {
		return -1
	}
	return p.frame
}

// lineAt is line for a message, -1 when the numbering is relative.
func (p *position) lineAt(line int) int {
	if p.relative {
		return -1
	}
	return line
}

// physRecord is one complete line of a log as stored.
type physRecord struct {
	line      []byte // including '\n'; valid until the next read
	off       int64  // decoded text offset
	lineNo    int    // 1-based line of the decoded text
	frame     int    // frame index, -1 in a plain log
	frameOff  int64  // the frame's file offset (plain: the line's)
	frameSize int64
	frameText int64 // decoded offset of the frame's first byte
	first     bool  // first line of its frame: a resumable boundary
}

// bodyReader yields the complete records of a log from a position on. It
// never returns a byte of a torn tail: a final line without '\n' or an
// incomplete final frame ends the read with io.EOF.
type bodyReader interface {
	next() (physRecord, error)
	// torn is the size of the torn tail; valid after io.EOF.
	torn() int64
	close()
}

// newBodyReader returns a reader of l's records from p, for a file of size
// bytes. limit bounds the physical bytes read (0: none); past it the reader
// fails with errBudget.
func (l *logFile) newBodyReader(p position, size, limit int64) (bodyReader, error) {
	if l.enc == Zstd {
		d, err := l.decs.get()
		if err != nil {
			return nil, err
		}
		z := &zstdReader{l: l, dec: d, pos: p, base: p.fileOff, limit: limit,
			shifted: &offsetReader{r: l.f, base: p.fileOff}, size: size - p.fileOff}
		if limit == 0 && z.size > 0 {
			// A read without a bound goes to the end: decode ahead.
			pd, err := l.decs.get()
			if err != nil {
				l.decs.put(d)
				return nil, err
			}
			z.pf = newPrefetcher(z, pd)
		}
		return z, nil
	}
	pr := &plainReader{l: l, pos: p, src: &section{r: l.f, off: p.fileOff, end: size, limit: limit}}
	pr.lr.reset(pr.src)
	return pr, nil
}

// section reads [off, end) of an io.ReaderAt sequentially, counting bytes
// and enforcing a read limit.
type section struct {
	r        io.ReaderAt
	off, end int64
	n, limit int64
}

func (s *section) Read(p []byte) (int, error) {
	if s.off >= s.end {
		return 0, io.EOF
	}
	if s.limit > 0 {
		if s.n >= s.limit {
			return 0, errBudget
		}
		p = p[:min(int64(len(p)), s.limit-s.n)]
	}
	p = p[:min(int64(len(p)), s.end-s.off)]
	if err := readFullAt(s.r, p, s.off); err != nil {
		return 0, err
	}
	s.off += int64(len(p))
	s.n += int64(len(p))
	return len(p), nil
}

// offsetReader shifts an io.ReaderAt so that offset 0 is base.
type offsetReader struct {
	r    io.ReaderAt
	base int64
}

func (o *offsetReader) ReadAt(p []byte, off int64) (int, error) { return o.r.ReadAt(p, off+o.base) }

type plainReader struct {
	l     *logFile
	lr    lineReader
	src   *section
	pos   position
	tornN int64
}

func (r *plainReader) next() (physRecord, error) {
	line, err := r.lr.next()
	if err == io.EOF {
		r.tornN = int64(len(line))
		return physRecord{}, io.EOF
	}
	if err != nil {
		if errors.Is(err, errBudget) {
			return physRecord{}, err
		}
		return physRecord{}, r.l.ioError(err, r.pos.fileOff)
	}
	rec := physRecord{line: line, off: r.pos.textOff, lineNo: r.pos.lineNo + 1, frame: -1,
		frameOff: r.pos.fileOff, frameSize: int64(len(line)), frameText: r.pos.textOff, first: true}
	r.pos.fileOff += int64(len(line))
	r.pos.textOff += int64(len(line))
	r.pos.lineNo++
	return rec, nil
}

func (r *plainReader) torn() int64 { return r.tornN }
func (r *plainReader) close()      {}

// zstdReader walks the frames of a zstd log and splits each complete frame
// into lines. Every frame is verified (decoded and its checksum checked)
// before any of its lines is returned: one that fits in frameMemLimit is
// decoded into memory once; a larger one is first decoded to io.Discard,
// which bounds memory by its window, and then decoded again as a stream.
type zstdReader struct {
	l   *logFile
	dec *zstdframe.Decoder
	// The frames are walked in shifted, the file from base on: at is the
	// offset of the next frame there, size the end; done is set after the
	// last frame or a problem.
	shifted  *offsetReader
	at, size int64
	done     bool
	base     int64    // the offset the frame walk starts at
	pos      position // the current frame's index, and the text and line counts
	limit    int64
	n        int64
	// pf, for a read without a bound, walks and decodes the frames ahead.
	pf *prefetcher

	inFrame   bool
	cur       zstdframe.Frame
	curText   int64
	first     bool
	mem       []byte // the rest of a decoded frame
	streaming bool
	lr        lineReader
	tornN     int64
}

// frameMemLimit is the decoded size up to which a frame is verified before
// its lines are used.
const frameMemLimit = 16 << 20

func (z *zstdReader) next() (physRecord, error) {
	for {
		if !z.inFrame {
			if err := z.enterFrame(); err != nil {
				return physRecord{}, err
			}
			continue
		}
		var line []byte
		if z.streaming {
			l, err := z.lr.next()
			if err != nil && err != io.EOF {
				return physRecord{}, z.l.frameError(err, z.pos.frameNo(), 0)
			}
			if err == io.EOF {
				if len(l) > 0 {
					return physRecord{}, z.unterminated()
				}
				z.leaveFrame()
				continue
			}
			line = l
		} else {
			if len(z.mem) == 0 {
				z.leaveFrame()
				continue
			}
			i := bytes.IndexByte(z.mem, '\n')
			if i < 0 {
				return physRecord{}, z.unterminated()
			}
			line, z.mem = z.mem[:i+1], z.mem[i+1:]
		}
		rec := physRecord{line: line, off: z.pos.textOff, lineNo: z.pos.lineNo + 1, frame: z.pos.frame,
			frameOff: z.cur.Offset, frameSize: z.cur.Size, frameText: z.curText, first: z.first}
		z.first = false
		z.pos.textOff += int64(len(line))
		z.pos.lineNo++
		return rec, nil
	}
}

func (z *zstdReader) unterminated() error {
	return z.l.errorf(seam.ErrCorrupt, z.l.pos(z.cur.Offset, z.pos.frameNo(), z.pos.lineAt(z.pos.lineNo+1), -1),
		"frame at byte %d does not end on a record boundary", z.cur.Offset)
}

func (z *zstdReader) enterFrame() error {
	if z.done || z.at >= z.size {
		return io.EOF
	}
	var f zstdframe.Frame
	var err error
	var ahead prefetched
	if z.pf != nil {
		ahead = z.pf.next()
		f, err = ahead.f, ahead.perr
	} else {
		f, err = zstdframe.ParseFrame(z.shifted, z.at, z.size)
	}
	if err != nil {
		z.done = true
	}
	z.at = f.End()
	f.Offset += z.base
	if errors.Is(err, zstdframe.ErrTorn) {
		return z.tornFrame(f)
	}
	if err != nil {
		return z.l.frameError(err, z.pos.frameNo(), z.base)
	}
	if z.limit > 0 && z.n+f.Size > z.limit {
		return errBudget
	}
	z.n += f.Size
	z.cur, z.curText, z.first, z.inFrame = f, z.pos.textOff, true, true
	var content []byte
	switch {
	case z.pf == nil:
		content, err = z.dec.DecodeAll(z.l.f, f, frameMemLimit)
	case ahead.large:
		err = frameTooLarge
	default:
		content, err = ahead.content, ahead.derr
	}
	switch {
	case err == nil:
		z.mem, z.streaming = content, false
		return nil
	case !errors.Is(err, zstdframe.ErrTooLarge):
		return z.l.frameError(err, z.pos.frameNo(), 0)
	}
	// Too large to hold: verify it whole before serving a line of it, so
	// a damaged frame yields nothing (store.md 4), then stream it.
	if err := z.dec.Verify(z.l.f, f); err != nil {
		return z.l.frameError(err, z.pos.frameNo(), 0)
	}
	rd, err := z.dec.NewReader(z.l.f, f)
	if err != nil {
		return z.l.frameError(err, z.pos.frameNo(), 0)
	}
	z.lr.reset(rd)
	z.streaming = true
	return nil
}

// tornFrame decides what a frame the end of the file cuts is. A crash leaves a
// prefix of the last frame dsh was writing, so it is the torn final frame
// unless a complete frame follows inside it: then its structure is damaged
// and the frames after it are committed data, which a repair must not cut
// (verify reports the same finding).
func (z *zstdReader) tornFrame(f zstdframe.Frame) error {
	sc := zstdframe.NewScanner(z.shifted, f.Offset-z.base+1, z.size, z.dec)
	at, found, err := sc.Resync(f.Offset - z.base + 1)
	sc.Close()
	if err != nil {
		return z.l.ioError(err, f.Offset)
	}
	if found {
		return z.l.errorf(seam.ErrCorrupt, z.l.pos(f.Offset, z.pos.frameNo(), -1, -1),
			"frame at byte %d runs past the end of the file, but a complete frame follows at byte %d", f.Offset, at+z.base)
	}
	z.tornN = f.Size
	return io.EOF
}

func (z *zstdReader) leaveFrame() {
	z.inFrame = false
	z.pos.frame++
	z.pos.fileOff = z.cur.End()
}

// frameTooLarge stands for the ErrTooLarge the prefetcher's DecodeAll gave.
var frameTooLarge = &zstdframe.Error{Kind: zstdframe.ErrTooLarge}

func (z *zstdReader) torn() int64 { return z.tornN }
func (z *zstdReader) close() {
	if z.pf != nil {
		z.pf.close()
	}
	z.l.decs.put(z.dec)
}
