package jsonl

import (
	"bytes"
	"context"
	"errors"
	"io"

	"github.com/dshctl/dshctl/internal/jsonl/osfs"
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

// physRecord is one complete line of a log as stored, or a run of empty
// lines.
type physRecord struct {
	line      []byte // including '\n' ("\n" for a run); valid until the next read
	size      int64  // bytes of decoded text it spans: len(line), or the run's length
	lines     int    // lines it spans: 1, or the run's length
	off       int64  // decoded text offset
	lineNo    int    // 1-based line of the decoded text
	frame     int    // frame index, -1 in a plain log
	frameOff  int64  // the frame's file offset (plain: the line's)
	frameSize int64
	frameText int64 // decoded offset of the frame's first byte
	first     bool  // first line of its frame: a resumable boundary
	// junk, for a line too long to hold that the byte check says is no
	// row, is why (and line is junkLine): a read takes it as an invalid
	// record without holding it. overLimit is the error of a reader that
	// must hold it.
	junk, overLimit error
}

// junkLine stands for the bytes of a junk record (physRecord.junk).
var junkLine = []byte("\x00\n")

// bodyReader yields the complete records of a log from a position on. It
// never returns a byte of a torn tail: a final line without '\n' or an
// incomplete final frame ends the read with io.EOF. A record longer than
// the log's record limit, or a frame whose content exceeds the frame
// limit, is an ErrLimit error naming it; a scan's budget is errBudget.
type bodyReader interface {
	next() (physRecord, error)
	// nextWith is next for the first record that holds pat; the records
	// before it are skipped in bulk, checked only as far as the encoding
	// requires (every zstd frame is still verified).
	nextWith(pat []byte) (physRecord, error)
	// torn is the size of the torn tail; valid after io.EOF.
	torn() int64
	close()
}

// budget bounds the work of a scan (seam.ScanOptions.MaxBytes): the file
// bytes it reads, the content bytes it decodes and the records it goes
// through. Zero fields are unbounded.
type budget struct {
	phys, decoded, records int64
}

// budgetFor is the budget of a scan with MaxBytes maxBytes.
func budgetFor(maxBytes int64) budget {
	if maxBytes <= 0 {
		return budget{}
	}
	return budget{phys: maxBytes, decoded: maxBytes * seam.ScanDecodedFactor, records: max(1, maxBytes/seam.ScanRecordCost)}
}

// newBodyReader returns a reader of l's records from p, for a file of size
// bytes, within budget b. ctx stops its decoding.
func (l *logFile) newBodyReader(ctx context.Context, p position, size int64, b budget) (bodyReader, error) {
	if l.enc == Zstd {
		d, err := l.decoder(ctx)
		if err != nil {
			return nil, err
		}
		z := &zstdReader{l: l, dec: d, pos: p, base: p.fileOff, budget: b, decoded0: d.Decoded(),
			shifted: &offsetReader{r: l.f, base: p.fileOff}, size: size - p.fileOff}
		if b == (budget{}) && z.size > 0 {
			// A read without a bound goes to the end: decode ahead.
			pd, err := l.decoder(ctx)
			if err != nil {
				l.putDecoder(d)
				return nil, err
			}
			z.pf = newPrefetcher(ctx, z, pd)
		}
		return z, nil
	}
	pr := &plainReader{l: l, pos: p, src: &section{ctx: ctx, r: l.f, off: p.fileOff, end: size, limit: b.phys}}
	pr.lr.reset(pr.src, l.lim.record)
	pr.lr.ra = pr.src
	return pr, nil
}

// section reads [off, end) of an io.ReaderAt sequentially, counting bytes
// and enforcing a read limit, until ctx is done.
type section struct {
	ctx      context.Context
	r        io.ReaderAt
	off, end int64
	n, limit int64
}

func (s *section) Read(p []byte) (int, error) {
	if err := s.ctx.Err(); err != nil {
		return 0, err
	}
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
	if err := osfs.ReadFullAt(s.r, p, s.off); err != nil {
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
	line, n, err := r.lr.next()
	return r.record(line, n, err)
}

func (r *plainReader) nextWith(pat []byte) (physRecord, error) {
	line, n, lines, skipped, err := r.lr.nextWith(pat)
	r.pos.fileOff += skipped
	r.pos.textOff += skipped
	r.pos.lineNo += int(lines)
	return r.record(line, n, err)
}

// record turns what the line reader returned into a record.
func (r *plainReader) record(line []byte, n int64, err error) (physRecord, error) {
	switch {
	case err == io.EOF:
		r.tornN = n
		return physRecord{}, io.EOF
	case errors.Is(err, errBudget):
		return physRecord{}, err
	case err != nil && !errors.Is(err, errLongLine):
		return physRecord{}, r.l.ioError(err, r.pos.fileOff)
	}
	var junk, overLimit error
	if err != nil {
		// Too long to hold: the byte check of its ends may still tell it
		// is no row (a hole of zeros, say), and then a read needs none of
		// it.
		overLimit = r.l.longRecord(n, r.l.pos(r.pos.fileOff, -1, r.pos.lineAt(r.pos.lineNo+1), -1))
		ok, why, rerr := couldBeRow(r.l.f, r.pos.fileOff, r.pos.fileOff+n-1)
		switch {
		case rerr != nil:
			return physRecord{}, r.l.ioError(rerr, r.pos.fileOff)
		case ok:
			return physRecord{}, overLimit
		}
		line, junk = junkLine, notRow(n, why)
	}
	rec := physRecord{line: line, size: n, lines: int(lineCount(line, n)), off: r.pos.textOff, lineNo: r.pos.lineNo + 1, frame: -1,
		frameOff: r.pos.fileOff, frameSize: n, frameText: r.pos.textOff, first: true, junk: junk, overLimit: overLimit}
	r.pos.fileOff += n
	r.pos.textOff += n
	r.pos.lineNo += rec.lines
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
	budget   budget
	n        int64 // file bytes of the frames entered
	decoded0 int64 // dec.Decoded() when the read started
	// pf, for a read without a bound, walks and decodes the frames ahead;
	// pfBuf is the content it gave for the current frame.
	pf    *prefetcher
	pfBuf []byte

	inFrame   bool
	cur       zstdframe.Frame
	curText   int64
	first     bool
	mem       []byte // the rest of a decoded frame
	memBuf    []byte // the storage of mem, reused frame after frame
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
		if z.streaming {
			line, n, err := z.lr.next()
			if rec, ok, err := z.streamRecord(line, n, err); ok || err != nil {
				return rec, err
			}
			continue
		}
		if len(z.mem) == 0 {
			z.leaveFrame()
			continue
		}
		i := bytes.IndexByte(z.mem, '\n')
		if i < 0 {
			return physRecord{}, z.unterminated()
		}
		n := int64(i + 1)
		line := z.mem[:i+1]
		if i == 0 {
			n = int64(newlines(z.mem))
			line = blankLine
		} else if int64(i) > z.l.lim.record {
			return physRecord{}, z.l.longRecord(n, z.l.pos(z.cur.Offset, z.pos.frameNo(), z.pos.lineAt(z.pos.lineNo+1), -1))
		}
		z.mem = z.mem[n:]
		return z.record(line, n), nil
	}
}

// streamRecord handles what the line reader returned for a streamed frame:
// a record (ok), the end of the frame (neither), or an error.
func (z *zstdReader) streamRecord(line []byte, n int64, err error) (physRecord, bool, error) {
	switch {
	case err == io.EOF:
		if n > 0 {
			return physRecord{}, false, z.unterminated()
		}
		z.leaveFrame()
		return physRecord{}, false, nil
	case errors.Is(err, errLongLine):
		return physRecord{}, false, z.l.longRecord(n, z.l.pos(z.cur.Offset, z.pos.frameNo(), z.pos.lineAt(z.pos.lineNo+1), -1))
	case err != nil:
		return physRecord{}, false, z.l.frameError(err, z.pos.frameNo(), 0)
	}
	return z.record(line, n), true, nil
}

// record returns the record line, spanning n bytes, at the current
// position, and moves past it.
func (z *zstdReader) record(line []byte, n int64) physRecord {
	rec := physRecord{line: line, size: n, lines: int(lineCount(line, n)), off: z.pos.textOff, lineNo: z.pos.lineNo + 1, frame: z.pos.frame,
		frameOff: z.cur.Offset, frameSize: z.cur.Size, frameText: z.curText, first: z.first}
	z.first = false
	z.pos.textOff += n
	z.pos.lineNo += rec.lines
	return rec
}

func (z *zstdReader) nextWith(pat []byte) (physRecord, error) {
	for {
		if !z.inFrame {
			if err := z.enterFrame(); err != nil {
				return physRecord{}, err
			}
			continue
		}
		if z.streaming {
			line, n, lines, skipped, err := z.lr.nextWith(pat)
			z.skip(lines, skipped)
			if rec, ok, err := z.streamRecord(line, n, err); ok || err != nil {
				return rec, err
			}
			continue
		}
		i := bytes.Index(z.mem, pat)
		if i < 0 {
			if len(z.mem) > 0 && z.mem[len(z.mem)-1] != '\n' {
				return physRecord{}, z.unterminated()
			}
			z.skip(int64(bytes.Count(z.mem, blankLine)), int64(len(z.mem)))
			z.mem = nil
			z.leaveFrame()
			continue
		}
		s := bytes.LastIndexByte(z.mem[:i], '\n') + 1
		z.skip(int64(bytes.Count(z.mem[:s], blankLine)), int64(s))
		z.mem = z.mem[s:]
		return z.next()
	}
}

// skip moves past lines lines of n bytes of the current frame.
func (z *zstdReader) skip(lines, n int64) {
	if n > 0 {
		z.first = false
	}
	z.pos.textOff += n
	z.pos.lineNo += int(lines)
}

func (z *zstdReader) unterminated() error {
	return z.l.errorf(seam.ErrCorrupt, z.l.pos(z.cur.Offset, z.pos.frameNo(), z.pos.lineAt(z.pos.lineNo+1), -1),
		"frame at byte %d does not end on a record boundary", z.cur.Offset)
}

// frameCap returns the most content the next frame may decode to, after
// used bytes were decoded: limit (the frame limit) or, when less is left
// of the decoded budget, that (then byBudget is set; 0 when none is left).
func (b budget) frameCap(limit, used int64) (n int64, byBudget bool) {
	if b.decoded > 0 {
		if left := b.decoded - used; left < limit {
			return max(left, 0), true
		}
	}
	return limit, false
}

func (z *zstdReader) enterFrame() error {
	if z.done || z.at >= z.size {
		return io.EOF
	}
	var f zstdframe.Frame
	var err error
	ahead := &prefetched{}
	if z.pf != nil {
		// The last frame's lines are done with: its buffer goes back.
		z.pf.recycle(z.pfBuf)
		z.pfBuf = nil
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
	if z.budget.phys > 0 && z.n+f.Size > z.budget.phys {
		return errBudget
	}
	capN, byBudget := z.budget.frameCap(z.l.lim.frame, z.dec.Decoded()-z.decoded0)
	if capN == 0 {
		return errBudget
	}
	z.dec.SetLimit(capN)
	z.n += f.Size
	z.cur, z.curText, z.first, z.inFrame = f, z.pos.textOff, true, true
	fail := func(err error) error {
		if byBudget && errors.Is(err, zstdframe.ErrTooLarge) {
			return errBudget
		}
		return z.l.frameError(err, z.pos.frameNo(), 0)
	}
	var content []byte
	switch {
	case z.pf == nil, ahead.large && capN <= frameMemLimit:
		// Without a prefetcher, or for the error of a frame over a limit
		// the prefetcher's in-memory decode cannot tell apart.
		content, err = z.dec.DecodeTo(&z.memBuf, z.l.f, f, min(frameMemLimit, capN))
	case ahead.large:
		err = frameTooLarge
	default:
		content, err = ahead.content, ahead.derr
		z.pfBuf = content
	}
	switch {
	case err == nil:
		z.mem, z.streaming = content, false
		return nil
	case !errors.Is(err, zstdframe.ErrTooLarge) || capN <= frameMemLimit:
		return fail(err)
	}
	// Too large to hold: verify it whole before serving a line of it, so
	// a damaged frame yields nothing (store.md 4), then stream it. The
	// storage the attempt to hold it grew is not kept meanwhile.
	z.memBuf = nil
	if err := z.dec.Verify(z.l.f, f); err != nil {
		return fail(err)
	}
	rd, err := z.dec.NewReader(z.l.f, f)
	if err != nil {
		return fail(err)
	}
	z.lr.reset(rd, z.l.lim.record)
	z.streaming = true
	return nil
}

// tornFrame decides what a frame the end of the file cuts is. A crash leaves a
// prefix of the last frame dsh was writing, so it is the torn final frame
// unless a complete frame follows inside it: then its structure is damaged
// and the frames after it are committed data, which a repair must not cut
// (verify reports the same finding).
func (z *zstdReader) tornFrame(f zstdframe.Frame) error {
	if err := z.l.checkTorn(z.shifted, z.dec, f.Offset-z.base, z.size, z.base, z.pos.frameNo()); err != nil {
		return err
	}
	z.tornN = f.Size
	return io.EOF
}

// checkTorn checks the torn final frame at off of src, a file of size
// bytes that starts base bytes into the log, frame number frame (-1: not
// known): a complete frame inside it makes it damaged structure
// (ErrCorrupt), not a torn tail.
func (l *logFile) checkTorn(src io.ReaderAt, d *zstdframe.Decoder, off, size, base int64, frame int) error {
	sc := zstdframe.NewScanner(src, off+1, size, d)
	at, found, err := sc.Resync(off + 1)
	sc.Close()
	switch {
	case err != nil:
		return l.ioError(err, off+base)
	case found:
		return l.errorf(seam.ErrCorrupt, l.pos(off+base, frame, -1, -1),
			"frame at byte %d runs past the end of the file, but a complete frame follows at byte %d", off+base, at+base)
	}
	return nil
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
		z.pf.recycle(z.pfBuf)
		z.pfBuf = nil
		z.pf.close()
	}
	z.l.putDecoder(z.dec)
}
