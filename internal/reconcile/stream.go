package reconcile

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// source gives the records of a trace one at a time: a decoded trace's, or
// those of a JSONL file as it is read (replay records while decoding).
type source interface {
	// next returns the next record; ok is false at the end or on an
	// error (err).
	next() (rec Record, ok bool, err error)
}

// sliceSource gives the records of a decoded trace.
type sliceSource struct {
	recs []Record
	i    int
}

func (s *sliceSource) next() (Record, bool, error) {
	if s.i >= len(s.recs) {
		return Record{}, false, nil
	}
	s.i++
	return s.recs[s.i-1], true, nil
}

// lineSource decodes a JSONL trace line by line. Its meta record, when it
// has one, is read by openLines before the first record.
type lineSource struct {
	sc      *bufio.Scanner
	d       *decoder
	line    int
	meta    *Meta
	pending *Record // the first record, read with the meta record
	// seenMax bounds the distinct rows the decoder shares between chunk
	// answers (each answer is the last 100 rows): past it they are
	// forgotten, so that a long trace does not keep every row it showed.
	seenMax int
}

// openLines starts decoding the JSONL trace r: its meta record, when it
// has one, is read at once.
func openLines(r io.Reader) (*lineSource, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	s := &lineSource{sc: sc, d: &decoder{in: interner{}, seenAt: map[uint64]int{}}, seenMax: 4 * fetchWindow}
	rec, ok, err := s.read(true)
	if err != nil {
		return nil, err
	}
	if ok {
		s.pending = &rec
	}
	return s, nil
}

func (s *lineSource) next() (Record, bool, error) {
	if s.pending != nil {
		rec := *s.pending
		s.pending = nil
		return rec, true, nil
	}
	return s.read(false)
}

// read decodes the next record; first: it may be the meta record.
func (s *lineSource) read(first bool) (Record, bool, error) {
	for s.sc.Scan() {
		s.line++
		b := s.sc.Bytes()
		if s.line == 1 {
			b = bytes.TrimPrefix(b, bom) // as some editors save UTF-8
		}
		b = trimSpace(b)
		if len(b) == 0 {
			continue
		}
		if len(s.d.seen) > s.seenMax {
			s.d.seen, s.d.seenAt = nil, map[uint64]int{}
			s.d.in = interner{}
		}
		rec, meta, err := s.d.line(b)
		if err != nil {
			return Record{}, false, fmt.Errorf("line %d: %w", s.line, err)
		}
		if meta != nil {
			if !first || s.meta != nil {
				return Record{}, false, fmt.Errorf("line %d: meta record must be the first record", s.line)
			}
			s.meta = meta
			continue
		}
		rec.Line = s.line
		return rec, true, nil
	}
	if err := s.sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return Record{}, false, fmt.Errorf("line %d: longer than %d bytes", s.line+1, maxLine)
		}
		return Record{}, false, fmt.Errorf("line %d: %w", s.line+1, err)
	}
	return Record{}, false, nil
}

// streamWindow is how many records a streamed replay decodes ahead of the
// one it applies: what the replay learns from records further ahead (the
// answer to a send, which turn a reconnect hid) it learns too late, and
// says so in a warning.
var streamWindow = 1 << 14

// window holds the records of a replay from the one being applied (lo) up
// to those decoded ahead of it (hi), and what the records ahead say: the
// lookahead's facts, which fetch record answers each request, and for each
// frame the turn the frames after it show the server running.
type window struct {
	src    source
	ring   bool // records are held in buf modulo its length; else buf is every record
	buf    []Record
	ahead  []string // per slot: the turn ahead of the frame there
	known  []bool   // per slot: ahead is decided
	lo, hi int
	size   int // how far ahead of lo records are decoded
	eof    bool
	err    error

	tab    string
	la     *lookahead
	byReq  map[int]int // request number -> the first fetch record with it
	open   []int       // frames whose turn ahead is not decided yet
	onLeft func(i int, rec *Record)
	// late: a record applied needed to know what only records more than
	// size ahead said.
	late bool
}

// newSliceWindow holds every record of recs at once: nothing comes late.
func newSliceWindow(recs []Record) *window {
	w := &window{buf: recs, hi: len(recs), eof: true, size: len(recs) + 1,
		ahead: make([]string, len(recs)), known: make([]bool, len(recs))}
	return w
}

// newStreamWindow reads src with size records ahead.
func newStreamWindow(src source, size int) *window {
	n := min(size+1, 256)
	w := &window{src: src, ring: true, size: size, buf: make([]Record, n), ahead: make([]string, n), known: make([]bool, n)}
	w.fill(0)
	return w
}

// grow makes room for more records ahead, up to size+1 in all: a short
// trace never holds a window of the longest.
func (w *window) grow() {
	n := min(2*len(w.buf), w.size+1)
	buf, ahead, known := make([]Record, n), make([]string, n), make([]bool, n)
	for i := w.lo; i < w.hi; i++ {
		s, t := i%len(w.buf), i%n
		buf[t], ahead[t], known[t] = w.buf[s], w.ahead[s], w.known[s]
	}
	w.buf, w.ahead, w.known = buf, ahead, known
}

func (w *window) slot(i int) int {
	if w.ring {
		return i % len(w.buf)
	}
	return i
}

