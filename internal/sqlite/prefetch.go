package sqlite

import "github.com/klauspost/compress/zstd"

// A prefetcher reads the rows of a forward scan on a goroutine of its own,
// a few batches ahead of the scan, so that SQLite's part of the work
// (stepping, reading pages, copying the columns out, inflating zstd
// payloads) runs beside the decoding, validation and writing of the rows
// before. Rows keep their order. Memory is bounded: at most
// prefetchBatches batches of about maxBatchBytes each, or of one row when
// a row is larger. The first batch is small and each next one twice the
// size, so that a scan that stops after a few rows reads little ahead.
type prefetcher struct {
	src  rowSource
	full chan *rowBatch
	free chan *rowBatch
	stop chan struct{}
	done chan struct{} // closed when the producer has returned
	cur  *rowBatch
	i    int
}

// rowBatch is rows copied out of SQLite's buffers into arena.
type rowBatch struct {
	rows  []RawRow
	arena []byte
	// end says the scan ends after these rows, with err (nil at the end
	// of the rows, or once the budget was read).
	end bool
	err error
}

const (
	prefetchBatches = 3
	minBatchBytes   = 32 << 10
	maxBatchBytes   = 1 << 20
	maxBatchRows    = 1024
)

// prefetch starts reading src ahead. Reading stops at the first row past
// budget (when positive), which is handed on not inflated: the scan fails
// there anyway.
func (s *Store) prefetch(src rowSource, budget int64) *prefetcher {
	p := &prefetcher{src: src, full: make(chan *rowBatch, prefetchBatches), free: make(chan *rowBatch, prefetchBatches),
		stop: make(chan struct{}), done: make(chan struct{})}
	for range prefetchBatches {
		p.free <- &rowBatch{}
	}
	go p.run(s.schema == Schema17, budget)
	return p
}

// run is the producer: it fills free batches and hands them on until the
// rows end, an error, the budget or stop.
func (p *prefetcher) run(inflate bool, budget int64) {
	defer close(p.done)
	left := newRowBudget(budget)
	target := minBatchBytes
	var pending *RawRow // a row read that did not fit the batch before
	for {
		var b *rowBatch
		select {
		case b = <-p.free:
		case <-p.stop:
			return
		}
		b.reset(target)
		for {
			r := pending
			pending = nil
			if r == nil {
				var err error
				if r, err = p.src.next(); err != nil || r == nil {
					b.end, b.err = true, err
					break
				}
			}
			need := arenaNeed(r, inflate)
			if len(b.rows) > 0 && (len(b.arena)+need > target || len(b.rows) == maxBatchRows) {
				pending = r // still valid: the source did not step
				break
			}
			over := !left.enter(r)
			b.add(r, inflate && !over, need)
			if over || !left.decode(b.decodedSize()) {
				b.end = true
				break
			}
			select {
			case <-p.stop:
				return
			default:
			}
		}
		select {
		case p.full <- b:
		case <-p.stop:
			return
		}
		if b.end {
			return
		}
		target = min(2*target, maxBatchBytes)
	}
}

// reset empties b for a batch of about target bytes, dropping an arena a
// very large row grew.
func (b *rowBatch) reset(target int) {
	b.rows, b.end, b.err = b.rows[:0], false, nil
	if c := cap(b.arena); c < target || c > 4*maxBatchBytes {
		b.arena = make([]byte, 0, target+target/4)
	}
	b.arena = b.arena[:0]
}

// arenaNeed is about the arena bytes row r takes: its columns and, with
// inflate, the JSON of a compressed data column, as far as its frame
// declares it.
func arenaNeed(r *RawRow, inflate bool) int {
	n := int(r.size())
	if inflate && r.DataBlob {
		var h zstd.Header
		if h.Decode(r.Data) == nil && h.HasFCS && h.FrameContentSize <= maxPayload {
			n += int(h.FrameContentSize)
		} else {
			n += 4 * len(r.Data)
		}
	}
	return n
}

// add copies r, which takes need arena bytes, into b; with inflate, a
// BLOB data column is decompressed too. A row larger than what is left of
// the arena starts a new one; the rows before keep the old one until b is
// reset.
func (b *rowBatch) add(r *RawRow, inflate bool, need int) {
	if cap(b.arena)-len(b.arena) < need {
		b.arena = make([]byte, 0, max(cap(b.arena), need))
	}
	c := *r
	c.Data = b.copy(r.Data)
	if r.Seqs != nil {
		c.Seqs = b.copy(r.Seqs)
	}
	if r.SurfaceOp != nil {
		c.SurfaceOp = b.copy(r.SurfaceOp)
	}
	if inflate && r.DataBlob {
		start := len(b.arena)
		out, err := decompress(b.arena, r.Data)
		c.inflated = true
		if err != nil {
			c.plainErr = err
		} else {
			b.arena = out
			c.plain = b.arena[start:len(b.arena):len(b.arena)]
		}
	}
	b.rows = append(b.rows, c)
}

// decodedSize is the size of the payload of the row added last, inflated
// when it was.
func (b *rowBatch) decodedSize() int64 {
	r := &b.rows[len(b.rows)-1]
	if r.inflated {
		return int64(len(r.plain))
	}
	return int64(len(r.Data))
}

// copy appends v to the arena and returns its copy there (never nil).
func (b *rowBatch) copy(v []byte) []byte {
	if len(v) == 0 {
		return []byte{}
	}
	start := len(b.arena)
	b.arena = append(b.arena, v...)
	return b.arena[start:len(b.arena):len(b.arena)]
}

// next returns the next row, valid until the following call; nil at the
// end.
func (p *prefetcher) next() (*RawRow, error) {
	for {
		if b := p.cur; b != nil {
			if p.i < len(b.rows) {
				p.i++
				return &b.rows[p.i-1], nil
			}
			if b.end {
				return nil, b.err
			}
			p.free <- b // never blocks: a batch comes from free
			p.cur = nil
		}
		p.cur, p.i = <-p.full, 0
	}
}

func (p *prefetcher) isFinal() bool { return false }

// close stops the producer, waits for it and closes the source.
func (p *prefetcher) close() error {
	close(p.stop)
	<-p.done
	return p.src.close()
}
