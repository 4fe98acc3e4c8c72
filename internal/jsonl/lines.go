package jsonl

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/dshctl/dshctl/internal/jsonl/osfs"
	"github.com/dshctl/dshctl/internal/seam"
)

// errLongLine reports a line longer than a reader's maximum. The reader
// skipped it without keeping its bytes; the caller knows its length and
// where it starts, and names it (store.md leaves records unbounded; a
// reader that holds one in memory may not).
var errLongLine = errors.New("record too long")

// blankLine is what the readers return for a run of empty lines.
var blankLine = []byte{'\n'}

// lineReader splits a stream into '\n'-terminated lines, holding at most
// about twice max bytes plus a buffer, whatever the stream holds (a long
// line is gathered in parts, then joined into a buffer kept for the next
// one):
//
//   - a line longer than max (without its '\n') is consumed without being
//     kept and reported as errLongLine, with its length;
//   - a run of empty lines comes back as one: the line "\n" with n the
//     run's length (each empty line is one byte), so a stream of nothing
//     but newlines costs no work per line.
type lineReader struct {
	src  io.Reader
	buf  []byte
	r, w int
	eof  bool
	err  error
	max  int64
	// parts holds the start of a line longer than buf: whole buffers,
	// handed over as they filled, joined once the line ends. Growing one
	// buffer instead would hold the old and the new one at each step.
	parts   [][]byte
	partLen int64
	joined  []byte // the last joined line's buffer, reused
	// ra, when set, is the section of a file the stream reads: a line
	// that fills the buffer is then found ahead in the file and read
	// whole, or skipped, instead of being gathered.
	ra *section
}

const (
	lineChunk = 64 << 10
	// maxPart bounds the buffers a long line is gathered in.
	maxPart = 1 << 20
)

func (lr *lineReader) reset(src io.Reader, max int64) {
	lr.src, lr.r, lr.w, lr.eof, lr.err, lr.max = src, 0, 0, false, nil, max
	lr.parts, lr.partLen = nil, 0
	if lr.buf == nil {
		lr.buf = make([]byte, lineChunk)
	}
}

// next returns the next line including its '\n' and its length n (for a
// run of empty lines, the run's). At the end of the stream it returns the
// unterminated rest, its length and io.EOF; the rest is nil when it was
// too long to keep (its length is still right). A line longer than max is
// errLongLine with a nil line. The line is valid until the next call.
func (lr *lineReader) next() (line []byte, n int64, err error) {
	scanned := 0
	for {
		if i := bytes.IndexByte(lr.buf[lr.r+scanned:lr.w], '\n'); i >= 0 {
			end := lr.r + scanned + i + 1
			if lr.parts != nil {
				return lr.join(end)
			}
			line = lr.buf[lr.r:end]
			lr.r = end
			if len(line) == 1 {
				return blankLine, 1 + lr.blankRun(), nil
			}
			if int64(len(line))-1 > lr.max {
				return nil, int64(len(line)), errLongLine
			}
			return line, int64(len(line)), nil
		}
		scanned = lr.w - lr.r
		if lr.partLen+int64(scanned) > lr.max {
			return lr.skipLong()
		}
		if lr.ra != nil && lr.r == 0 && lr.w == len(lr.buf) && !lr.eof && lr.err == nil {
			return lr.longAhead()
		}
		if lr.eof || lr.err != nil {
			return lr.rest()
		}
		if lr.fill() {
			scanned = 0 // the buffer scanned was handed over
		}
	}
}

// longAhead returns the line that fills the buffer, reading on in the
// file to find its end first: the line is then read whole if it is not
// too long, and never held in parts.
func (lr *lineReader) longAhead() ([]byte, int64, error) {
	s := lr.ra
	start := s.off - int64(lr.w)
	lr.r, lr.w = 0, 0
	pos := s.off
	for {
		n, err := s.Read(lr.buf)
		if i := bytes.IndexByte(lr.buf[:n], '\n'); i >= 0 {
			end := pos + int64(i) + 1
			// Give back what was read past the line.
			s.n -= s.off - end
			s.off = end
			return lr.wholeLine(start, end)
		}
		pos += int64(n)
		if err == io.EOF {
			lr.eof = true
			return nil, pos - start, io.EOF
		}
		if err != nil {
			lr.err = err
			return nil, pos - start, err
		}
	}
}

