package jsonl

import (
	"context"
	"errors"
	"io"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/dshctl/dshctl/internal/jsonl/zstdframe"
)

// prefetcher walks and decodes the frames of a zstd log ahead of a
// zstdReader, so that frames decode while the reader's consumer works on
// the one before (cat and export write it out, grep searches it), and on
// several cores at once: the frames of a log are independent. One
// goroutine walks the frames in order; decoders (one, and up to
// maxDecoders once the walk has passed decodeAheadAfter bytes, so that a
// small log costs no more) decode them, each with its own decoder; the
// reader takes them in order. At most maxDecoders frames are decoded or
// wait for the reader beyond the reader's own, each at most
// frameMemLimit bytes, and a frame too large for that is only parsed: the
// reader streams it itself. Their buffers go round (recycle), and back to
// a pool shared by all reads, so that a long read, or many short ones,
// leave no garbage behind per frame. The walk stops at the first frame
// that does not parse, and when ctx is done; the reader gets that, and
// each decoding error, at the frame where a read without the prefetcher
// finds it.
type prefetcher struct {
	ctx context.Context
	// The log and the span of it walked: [start, size) of shifted, whose
	// offset 0 is byte base of the file. The reader's own fields change
	// as it reads; these are the walk's.
	l           *logFile
	shifted     io.ReaderAt
	base        int64
	start, size int64
	order       chan *prefetched // the frames in order, for the reader
	work        chan *prefetched // the frames to decode, for the decoders
	free        chan []byte      // buffers the reader is done with
	done        chan struct{}
	wg          sync.WaitGroup
}

// prefetched is one step of the frame walk: the frame parsed at the next
// offset (in the walk's shifted coordinates) or the error, and its content
// or decoding error once ready is closed; large marks a frame left to the
// reader.
type prefetched struct {
	f       zstdframe.Frame
	perr    error
	content []byte
	derr    error
	large   bool
	ready   chan struct{}
	// raw, when the walk read the whole frame, is its bytes, in chunk.
	raw   []byte
	chunk *walkChunk
}

const (
	// decodeAheadAfter is how far the walk goes with one decoder before
	// it starts more.
	decodeAheadAfter = 1 << 20
	// walkAhead is how much the walk reads of the file at once.
	walkAhead = 1 << 20
)

// maxDecoders is how many frames of one log decode at once.
func maxDecoders() int { return min(runtime.GOMAXPROCS(0), 4) }

// frameBufs recycles the content buffers of prefetchers across reads.
var frameBufs sync.Pool

// maxPooledFrameBuf is the largest buffer frameBufs keeps.
const maxPooledFrameBuf = 4 << 20

// walkChunks recycles the read-ahead buffers of frame walks.
var walkChunks = sync.Pool{New: func() any {
	return &walkChunk{b: make([]byte, walkAhead)}
}}

// walkChunk is a read-ahead buffer, shared by the walk and the decoders of
// the frames it holds: it goes back to walkChunks when the last of them
// releases it.
type walkChunk struct {
	b    []byte
	refs atomic.Int32
}

func (c *walkChunk) release() {
	if c != nil && c.refs.Add(-1) == 0 {
		walkChunks.Put(c)
	}
}

// newPrefetcher starts walking z's frames from z.at, decoding them with
// d (which it gives back to l's pool when done) and, past
// decodeAheadAfter bytes, more decoders from l's pool.
func newPrefetcher(ctx context.Context, z *zstdReader, d *zstdframe.Decoder) *prefetcher {
	n := maxDecoders()
	p := &prefetcher{ctx: ctx, l: z.l, shifted: z.shifted, base: z.base, start: z.at, size: z.size,
		order: make(chan *prefetched, n), work: make(chan *prefetched),
		free: make(chan []byte, n+2), done: make(chan struct{})}
	p.startDecoder(d)
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		defer close(p.work)
		p.walk(n)
	}()
	return p
}

// walk parses the frames in order and hands them to the reader and the
// decoders, starting decoders up to n as it goes.
func (p *prefetcher) walk(n int) {
	src := p.shifted
	if w, ok := p.l.f.(*windowFile); !ok || !w.whole() {
		ra := &readAhead{r: p.shifted, size: p.size}
		defer ra.release()
		src = ra
	}
	decoders := 1
	for at := p.start; at < p.size; {
		// A small frame decodes without looking at ctx: the walk does, and
		// ends with ctx's error as at a frame that does not parse.
		var f zstdframe.Frame
		err := p.ctx.Err()
		if err == nil {
			f, err = zstdframe.ParseFrame(src, at, p.size)
		}
		st := &prefetched{f: f, perr: err, ready: make(chan struct{})}
		if err != nil {
			close(st.ready)
		} else if ra, ok := src.(*readAhead); ok {
			st.raw, st.chunk = ra.hold(f)
		}
		select {
		case p.order <- st:
		case <-p.done:
			return
		}
		if err != nil {
			return
		}
		if decoders < n && at-p.start >= decodeAheadAfter {
			if d, err := p.l.decoder(p.ctx); err == nil {
				p.startDecoder(d)
				decoders++
			}
		}
		select {
		case p.work <- st:
		case <-p.done:
			st.chunk.release()
			return
		}
		at = f.End()
	}
}

