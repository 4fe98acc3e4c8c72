package jsonl

import (
	"bytes"
	"io"
)

// lineReader splits a stream into '\n'-terminated lines. Its buffer grows
// to the longest line, so memory is bounded by the largest record.
type lineReader struct {
	src  io.Reader
	buf  []byte
	r, w int
	eof  bool
	err  error
}

const lineChunk = 64 << 10

func (lr *lineReader) reset(src io.Reader) {
	lr.src, lr.r, lr.w, lr.eof, lr.err = src, 0, 0, false, nil
	if lr.buf == nil {
		lr.buf = make([]byte, lineChunk)
	}
}

// next returns the next line including its '\n'. At the end of the stream
// it returns the unterminated rest (possibly empty) and io.EOF. The line is
// valid until the next call.
func (lr *lineReader) next() ([]byte, error) {
	scanned := 0
	for {
		if i := bytes.IndexByte(lr.buf[lr.r+scanned:lr.w], '\n'); i >= 0 {
			end := lr.r + scanned + i + 1
			line := lr.buf[lr.r:end]
			lr.r = end
			return line, nil
		}
		scanned = lr.w - lr.r
		if lr.eof || lr.err != nil {
			rest := lr.buf[lr.r:lr.w]
			lr.r = lr.w
			if lr.err != nil {
				return rest, lr.err
			}
			return rest, io.EOF
		}
		lr.fill()
	}
}

// fill reads more of the stream, compacting or growing the buffer first.
func (lr *lineReader) fill() {
	if lr.r > 0 && lr.w == len(lr.buf) {
		lr.w = copy(lr.buf, lr.buf[lr.r:lr.w])
		lr.r = 0
	}
	if lr.w == len(lr.buf) {
		nb := make([]byte, 2*len(lr.buf))
		lr.w = copy(nb, lr.buf[lr.r:lr.w])
		lr.r = 0
		lr.buf = nb
	}
	n, err := lr.src.Read(lr.buf[lr.w:])
	lr.w += n
	if err == io.EOF {
		lr.eof = true
	} else if err != nil {
		lr.err = err
	}
}

// backLines reads the '\n'-terminated lines of [start, end) of a file from
// the last to the first, in blocks, holding at most the longest line plus
// one block.
type backLines struct {
	r     io.ReaderAt
	start int64
	buf   []byte // buf[lo:] holds the bytes [pos, end)
	lo    int
	pos   int64 // file offset of buf[lo]
	end   int64 // end of the lines not yet returned
	block int
	read  int64 // bytes read so far
	limit int64 // read bound, 0 for none
}

func newBackLines(r io.ReaderAt, start, end int64, block int, limit int64) *backLines {
	return &backLines{r: r, start: start, pos: end, end: end, block: block, limit: limit}
}

// prev returns the line that ends at b.end (including its '\n') and its
// offset; io.EOF when start is reached. The line is valid until the next
// call. The first line returned may lack a '\n' if end was not a line end.
func (b *backLines) prev() ([]byte, int64, error) {
	if b.end <= b.start {
		return nil, 0, io.EOF
	}
	scanFrom := 0 // bytes at the tail of the window already known to hold no '\n'
	for {
		win := b.buf[b.lo : b.lo+int(b.end-b.pos)] // [pos, end)
		if len(win) > 0 {
			if i := bytes.LastIndexByte(win[:len(win)-1-scanFrom], '\n'); i >= 0 {
				off := b.pos + int64(i) + 1
				line := win[i+1:]
				b.end = off
				return line, off, nil
			}
			scanFrom = max(0, len(win)-1)
		}
		if b.pos == b.start {
			line := win
			b.end = b.start
			return line, b.start, nil
		}
		if err := b.load(); err != nil {
			return nil, 0, err
		}
	}
}

// load reads the block before b.pos into the window.
func (b *backLines) load() error {
	n := int(min(int64(b.block), b.pos-b.start))
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
	if err := readFullAt(b.r, b.buf[b.lo-n:b.lo], b.pos-int64(n)); err != nil {
		return err
	}
	b.lo -= n
	b.pos -= int64(n)
	b.read += int64(n)
	return nil
}