// at returns record i, which must be held (lo ≤ i < hi).
func (w *window) at(i int) *Record { return &w.buf[w.slot(i)] }

// holds reports whether record i is in the window.
func (w *window) holds(i int) bool { return i >= w.lo && i < w.hi }

// fill decodes records until upTo is held or the trace ends.
func (w *window) fill(upTo int) {
	for !w.eof && w.hi <= upTo {
		if w.ring && w.hi-w.lo >= len(w.buf) {
			if len(w.buf) > w.size {
				return
			}
			w.grow()
		}
		rec, ok, err := w.src.next()
		if !ok {
			w.eof, w.err = true, err
			return
		}
		s := w.slot(w.hi)
		w.buf[s], w.ahead[s], w.known[s] = rec, "", false
		w.hi++
		if w.la != nil {
			w.enter(w.hi-1, &w.buf[s])
		}
	}
}

// start learns the lookahead of the records held so far, for tab; the
// records decoded later are learnt as they come.
func (w *window) start(tab string, la *lookahead) {
	w.tab, w.la, w.byReq = tab, la, map[int]int{}
	la.win = w
	for i := w.lo; i < w.hi; i++ {
		w.enter(i, w.at(i))
	}
}

// get returns record i, moving the window on to it: the records before it
// leave (onLeft), and those up to i+size are decoded. ok is false past the
// end of the trace.
func (w *window) get(i int) (*Record, bool) {
	for w.lo < i && w.lo < w.hi {
		if w.onLeft != nil {
			w.onLeft(w.lo, w.at(w.lo))
		}
		w.lo++
	}
	w.fill(i + w.size - 1)
	if i >= w.hi {
		return nil, false
	}
	return w.at(i), true
}

// enter learns what record i tells about the records before it.
func (w *window) enter(i int, r *Record) {
	w.la.add(i, r, w.tab)
	switch r.Kind {
	case KindFetch:
		if _, ok := w.byReq[r.Req]; !ok {
			w.byReq[r.Req] = i
		}
	case KindWS:
		if !ofTab(r.Ev, w.tab) {
			return
		}
		v, boundary := "", false
		switch ev := r.Ev; ev.Type {
		case "turn-sealed":
			v, boundary = ev.TurnID, true
		case "turn-start":
			boundary = true
		case "statuses":
			snap, ok := ev.Statuses[w.tab]
			switch {
			case !ok:
			case snap.Status != StatusRunning:
				boundary = true
			case snap.CurrentTurnID != "":
				v, boundary = snap.CurrentTurnID, true
			}
		}
		if !boundary {
			if len(w.open) > 2*w.size {
				// Frames that left the window stay undecided.
				keep := w.open[:0]
				for _, k := range w.open {
					if k >= w.lo {
						keep = append(keep, k)
					}
				}
				w.open = keep
			}
			w.open = append(w.open, i)
			return
		}
		for _, k := range w.open {
			if k >= w.lo {
				s := w.slot(k)
				w.ahead[s], w.known[s] = v, true
			}
		}
		w.open = w.open[:0]
		s := w.slot(i)
		w.ahead[s], w.known[s] = v, true
	}
}

// aheadOf is the turn the frames after frame i show the server running.
func (w *window) aheadOf(i int) string {
	if !w.holds(i) {
		return ""
	}
	s := w.slot(i)
	if !w.known[s] && !w.eof {
		w.late = true // decided further ahead than the window reaches
	}
	return w.ahead[s]
}

// batchLen is how many records the decoding goroutine hands over at once.
const batchLen = 256

// pipe decodes a trace on a goroutine of its own, a few batches of records
// ahead of the replay, so that decoding and replaying run on two cores.
type pipe struct {
	full chan batch
	free chan []Record
	done chan struct{} // closed by stop: the decoder gives up
	exit chan struct{} // closed when the decoder has returned
	cur  batch
	k    int
	end  bool
}

type batch struct {
	recs []Record
	err  error
	last bool
}

func newPipe(src source) *pipe {
	p := &pipe{full: make(chan batch, 4), free: make(chan []Record, 6), done: make(chan struct{}), exit: make(chan struct{})}
	for range 6 {
		p.free <- make([]Record, 0, batchLen)
	}
	go func() {
		defer close(p.exit)
		for {
			var b batch
			select {
			case b.recs = <-p.free:
			case <-p.done:
				return
			}
			b.recs = b.recs[:0]
			for len(b.recs) < batchLen {
				rec, ok, err := src.next()
				if !ok {
					b.err, b.last = err, true
					break
				}
				b.recs = append(b.recs, rec)
			}
			select {
			case p.full <- b:
			case <-p.done:
				return
			}
			if b.last {
				return
			}
		}
	}()
	return p
}

func (p *pipe) next() (Record, bool, error) {
	for p.k >= len(p.cur.recs) {
		if p.end {
			return Record{}, false, p.cur.err
		}
		if p.cur.recs != nil {
			clear(p.cur.recs) // let the records' frames go
			p.free <- p.cur.recs
		}
		p.cur, p.k = <-p.full, 0
		p.end = p.cur.last
	}
	p.k++
	return p.cur.recs[p.k-1], true, nil
}

// stop ends the decoder and waits for it, so that its reader can be closed.
func (p *pipe) stop() {
	close(p.done)
	<-p.exit
}
