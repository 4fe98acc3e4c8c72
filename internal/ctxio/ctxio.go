// Package ctxio makes writes that can block forever — to a pipe nobody
// reads, a FIFO, a stopped terminal — stop when a context ends, so that a
// command still exits at once on SIGINT or SIGTERM.
package ctxio

import (
	"context"
	"io"
	"os"
	"sync"

	"golang.org/x/term"
)

// Writer writes to an underlying writer from a goroutine of its own and
// gives up waiting for a write when its context ends: the write returns
// the context's error at once, while the goroutine may stay blocked in the
// system call (the process is about to exit). Each write is copied first,
// so the caller may reuse its buffer whatever happens. After an error,
// every write fails with it. Writes must not be concurrent.
type Writer struct {
	ctx  context.Context
	w    io.Writer
	once sync.Once
	reqs chan []byte
	done chan result
	buf  []byte // owned by the goroutine while a write is in flight
	err  error
	shut bool
}

type result struct {
	n   int
	err error
}

// NewWriter returns a Writer of w that stops waiting when ctx ends.
func NewWriter(ctx context.Context, w io.Writer) *Writer {
	return &Writer{ctx: ctx, w: w}
}

// Write writes p, or fails with the context's error once it ends.
func (w *Writer) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	if err := w.ctx.Err(); err != nil {
		w.err = err
		return 0, err
	}
	if len(p) == 0 {
		return 0, nil
	}
	w.once.Do(w.start)
	w.buf = append(w.buf[:0], p...)
	w.reqs <- w.buf
	select {
	case r := <-w.done:
		if r.err != nil {
			w.err = r.err
		}
		return r.n, r.err
	case <-w.ctx.Done():
		// The goroutine keeps the buffer: the next write (there is none
		// after an error) must not touch it.
		w.buf, w.err = nil, w.ctx.Err()
		return 0, w.err
	}
}

func (w *Writer) start() {
	w.reqs, w.done = make(chan []byte), make(chan result, 1)
	go func() {
		for p := range w.reqs {
			n, err := w.w.Write(p)
			w.done <- result{n, err}
		}
	}()
}

// Close ends the goroutine once the write in flight, if any, returns; it
// does not close the underlying writer.
func (w *Writer) Close() error {
	w.once.Do(func() {})
	if w.reqs != nil && !w.shut {
		close(w.reqs)
	}
	w.shut = true
	if w.err == nil {
		w.err = os.ErrClosed
	}
	return nil
}

// File returns the file w writes to, for a child process that is to
// write there itself (a pager); nil when it writes elsewhere.
func (w *Writer) File() *os.File {
	f, _ := w.w.(*os.File)
	return f
}

// MayBlock reports whether a write to f can block indefinitely: f is a
// pipe, a FIFO, a socket or a terminal, not a regular file or a device
// such as /dev/null.
func MayBlock(f *os.File) bool {
	fi, err := f.Stat()
	if err != nil {
		return false
	}
	m := fi.Mode()
	switch {
	case m&(os.ModeNamedPipe|os.ModeSocket) != 0:
		return true
	case m&os.ModeCharDevice != 0:
		return term.IsTerminal(int(f.Fd()))
	}
	return false
}
