package jsonl

import (
	"bytes"
	"io"
	"sync"
)

// verifyMaxRecord bounds the record verify holds in memory: a longer line
// is skipped (its length counted) and reported as not checked, so memory
// stays bounded whatever a log holds. (A variable so that tests can make
// it small.)
var verifyMaxRecord = 16 << 20

// verifyChunk is the read size of verify's line splitter: large
// sequential reads.
const verifyChunk = 1 << 20

// boundedLines splits a stream into '\n'-terminated lines for verify,
// holding at most max bytes of one line: a longer one is skipped and only
// its length is returned.
type boundedLines struct {
	src    io.Reader
	buf    []byte
	pooled *[]byte // the buffer came from lineBufs
	r, w   int
	max    int
	eof    bool
	err    error
}

// lineBufs recycles the first buffers of boundedLines.
var lineBufs = sync.Pool{New: func() any {
	b := make([]byte, verifyChunk)
	return &b
}}

// newBoundedLines returns a splitter of src; large asks for large reads
// (a file), else it starts small (a frame's content). release gives its
// buffer back.
func newBoundedLines(src io.Reader, max int, large bool) *boundedLines {
	b := &boundedLines{src: src, max: max}
	if large && max >= verifyChunk {
		b.pooled = lineBufs.Get().(*[]byte)
		b.buf = *b.pooled
	} else {
		b.buf = make([]byte, min(64<<10, max+1))
	}
	return b
}

// release gives the buffer back; b must not be used afterwards.
func (b *boundedLines) release() {
	if b.pooled != nil {
		lineBufs.Put(b.pooled)
		b.pooled, b.buf = nil, nil
	}
}

// next returns the next line including its '\n' (valid until the next
// call), or, for a line longer than max, a nil line and its length
// including the '\n'. At the end of the stream it returns the
// unterminated rest (nil and its length when that is over max) and
// io.EOF, or the stream's error.
func (b *boundedLines) next() (line []byte, skipped int64, err error) {
	scanned := 0
	for {
		if i := bytes.IndexByte(b.buf[b.r+scanned:b.w], '\n'); i >= 0 {
			end := b.r + scanned + i + 1
			line := b.buf[b.r:end]
			b.r = end
			return line, 0, nil
		}
		scanned = b.w - b.r
		if b.eof || b.err != nil {
			rest := b.buf[b.r:b.w]
			b.r = b.w
			if b.err != nil {
				return rest, 0, b.err
			}
			return rest, 0, io.EOF
		}
		if scanned > b.max {
			return b.skip(int64(scanned))
		}
		b.fill()
	}
}

// skip discards the rest of a line of which n bytes are buffered.
func (b *boundedLines) skip(n int64) ([]byte, int64, error) {
	b.r = b.w
	for {
		if b.r == b.w {
			if b.eof || b.err != nil {
				if b.err != nil {
					return nil, n, b.err
				}
				return nil, n, io.EOF
			}
			b.r, b.w = 0, 0
			b.fill()
			continue
		}
		if i := bytes.IndexByte(b.buf[b.r:b.w], '\n'); i >= 0 {
			n += int64(i + 1)
			b.r += i + 1
			return nil, n, nil
		}
		n += int64(b.w - b.r)
		b.r = b.w
	}
}

// fill reads more of the stream, compacting or growing the buffer first
// (never beyond max+1 bytes of one line).
func (b *boundedLines) fill() {
	if b.r > 0 && b.w == len(b.buf) {
		b.w = copy(b.buf, b.buf[b.r:b.w])
		b.r = 0
	}
	if b.w == len(b.buf) {
		nb := make([]byte, min(2*len(b.buf), b.max+verifyChunk))
		b.w = copy(nb, b.buf[b.r:b.w])
		b.r = 0
		b.buf = nb
	}
	n, err := b.src.Read(b.buf[b.w:])
	b.w += n
	if err == io.EOF {
		b.eof = true
	} else if err != nil {
		b.err = err
	}
}
