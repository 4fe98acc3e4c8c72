package zstdframe

import (
	"io"
)

// Reverse walks the frames of a file from the last toward the first, by
// LastFrame's backward search, without redoing it for every frame: it keeps
// the tail bytes it has read, the frame magics it has found in them and the
// frames it has parsed, between calls.
//
// rv.LastFrame(end) returns exactly what LastFrame(r, end, opts) returns
// (the same frames, torn frames, errors and kept content), so a reverse
// scan that calls it with the offset of each frame it found keeps every
// rule of LastFrame, among them that a candidate must be confirmed (its
// structure reaching end, its checksum matching) and must follow a frame
// that ends exactly where it starts. Only the work is shared: the search
// of each call is LastFrame's, candidate for candidate.
//
// Calls with a non-increasing end share the most; a larger end than the
// previous call's starts the memos afresh. Memory is bounded by about
// twice the bytes LastFrame itself would load for one call (the tail above
// the current end is dropped when the buffer grows), plus one offset per
// magic found in that range. A Reverse is not safe for concurrent use.
type Reverse struct {
	r       io.ReaderAt
	size    int64
	dec     *Decoder
	ownDec  bool
	window  int64
	keep    int64
	content *[]byte
	pending map[int64]Last
	src     source // the source of the current search
	err     error  // a read failure of the current search

	// store holds file bytes [hi-len(store), hi); of them, [lo, hi) are
	// loaded.
	store  []byte
	lo, hi int64
	pooled bool // store came from tailBufs

	// mags holds, in decreasing order, every magic offset p in [magLo,
	// magHi); a magic at p ends by hi when p < hi-3.
	mags         []int64
	magLo, magHi int64

	// frames holds the last complete frames parsed, by offset.
	frames [8]Frame
	nf     int
}

// NewReverse returns a Reverse over the file r of the given size, with
// LastFrame's options. With a nil opts.Decoder it uses its own, which
// Close closes.
func NewReverse(r io.ReaderAt, size int64, opts LastOptions) (*Reverse, error) {
	rv := &Reverse{r: r, size: size, dec: opts.Decoder, window: opts.Window,
		keep: opts.KeepContent, content: opts.Content, pending: make(map[int64]Last)}
	if rv.dec == nil {
		d, err := NewDecoder()
		if err != nil {
			return nil, err
		}
		rv.dec, rv.ownDec = d, true
	}
	if rv.content == nil {
		rv.keep = 0
	}
	if rv.window <= 0 {
		rv.window = defaultWindow
	}
	rv.reset(size)
	return rv, nil
}

// Close releases rv's buffers (and its own Decoder); rv must not be used
// afterwards. Nothing rv returned refers to them.
func (rv *Reverse) Close() {
	rv.releaseStore()
	rv.mags = nil
	if rv.ownDec {
		rv.dec.Close()
		rv.ownDec = false
	}
}

// LastFrame returns what LastFrame(r, end, opts) returns for the opts
// rv was made with: the last complete frame of the first end bytes of
// the file (end normally at most the size rv was made with) and the torn
// frame after it. It reads only bytes it has not read before, so when the
// reader fails, it may fail on a different call than LastFrame would.
func (rv *Reverse) LastFrame(end int64) (Last, error) {
	if rv.content != nil {
		*rv.content = nil
	}
	if end > rv.hi || rv.lo > end {
		// Above what the memos cover, or nothing loaded below end.
		rv.reset(end)
	}
	rv.src, rv.err = source{r: rv.r, size: end}, nil
	clear(rv.pending)
	lf := lastFinder{s: &rv.src, dec: rv.dec, keep: rv.keep, content: rv.content, pending: rv.pending, rv: rv}
	last, err := lf.search(rv.window)
	if rv.err != nil {
		last, err = Last{}, rv.err
	}
	// The tail is a view of rv.store, which outlives the search.
	rv.src.tail = nil
	rv.src.releaseBuf()
	return last, err
}

// reset drops the loaded bytes and the magics found: the next search
// starts at end. The store stays, for the bytes below end.
func (rv *Reverse) reset(end int64) {
	rv.lo, rv.hi = end, end
	rv.magLo, rv.magHi = max(0, end-3), max(0, end-3)
	rv.mags = rv.mags[:0]
}

func (rv *Reverse) releaseStore() {
	if rv.pooled {
		s := rv.store[:0]
		tailBufs.Put(&s)
	}
	rv.store, rv.pooled = nil, false
}

// loadStep is the least Reverse reads below what it has loaded.
const loadStep = 8 << 10

