package export

import (
	"errors"
	"io"
	"sync"
)

// blockSize is the size of the blocks a pipe hands on. The compressor sees
// the same blocks whatever writes filled them, so its output depends on the
// log's text alone.
const blockSize = 256 << 10

// errPipeClosed is what Write returns once the pipe is closed or aborted.
var errPipeClosed = errors.New("export: write to a closed pipe")

// pipe runs the compression of an entry beside the production of its text:
// what is written to it goes, in blocks of exactly blockSize bytes (the
// last one shorter), to a goroutine that writes them to dst. Reading and
// decoding the log on one core and deflating it on another take about the
// time of the slower one instead of the sum. At most three blocks exist.
type pipe struct {
	buf  []byte
	full chan []byte // blocks for the writer goroutine
	free chan []byte // blocks it has written
	done chan struct{}
	// err is the first error of the writer goroutine; once set, the
	// goroutine drops what it receives.
	mu     sync.Mutex
	err    error
	closed bool
}

// blocks keeps the blocks of finished pipes: an export of a whole store
// makes a pipe per log.
var blocks = sync.Pool{New: func() any { return new([blockSize]byte) }}

func newBlock() []byte { return blocks.Get().(*[blockSize]byte)[:0] }

func newPipe(dst io.Writer) *pipe {
	p := &pipe{
		buf:  newBlock(),
		full: make(chan []byte, 1),
		free: make(chan []byte, 3), // room for every block: the writer never blocks on it
		done: make(chan struct{}),
	}
	p.free <- newBlock()
	p.free <- newBlock()
	go func() {
		defer close(p.done)
		for b := range p.full {
			if p.failed() == nil {
				if _, err := dst.Write(b); err != nil {
					p.fail(err)
				}
			}
			p.free <- b[:0]
		}
	}()
	return p
}

func (p *pipe) failed() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

func (p *pipe) fail(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err == nil {
		p.err = err
	}
}

// Write queues b; once the writer goroutine failed, it returns that error
// (checked as each block is handed on, so that a write costs one copy).
func (p *pipe) Write(b []byte) (int, error) {
	if p.closed {
		return 0, errPipeClosed
	}
	n := len(b)
	for len(b) > 0 {
		k := min(blockSize-len(p.buf), len(b))
		p.buf = append(p.buf, b[:k]...)
		b = b[k:]
		if len(p.buf) == blockSize {
			p.full <- p.buf
			p.buf = <-p.free
			if err := p.failed(); err != nil {
				return n - len(b), err
			}
		}
	}
	return n, nil
}

// Close hands on the last block, waits until everything is written and
// returns the first error.
func (p *pipe) Close() error {
	if p.closed {
		return p.failed()
	}
	if len(p.buf) > 0 {
		p.full <- p.buf
		p.buf = nil
	}
	p.stop()
	return p.failed()
}

// abort stops the pipe without writing what is still queued.
func (p *pipe) abort() {
	if !p.closed {
		p.fail(errPipeClosed)
		p.stop()
	}
}

func (p *pipe) stop() {
	p.closed = true
	close(p.full)
	<-p.done
	// Every block is now p.buf or back in free.
	if p.buf != nil {
		blocks.Put((*[blockSize]byte)(p.buf[:blockSize]))
		p.buf = nil
	}
	for len(p.free) > 0 {
		blocks.Put((*[blockSize]byte)((<-p.free)[:blockSize]))
	}
}