// wholeLine reads the line [start, end) of lr.ra's file, unless it is
// longer than max.
func (lr *lineReader) wholeLine(start, end int64) ([]byte, int64, error) {
	n := end - start
	if n-1 > lr.max {
		return nil, n, errLongLine
	}
	if int64(cap(lr.joined)) < n {
		lr.joined = make([]byte, n)
	}
	line := lr.joined[:n]
	if err := osfs.ReadFullAt(lr.ra.r, line, start); err != nil {
		lr.err = err
		return nil, n, err
	}
	return line, n, nil
}

// rest returns the unterminated end of the stream.
func (lr *lineReader) rest() ([]byte, int64, error) {
	line := lr.buf[lr.r:lr.w]
	n := lr.partLen + int64(len(line))
	if lr.parts != nil {
		line = nil
	}
	lr.r, lr.parts, lr.partLen = lr.w, nil, 0
	if lr.err != nil {
		return line, n, lr.err
	}
	return line, n, io.EOF
}

// join returns the long line that ends at buf[end-1].
func (lr *lineReader) join(end int) ([]byte, int64, error) {
	n := lr.partLen + int64(end)
	if n-1 > lr.max {
		lr.parts, lr.partLen, lr.r = nil, 0, end
		return nil, n, errLongLine
	}
	if int64(cap(lr.joined)) < n {
		lr.joined = make([]byte, 0, n)
	}
	line := lr.joined[:0]
	for _, p := range lr.parts {
		line = append(line, p...)
	}
	line = append(line, lr.buf[:end]...)
	lr.parts, lr.partLen, lr.r = nil, 0, end
	return line, n, nil
}

// skipLong consumes the rest of a line longer than max, keeping none of
// it: errLongLine once its '\n' is found, the stream's end (the line is
// then its unterminated rest) or a read error.
func (lr *lineReader) skipLong() ([]byte, int64, error) {
	n := lr.partLen + int64(lr.w-lr.r)
	lr.parts, lr.partLen, lr.r, lr.w = nil, 0, 0, 0
	for {
		if lr.eof || lr.err != nil {
			return lr.restAfter(n)
		}
		lr.fill()
		if i := bytes.IndexByte(lr.buf[:lr.w], '\n'); i >= 0 {
			lr.r = i + 1
			return nil, n + int64(i) + 1, errLongLine
		}
		n += int64(lr.w)
		lr.w = 0
	}
}

func (lr *lineReader) restAfter(n int64) ([]byte, int64, error) {
	if lr.err != nil {
		return nil, n, lr.err
	}
	return nil, n, io.EOF
}

// blankRun consumes the empty lines that follow one just returned and
// returns how many there were.
func (lr *lineReader) blankRun() int64 {
	var n int64
	for {
		b := lr.buf[lr.r:lr.w]
		k := newlines(b)
		n += int64(k)
		lr.r += k
		if k < len(b) || lr.eof || lr.err != nil {
			return n
		}
		lr.r, lr.w = 0, 0
		lr.fill()
	}
}

// newlines returns the length of the run of '\n' that b starts with.
func newlines(b []byte) int {
	const eight = 0x0a0a0a0a0a0a0a0a
	i := 0
	for ; i+8 <= len(b) && binary.LittleEndian.Uint64(b[i:]) == eight; i += 8 {
	}
	for i < len(b) && b[i] == '\n' {
		i++
	}
	return i
}