// load is lastFinder.load for the source s of the current search: the
// search may look at [lo, s.size). Reverse reads those bytes lazily, as
// magicBelow reaches them (candidates, and the frames they parse, lie at
// or above the lowest magic found), so a search that confirms at the top
// reads little; s.tail is what is loaded, and s reads the rest, the same
// bytes, from the file.
func (rv *Reverse) load(s *source, lo int64) error {
	if rv.err != nil {
		return rv.err
	}
	rv.setTail()
	return nil
}

// extend loads the bytes down to lo, below those loaded, for the search of
// rv.src.
func (rv *Reverse) extend(lo int64) error {
	if lo >= rv.lo {
		return nil
	}
	if base := rv.hi - int64(len(rv.store)); lo < base {
		rv.grow(rv.src.size, lo)
	}
	base := rv.hi - int64(len(rv.store))
	if err := readFull(rv.r, rv.store[lo-base:rv.lo-base], lo); err != nil {
		return err
	}
	rv.lo = lo
	rv.setTail()
	return nil
}

// setTail points rv.src.tail at the loaded bytes below its size.
func (rv *Reverse) setTail() {
	s := &rv.src
	if rv.lo >= s.size {
		s.tail = nil
		return
	}
	base := rv.hi - int64(len(rv.store))
	s.tail = rv.store[rv.lo-base : s.size-base]
}

// grow replaces the store by one that can hold [lo, top) with room below,
// keeping the loaded bytes below top, the size being searched: later calls
// search below it.
func (rv *Reverse) grow(top, lo int64) {
	keepLo := min(rv.lo, top)
	n := min(top, max(2*(top-lo), 2*firstChunk))
	st, pooled := getTailBuf(n)
	if keepLo < top {
		oldBase := rv.hi - int64(len(rv.store))
		copy(st[n-(top-keepLo):], rv.store[keepLo-oldBase:top-oldBase])
	}
	rv.releaseStore()
	rv.store, rv.pooled = st, pooled
	rv.lo, rv.hi = keepLo, top
	// Magics at or above top-3 cannot end by top; drop them.
	i := 0
	for i < len(rv.mags) && rv.mags[i] >= top-3 {
		i++
	}
	if i > 0 {
		rv.mags = append(rv.mags[:0], rv.mags[i:]...)
	}
	rv.magHi = min(rv.magHi, max(0, top-3))
	rv.magLo = min(rv.magLo, rv.magHi)
}

// magicBelow is lastFinder.magicBelow with bound already at most size-3:
// the last magic offset in [lo, bound), or -1. [lo, size) must be loaded.
// It searches the bytes below those searched before only as far as the
// next magic, as LastFrame does, so a scan that stops early costs no more.
func (rv *Reverse) magicBelow(lo, bound int64) int64 {
	for {
		// The first known magic below bound, mags being decreasing.
		i, j := 0, len(rv.mags)
		for i < j {
			h := int(uint(i+j) >> 1)
			if rv.mags[h] >= bound {
				i = h + 1
			} else {
				j = h
			}
		}
		if i < len(rv.mags) {
			// mags is complete from magLo up, and mags[i] >= magLo.
			if p := rv.mags[i]; p >= lo {
				return p
			}
			return -1
		}
		// No magic in [magLo, bound): search on below magLo, in what is
		// loaded, loading more as needed.
		if rv.magLo <= lo {
			return -1
		}
		if rv.lo >= rv.magLo {
			if err := rv.extend(max(lo, rv.lo-max(loadStep, rv.hi-rv.lo))); err != nil {
				rv.err = err
				return -1
			}
		}
		x := max(lo, rv.lo)
		base := rv.hi - int64(len(rv.store))
		if k := lastMagic(rv.store[x-base : rv.magLo+3-base]); k >= 0 {
			rv.magLo = x + int64(k)
			rv.mags = append(rv.mags, rv.magLo)
		} else {
			rv.magLo = x
		}
	}
}

// parsed returns the frame at p parsed before, if it is complete within
// the first size bytes: parseFrame then returns the same frame, having
// read nothing past its end.
func (rv *Reverse) parsed(p, size int64) (Frame, bool) {
	for i := range min(rv.nf, len(rv.frames)) {
		if f := rv.frames[i]; f.Offset == p && f.End() <= size {
			return f, true
		}
	}
	return Frame{}, false
}

func (rv *Reverse) remember(f Frame) {
	rv.frames[rv.nf%len(rv.frames)] = f
	rv.nf++
}