// startDecoder starts a goroutine that decodes the frames of the walk with
// d until the walk ends, then gives d back.
func (p *prefetcher) startDecoder(d *zstdframe.Decoder) {
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		defer p.l.putDecoder(d)
		for st := range p.work {
			abs := st.f
			abs.Offset += p.base
			buf := p.buffer()
			var r io.ReaderAt = p.l.f
			if st.raw != nil {
				r = &frameBytes{ReaderAt: p.l.f, b: st.raw, off: abs.Offset}
			}
			st.content, st.derr = d.DecodeTo(&buf, r, abs, frameMemLimit)
			st.chunk.release()
			st.raw, st.chunk = nil, nil
			// A frame too large to hold leaves its grown storage in buf:
			// it is dropped, not kept idle while the frame is streamed.
			if errors.Is(st.derr, zstdframe.ErrTooLarge) {
				st.content, st.derr, st.large = nil, nil, true
			} else if st.derr != nil {
				p.recycle(buf)
			}
			close(st.ready)
		}
	}()
}

// buffer returns a buffer to decode into: one the reader gave back, or
// one from the pool, or none.
func (p *prefetcher) buffer() []byte {
	select {
	case b := <-p.free:
		return b
	default:
	}
	if b, ok := frameBufs.Get().(*[]byte); ok {
		return (*b)[:0]
	}
	return nil
}

// next returns the next step, once decoded; the walk must not have ended.
func (p *prefetcher) next() *prefetched {
	st := <-p.order
	<-st.ready
	return st
}

// recycle gives back the storage of content the reader is done with.
func (p *prefetcher) recycle(content []byte) {
	if cap(content) == 0 {
		return
	}
	select {
	case p.free <- content[:0]:
	default:
		putFrameBuf(content)
	}
}

func putFrameBuf(b []byte) {
	if cap(b) > 0 && cap(b) <= maxPooledFrameBuf {
		b = b[:0]
		frameBufs.Put(&b)
	}
}

// close stops the walk, waits for its goroutines and gives the buffers
// back to the pool.
func (p *prefetcher) close() {
	close(p.done)
	p.wg.Wait()
	for {
		select {
		case st := <-p.order:
			if st.content != nil {
				putFrameBuf(st.content)
			}
		case b := <-p.free:
			putFrameBuf(b)
		default:
			return
		}
	}
}

// readAhead serves the reads of a forward frame walk from a large buffer
// of the file read at once: a frame header and its block headers, most
// often a few frames' worth, cost one read per walkAhead bytes instead of
// a read each, and the decoders take the frames' bytes from there too
// (hold). Reads never go past size; a read the file answers short is
// passed to it, for its own answer.
type readAhead struct {
	r    io.ReaderAt
	size int64
	c    *walkChunk
	buf  []byte
	off  int64
}

func (c *readAhead) ReadAt(p []byte, off int64) (int, error) {
	if off >= c.off && off+int64(len(p)) <= c.off+int64(len(c.buf)) {
		return copy(p, c.buf[off-c.off:]), nil
	}
	if len(p) > walkAhead/4 || off < 0 || off >= c.size {
		return c.r.ReadAt(p, off)
	}
	c.release()
	c.c = walkChunks.Get().(*walkChunk)
	c.c.refs.Store(1)
	n := min(int64(len(c.c.b)), c.size-off)
	m, _ := c.r.ReadAt(c.c.b[:n], off)
	c.buf, c.off = c.c.b[:m], off
	if m >= len(p) {
		return copy(p, c.buf), nil
	}
	return c.r.ReadAt(p, off)
}

// hold returns the bytes of frame f (in the walk's coordinates) and the
// chunk they are in, which the caller releases, when the buffer holds the
// frame whole.
func (c *readAhead) hold(f zstdframe.Frame) ([]byte, *walkChunk) {
	if c.c == nil || f.Offset < c.off || f.End() > c.off+int64(len(c.buf)) {
		return nil, nil
	}
	c.c.refs.Add(1)
	return c.buf[f.Offset-c.off : f.End()-c.off], c.c
}

func (c *readAhead) release() {
	c.c.release()
	c.c, c.buf = nil, nil
}

// frameBytes reads a frame from bytes read before, and anything else (which
// a decoder never asks for) from the file.
type frameBytes struct {
	io.ReaderAt
	b   []byte
	off int64
}

func (f *frameBytes) ReadAt(p []byte, off int64) (int, error) {
	if off >= f.off && off+int64(len(p)) <= f.off+int64(len(f.b)) {
		return copy(p, f.b[off-f.off:]), nil
	}
	return f.ReaderAt.ReadAt(p, off)
}