// lastNewline is bytes.LastIndexByte(b, '\n'), eight bytes at a time: a
// torn tail of GiBs is searched backwards for its start.
func lastNewline(b []byte) int {
	const ones, highs, nls = 0x0101010101010101, 0x8080808080808080, 0x0a0a0a0a0a0a0a0a
	i := len(b)
	for ; i >= 8; i -= 8 {
		x := binary.LittleEndian.Uint64(b[i-8:]) ^ nls
		if (x-ones)&^x&highs != 0 {
			break
		}
	}
	return bytes.LastIndexByte(b[:i], '\n')
}

// trailingNewlines returns the length of the run of '\n' that b ends with.
func trailingNewlines(b []byte) int {
	const eight = 0x0a0a0a0a0a0a0a0a
	i := len(b)
	for ; i >= 8 && binary.LittleEndian.Uint64(b[i-8:]) == eight; i -= 8 {
	}
	for i > 0 && b[i-1] == '\n' {
		i--
	}
	return len(b) - i
}

// nextWith returns the next line that holds pat, and the lines and bytes
// it skipped to get there. Lines are skipped in bulk, searching the buffer
// for pat and counting newlines, not split one by one, so the uncommitted
// tail of a log costs what a search of its bytes costs. Its other results
// are next's: a long line is errLongLine, whether it holds pat or not.
func (lr *lineReader) nextWith(pat []byte) (line []byte, n, lines, skipped int64, err error) {
	for {
		win := lr.buf[lr.r:lr.w]
		i := bytes.Index(win, pat)
		upTo := len(win)
		if i >= 0 {
			upTo = i
		}
		// Drop the whole lines before pat, or before the window's end.
		if k := bytes.LastIndexByte(win[:upTo], '\n'); k >= 0 {
			lines += int64(bytes.Count(win[:k+1], blankLine))
			skipped += int64(k + 1)
			lr.r += k + 1
			continue
		}
		// The window starts the line holding pat, or holds no '\n'.
		if i >= 0 || lr.eof || lr.err != nil || lr.r == 0 && lr.w == len(lr.buf) {
			line, n, err = lr.next()
			if err != nil || bytes.Contains(line, pat) {
				return line, n, lines, skipped, err
			}
			lines += lineCount(line, n)
			skipped += n
			continue
		}
		lr.fill()
	}
}

// lineCount is the number of lines a line and length next returned stand
// for: a run of empty lines is n of them.
func lineCount(line []byte, n int64) int64 {
	if len(line) == 1 {
		return n
	}
	return 1
}

// fill reads more of the stream, compacting the buffer first, or handing
// it over to parts when it holds the start of one line and nothing else
// (then it reports true).
func (lr *lineReader) fill() (handed bool) {
	if lr.r > 0 && lr.w == len(lr.buf) {
		lr.w = copy(lr.buf, lr.buf[lr.r:lr.w])
		lr.r = 0
	}
	if lr.w == len(lr.buf) {
		lr.parts = append(lr.parts, lr.buf[:lr.w])
		lr.partLen += int64(lr.w)
		lr.buf = make([]byte, min(2*len(lr.buf), maxPart))
		lr.r, lr.w, handed = 0, 0, true
	}
	n, err := lr.src.Read(lr.buf[lr.w:])
	lr.w += n
	if err == io.EOF {
		lr.eof = true
	} else if err != nil {
		lr.err = err
	}
	return handed
}

// plausibleRow reports whether line (without its '\n') can be a valid row
// at all: a JSON object long enough to hold a row's keys. Scans that step
// over invalid records (the tail search, a reverse scan's uncommitted
// tail) check it first, so junk costs a few byte comparisons per line, not
// a parse. It never rejects a valid row.
func plausibleRow(line []byte) bool {
	i, j := 0, len(line)
	for i < j && isJSONSpace(line[i]) {
		i++
	}
	for j > i && isJSONSpace(line[j-1]) {
		j--
	}
	// The shortest row: {"type":"a","seq":0,"time":0,"data":{}}.
	return j-i >= minRowLen && line[i] == '{' && line[j-1] == '}'
}

const minRowLen = 32

func isJSONSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// backLines reads the '\n'-terminated lines of [start, end) of a file from
// the last to the first, in blocks, holding one block and at most one
// line of max bytes: a longer line is errLongLine, its bytes read but not
// kept, and a run of empty lines comes back as one.
type backLines struct {
	ctx   context.Context
	r     io.ReaderAt
	start int64
	buf   []byte // buf[lo:] holds the bytes [pos, end)
	lo    int
	pos   int64 // file offset of buf[lo]
	end   int64 // end of the lines not yet returned
	block int
	read  int64 // bytes read so far
	limit int64 // read bound, 0 for none
	max   int64
	// run is the number of empty lines the last "\n" prev returned
	// stands for; term says whether the last line prev returned (or
	// skipped as too long) ends with '\n'.
	run     int64
	term    bool
	lineEnd int64  // the end of the last line prev returned or skipped
	long    []byte // the buffer of the last line read whole after a search
}

// longWindow is the window beyond which prev stops growing it to find a
// line's start: it searches on without keeping the bytes, then reads the
// line whole if it is not too long.
const longWindow = 1 << 20

func newBackLines(ctx context.Context, r io.ReaderAt, start, end int64, block int, limit, max int64) *backLines {
	return &backLines{ctx: ctx, r: r, start: start, pos: end, end: end, block: block, limit: limit, max: max}
}

// prev returns the line that ends at b.end (including its '\n') and its
// offset; io.EOF when start is reached. The line is valid until the next
// call. The first line returned may lack a '\n' if end was not a line end
// (b.term says). A line longer than max is errLongLine with its offset,
// and an empty line is "\n" standing for a run of b.run of them.
func (b *backLines) prev() ([]byte, int64, error) {
	if b.end <= b.start {
		return nil, 0, io.EOF
	}
	b.run, b.term, b.lineEnd = 1, true, b.end
	scanFrom := 0 // bytes at the tail of the window already known to hold no '\n'
	for {
		win := b.buf[b.lo : b.lo+int(b.end-b.pos)] // [pos, end)
		if len(win) > 0 {
			if scanFrom == 0 {
				b.term = win[len(win)-1] == '\n'
				if len(win) >= 2 && b.term && win[len(win)-2] == '\n' {
					return b.blankRun()
				}
			}
			if i := bytes.LastIndexByte(win[:len(win)-1-scanFrom], '\n'); i >= 0 {
				off := b.pos + int64(i) + 1
				line := win[i+1:]
				b.end = off
				if b.tooLong(int64(len(line))) {
					return nil, off, errLongLine
				}
				return line, off, nil
			}
			scanFrom = max(0, len(win)-1)
		}
		if b.pos == b.start {
			b.end = b.start
			if b.tooLong(int64(len(win))) {
				return nil, b.start, errLongLine
			}
			return win, b.start, nil
		}
		if len(win) > longWindow {
			return b.longLine()
		}
		if err := b.load(); err != nil {
			return nil, 0, err
		}
	}
}

// tooLong reports whether a line of n bytes, ending with '\n' as b.term
// says, holds more than max bytes.
func (b *backLines) tooLong(n int64) bool {
	if b.term {
		n--
	}
	return n > b.max
}

// longLine finds the start of the line that ends at b.end, which fills
// more than the window, by reading on toward start without keeping the
// bytes; then it reads the line whole, unless it is longer than max.
func (b *backLines) longLine() ([]byte, int64, error) {
	lineEnd := b.end
	off := b.start
	for b.pos > b.start {
		b.lo, b.end = len(b.buf), b.pos // drop the window
		if err := b.loadN(longWindow); err != nil {
			return nil, 0, err
		}
		if i := lastNewline(b.buf[b.lo:]); i >= 0 {
			off = b.pos + int64(i) + 1
			break
		}
	}
	b.end = max(off, b.pos)
	if b.pos > off {
		b.lo, b.end = len(b.buf), b.pos
	}
	n := lineEnd - off
	if b.tooLong(n) {
		return nil, off, errLongLine
	}
	if b.limit > 0 && b.read+n > b.limit {
		return nil, 0, errBudget
	}
	if int64(cap(b.long)) < n {
		b.long = make([]byte, n)
	}
	line := b.long[:n]
	if err := osfs.ReadFullAt(b.r, line, off); err != nil {
		return nil, 0, err
	}
	b.read += n
	return line, off, nil
}

