package jsonl

import (
	"context"
	"runtime"
	"sync"

	"github.com/dshctl/dshctl/internal/jsonl/zstdframe"
	"github.com/dshctl/dshctl/internal/seam"
)

// decoderPool keeps idle zstd decoders for reuse across handles and scans:
// a new decoder allocates its buffers again, and list decodes a few frames
// of thousands of logs. It holds at most a few decoders per CPU; Close
// closes the idle ones, and a decoder returned after Close is closed at
// once. The zero value is ready to use; a nil pool makes a decoder per use.
type decoderPool struct {
	mu     sync.Mutex
	idle   []*zstdframe.Decoder
	closed bool
}

// maxIdleDecoders bounds the idle decoders of a pool.
func maxIdleDecoders() int { return 2*runtime.GOMAXPROCS(0) + 2 }

// get returns an idle decoder or a new one, decoding at most limit bytes
// of content per frame (0: zstdframe's default) and stopping when ctx is
// done.
func (p *decoderPool) get(ctx context.Context, limit int64) (*zstdframe.Decoder, error) {
	d, err := p.take()
	if err != nil {
		return nil, err
	}
	d.SetLimit(limit)
	d.SetContext(ctx)
	return d, nil
}

func (p *decoderPool) take() (*zstdframe.Decoder, error) {
	if p != nil {
		p.mu.Lock()
		if n := len(p.idle); n > 0 {
			d := p.idle[n-1]
			p.idle[n-1] = nil
			p.idle = p.idle[:n-1]
			p.mu.Unlock()
			return d, nil
		}
		p.mu.Unlock()
	}
	d, err := zstdframe.NewDecoder()
	if err != nil {
		return nil, &seam.Error{Kind: seam.ErrIO, Pos: seam.NoPos, Err: err}
	}
	return d, nil
}

// put returns d to the pool, or closes it when the pool is full or closed.
func (p *decoderPool) put(d *zstdframe.Decoder) {
	if d == nil {
		return
	}
	d.SetContext(nil) // the pool must not keep a request's context alive
	if p != nil {
		p.mu.Lock()
		if !p.closed && len(p.idle) < maxIdleDecoders() {
			p.idle = append(p.idle, d)
			p.mu.Unlock()
			return
		}
		p.mu.Unlock()
	}
	d.Close()
}

// close closes the idle decoders; later puts close theirs.
func (p *decoderPool) close() {
	p.mu.Lock()
	idle := p.idle
	p.idle, p.closed = nil, true
	p.mu.Unlock()
	for _, d := range idle {
		d.Close()
	}
}

// once returns a function that takes a decoder from p on first use (as
// get does), and a function that gives it back.
func (p *decoderPool) once(ctx context.Context, limit int64) (get func() (*zstdframe.Decoder, error), done func()) {
	var d *zstdframe.Decoder
	get = func() (*zstdframe.Decoder, error) {
		if d != nil {
			return d, nil
		}
		var err error
		d, err = p.get(ctx, limit)
		return d, err
	}
	done = func() {
		p.put(d)
		d = nil
	}
	return get, done
}
