package jsonl

import (
	"errors"
	"sync"

	"github.com/dshctl/dshctl/internal/jsonl/zstdframe"
)

// prefetcher walks and decodes the frames of a zstd log one step ahead of
// a zstdReader, on its own goroutine with its own decoder, so that the next
// frame decodes while the reader's consumer works on the current one (cat
// and export write it out). Frames come in order; at most two are held
// beyond the reader's (one in the channel, one decoding), each at most
// frameMemLimit bytes, and a frame too large for that is only parsed: the
// reader streams it itself. Their buffers go round (recycle), so that a
// long read leaves no garbage behind per frame. It stops at the first
// problem, which the reader reports as it would have found it, and when
// closed.
type prefetcher struct {
	out  chan prefetched
	free chan []byte // buffers the reader is done with
	done chan struct{}
	wg   sync.WaitGroup
}

// prefetched is one step of the frame walk: the frame parsed at the next
// offset (in the walk's shifted coordinates) or the error, and its content
// or decoding error; large marks a frame left to the reader.
type prefetched struct {
	f       zstdframe.Frame
	perr    error
	content []byte
	derr    error
	large   bool
}

// newPrefetcher starts walking z's frames from z.at with decoder d, which
// it closes over and gives back to l's pool when done.
func newPrefetcher(z *zstdReader, d *zstdframe.Decoder) *prefetcher {
	p := &prefetcher{out: make(chan prefetched, 1), free: make(chan []byte, 3), done: make(chan struct{})}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		defer z.l.putDecoder(d)
		for at := z.at; at < z.size; {
			f, err := zstdframe.ParseFrame(z.shifted, at, z.size)
			st := prefetched{f: f, perr: err}
			if err == nil {
				abs := f
				abs.Offset += z.base
				var buf []byte
				select {
				case buf = <-p.free:
				default:
				}
				st.content, st.derr = d.DecodeTo(&buf, z.l.f, abs, frameMemLimit)
				// A frame too large to hold leaves its grown storage in buf:
				// it is dropped, not kept idle while the frame is streamed.
				if errors.Is(st.derr, zstdframe.ErrTooLarge) {
					st.content, st.derr, st.large = nil, nil, true
				}
			}
			select {
			case p.out <- st:
			case <-p.done:
				return
			}
			if st.perr != nil || st.derr != nil {
				return
			}
			at = f.End()
		}
	}()
	return p
}

// next returns the next step; the walk must not have ended.
func (p *prefetcher) next() prefetched {
	return <-p.out
}

// recycle gives back the storage of content the reader is done with.
func (p *prefetcher) recycle(content []byte) {
	if cap(content) == 0 {
		return
	}
	select {
	case p.free <- content[:0]:
	default:
	}
}

// close stops the walk and waits for its goroutine.
func (p *prefetcher) close() {
	close(p.done)
	p.wg.Wait()
}
