package ingest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
)

// OpenFile opens the file of events name names, refusing a folder. The
// open ends when ctx does: a FIFO with no writer blocks in open(2), and a
// signal must still stop the command (the blocked open is left to the
// process's exit).
func OpenFile(ctx context.Context, name string) (*os.File, error) {
	type opened struct {
		f   *os.File
		err error
	}
	ch := make(chan opened, 1)
	go func() {
		f, err := os.Open(name)
		ch <- opened{f, err}
	}()
	var o opened
	select {
	case o = <-ch:
	case <-ctx.Done():
		go func() {
			if o := <-ch; o.f != nil {
				o.f.Close()
			}
		}()
		return nil, fmt.Errorf("read events from %s: %w", name, ctx.Err())
	}
	if o.err != nil {
		return nil, fmt.Errorf("read events: %w", o.err)
	}
	if fi, err := o.f.Stat(); err == nil && fi.IsDir() {
		o.f.Close()
		return nil, fmt.Errorf("read events: %s is a directory, not a file of events", name)
	}
	return o.f, nil
}

// ctxReader reads r in a goroutine of its own, so that a Read waiting on
// a pipe that never delivers (a stalled writer, a terminal) returns once
// ctx is done: a blocking read of standard input cannot be interrupted
// otherwise. The goroutine reads ahead at most one buffer.
type ctxReader struct {
	ctx  context.Context
	data chan readResult
	free chan []byte
	cur  readResult
	off  int
	done bool
}

type readResult struct {
	buf []byte
	err error
}

const readBuffer = 256 << 10

func newCtxReader(ctx context.Context, r io.Reader) *ctxReader {
	c := &ctxReader{ctx: ctx, data: make(chan readResult), free: make(chan []byte, 1)}
	c.free <- make([]byte, readBuffer)
	go func() {
		for {
			var buf []byte
			select {
			case buf = <-c.free:
			case <-ctx.Done():
				return
			}
			n, err := r.Read(buf[:cap(buf)])
			select {
			case c.data <- readResult{buf[:n], err}:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	return c
}

func (c *ctxReader) Read(p []byte) (int, error) {
	for c.off == len(c.cur.buf) {
		if c.cur.err != nil {
			return 0, c.cur.err
		}
		if c.done {
			c.free <- c.cur.buf[:0]
		}
		select {
		case c.cur = <-c.data:
			c.off, c.done = 0, true
		case <-c.ctx.Done():
			return 0, c.ctx.Err()
		}
	}
	n := copy(p, c.cur.buf[c.off:])
	c.off += n
	return n, nil
}

// lineReader reads the lines of an input of events, each at most max
// bytes long (its line ending aside): a longer line is
// refused as soon as it is longer, and a line that does not start as a
// JSON object is refused at its first byte, so that reading a hostile
// input costs at most one line of the limit.
type lineReader struct {
	r    *bufio.Reader
	max  int64
	line []byte
	no   int
}

// errNotObject is a line that does not start with '{'.
var errNotObject = errors.New("not a JSON object: an event is one JSON object per line")

// LongLineError is an input line longer than the record limit: the
// readers of the log refuse a longer record, so nothing longer is written.
type LongLineError struct{ Limit int64 }

func (e *LongLineError) Error() string {
	return fmt.Sprintf("the line is longer than the record limit of %d bytes, which readers refuse", e.Limit)
}

func newLineReader(r io.Reader, max int64) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, 64<<10), max: max}
}

// next returns the next line that is not blank (white space only), with
// its number, or io.EOF. A line's trailing white space is kept.
func (l *lineReader) next() ([]byte, int, error) {
	for {
		l.line = l.line[:0]
		l.no++
		started := false // a byte other than white space was seen
		for {
			chunk, err := l.r.ReadSlice('\n')
			if !started {
				i := skipSpace(chunk)
				if i < len(chunk) {
					if chunk[i] != '{' {
						return nil, l.no, errNotObject
					}
					started = true
				}
			}
			if started {
				if need := len(l.line) + len(chunk); need > cap(l.line) && need > 1<<20 {
					// A long line: make room for the longest one at once
					// (a line over the limit is refused at the limit), not
					// in steps that would leave their copies as garbage.
					grown := make([]byte, len(l.line), max(int64(need), l.max+int64(l.r.Size())+2))
					copy(grown, l.line)
					l.line = grown
				}
				l.line = append(l.line, chunk...)
				if int64(len(trimEOL(l.line))) > l.max {
					return nil, l.no, &LongLineError{Limit: l.max}
				}
			}
			if errors.Is(err, bufio.ErrBufferFull) {
				continue
			}
			if err != nil && err != io.EOF {
				return nil, 0, err
			}
			if started {
				return l.line, l.no, nil
			}
			if err == io.EOF {
				return nil, l.no, io.EOF
			}
			break // a blank line
		}
	}
}

func skipSpace(b []byte) int {
	i := 0
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

// trimEOL is b without its line ending ("\n" or "\r\n").
func trimEOL(b []byte) []byte {
	b = bytes.TrimSuffix(b, []byte{'\n'})
	return bytes.TrimSuffix(b, []byte{'\r'})
}