// blankRun returns the run of empty lines that ends the window, as one
// "\n" standing for b.run of them, with the offset of the first.
func (b *backLines) blankRun() ([]byte, int64, error) {
	var n int64
	for {
		win := b.buf[b.lo : b.lo+int(b.end-b.pos)]
		k := trailingNewlines(win)
		if k < len(win) || b.pos == b.start {
			if k < len(win) {
				k-- // the first '\n' of the run ends the line before it
			}
			n += int64(k)
			b.end -= int64(k)
			b.run = n
			return blankLine, b.end, nil
		}
		// The whole window is the run: keep its first '\n', which ends the
		// line before the run when the block before does not.
		n += int64(k - 1)
		b.end = b.pos + 1
		if err := b.load(); err != nil {
			return nil, 0, err
		}
	}
}

// load reads the block before b.pos into the window.
func (b *backLines) load() error { return b.loadN(b.block) }

// loadN reads up to block bytes before b.pos into the window.
func (b *backLines) loadN(block int) error {
	if err := b.ctx.Err(); err != nil {
		return err
	}
	n := int(min(int64(block), b.pos-b.start))
	if b.limit > 0 && b.read+int64(n) > b.limit {
		if n = int(b.limit - b.read); n <= 0 {
			return errBudget
		}
	}
	if b.lo < n {
		// Move the unread window [pos, end) to the end of the buffer,
		// growing it only when the window and the block do not fit.
		keep := int(b.end - b.pos)
		nb := b.buf
		if keep+n > len(nb) {
			nb = make([]byte, max(2*len(nb), keep+n))
		}
		copy(nb[len(nb)-keep:], b.buf[b.lo:b.lo+keep])
		b.buf, b.lo = nb, len(nb)-keep
	}
	if err := osfs.ReadFullAt(b.r, b.buf[b.lo-n:b.lo], b.pos-int64(n)); err != nil {
		return err
	}
	b.lo -= n
	b.pos -= int64(n)
	b.read += int64(n)
	return nil
}

// rowEndWindow bounds what couldBeRow reads at each end of a line.
const rowEndWindow = 4 << 10

// couldBeRow is plausibleRow's byte check for a line too long to hold,
// the bytes [start, end) of r (its '\n' left out): whether its first and
// last bytes other than JSON space, looked for within rowEndWindow of each
// end, are the braces of an object. When it cannot be a row, why says
// which end is not. A line of nothing but space that far is taken as one
// that could be a row.
func couldBeRow(r io.ReaderAt, start, end int64) (ok bool, why string, err error) {
	buf := make([]byte, min(rowEndWindow, end-start))
	if err := osfs.ReadFullAt(r, buf, start); err != nil {
		return false, "", err
	}
	for _, c := range buf {
		if !isJSONSpace(c) {
			if c != '{' {
				return false, fmt.Sprintf("starts with %q, not '{'", c), nil
			}
			break
		}
	}
	if err := osfs.ReadFullAt(r, buf, end-int64(len(buf))); err != nil {
		return false, "", err
	}
	for i := len(buf) - 1; i >= 0; i-- {
		if c := buf[i]; !isJSONSpace(c) {
			if c != '}' {
				return false, fmt.Sprintf("ends with %q, not '}'", c), nil
			}
			break
		}
	}
	return true, "", nil
}

// notRow is the cause of the failure of a record of n bytes (its '\n'
// included) too long to hold that couldBeRow says is no row (why).
func notRow(n int64, why string) error {
	return &seam.Error{Kind: seam.ErrCorrupt, Pos: seam.NoPos,
		Err: fmt.Errorf("%w: a line of %d bytes that %s", seam.ErrRecordSyntax, n-1, why)}
}
