package reconcile

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

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
			s.d.forget(fetchWindow)
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
//
// A decoded trace's records are held all at once (recs). A streamed trace's
// come from its decoder (p) in batches, which the window holds from the one
// with record lo on and hands back to the decoder as lo leaves them: the
// records and frames of a long trace are decoded into the same memory again
// and again.
type window struct {
	recs []Record    // a decoded trace: every record
	info []aheadInfo // per record of recs

	p    *pipe    // a streamed trace: its decoder
	bs   []*batch // the batches held, bs[0] starting with record base
	base int
	end  int // the records of bs end there

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

// aheadInfo is the turn the frames after a frame show the server running,
// and whether the records so far decide it.
type aheadInfo struct {
	turn  string
	known bool
}

// newSliceWindow holds every record of recs at once: nothing comes late.
func newSliceWindow(recs []Record) *window {
	return &window{recs: recs, info: make([]aheadInfo, len(recs)), hi: len(recs), eof: true, size: len(recs) + 1}
}

// newStreamWindow reads the records p decodes with size records ahead.
func newStreamWindow(p *pipe, size int) *window {
	w := &window{p: p, size: size}
	w.fill(0)
	return w
}

// streamed reports whether the records come from a decoder as they are
// read, rather than all at once.
func (w *window) streamed() bool { return w.p != nil }

// at returns record i, which must be held (lo ≤ i < hi). A streamed
// record's memory is reused once it has left the window: what outlives
// that takes a copy (Record.detached).
func (w *window) at(i int) *Record {
	if w.p == nil {
		return &w.recs[i]
	}
	k := i - w.base
	return &w.bs[k/batchLen].recs[k%batchLen]
}

// infoAt returns what is known ahead of record i, which must be held.
func (w *window) infoAt(i int) *aheadInfo {
	if w.p == nil {
		return &w.info[i]
	}
	k := i - w.base
	return &w.bs[k/batchLen].info[k%batchLen]
}

// holds reports whether record i is in the window.
func (w *window) holds(i int) bool { return i >= w.lo && i < w.hi }

// fill decodes records until upTo is held or the trace ends, holding no
// more than size+1 records.
func (w *window) fill(upTo int) {
	for !w.eof && w.hi <= upTo {
		if w.hi-w.lo > w.size {
			return
		}
		if w.hi == w.end && !w.receive() {
			return
		}
		*w.infoAt(w.hi) = aheadInfo{}
		w.hi++
		if w.la != nil {
			w.enter(w.hi-1, w.at(w.hi-1))
		}
	}
}

// receive takes the next batch from the decoder; false at the end of the
// trace (eof, err).
func (w *window) receive() bool {
	for {
		b, ok := w.p.receive()
		if !ok {
			w.eof, w.err = true, w.p.err
			return false
		}
		if len(b.recs) > 0 {
			if len(w.bs) == 0 {
				w.base = w.end
			}
			w.bs = append(w.bs, b)
			w.end += len(b.recs)
			return true
		}
		w.p.release(b)
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
// end of the trace. The record is valid until the next call.
func (w *window) get(i int) (*Record, bool) {
	for w.lo < i && w.lo < w.hi {
		if w.onLeft != nil {
			w.onLeft(w.lo, w.at(w.lo))
		}
		w.lo++
	}
	for len(w.bs) > 0 && w.base+len(w.bs[0].recs) <= w.lo {
		b := w.bs[0]
		w.bs[0] = nil
		w.bs = w.bs[1:]
		w.base += len(b.recs)
		w.p.release(b)
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
				*w.infoAt(k) = aheadInfo{v, true}
			}
		}
		w.open = w.open[:0]
		*w.infoAt(i) = aheadInfo{v, true}
	}
}

// aheadOf is the turn the frames after frame i show the server running.
func (w *window) aheadOf(i int) string {
	if !w.holds(i) {
		return ""
	}
	in := w.infoAt(i)
	if !in.known && !w.eof {
		w.late = true // decided further ahead than the window reaches
	}
	return in.turn
}

// batchLen is how many records the decoding goroutine hands over at once.
const batchLen = 256

// pipe decodes a trace on a goroutine of its own, a few batches of records
// ahead of the replay, so that decoding and replaying run on two cores.
// Batches come back (release) once the replay is done with them, and are
// decoded into again.
type pipe struct {
	full chan *batch
	free chan *batch
	done chan struct{} // closed by stop: the decoder gives up
	exit chan struct{} // closed when the decoder has returned
	end  bool
	err  error // the decoder's, at the end
}

// batch is up to batchLen records and the frames they point to.
type batch struct {
	recs []Record
	evs  []Event // the frames of recs
	info []aheadInfo
	err  error
	last bool
}

func newBatch() *batch {
	return &batch{recs: make([]Record, 0, batchLen), evs: make([]Event, 0, batchLen), info: make([]aheadInfo, batchLen)}
}

// pipeAhead is how many decoded batches wait for the replay at most.
const pipeAhead = 4

// newPipe starts decoding src; window holds up to that many records.
func newPipe(src *lineSource, window int) *pipe {
	// The batches a window holds, those waiting, and the one being decoded.
	n := (window+1)/batchLen + 2 + pipeAhead + 1
	p := &pipe{full: make(chan *batch, pipeAhead), free: make(chan *batch, n), done: make(chan struct{}), exit: make(chan struct{})}
	go func() {
		defer close(p.exit)
		for {
			var b *batch
			select {
			case b = <-p.free:
			case <-p.done:
				return
			default:
				b = newBatch()
			}
			// The frames decoded into b before are cleared at once,
			// not one by one as they are decoded into again.
			clear(b.evs[:cap(b.evs)])
			b.recs, b.evs = b.recs[:0], b.evs[:0]
			// Frames are decoded into the batch's own (the first
			// record, read with the meta record, has one of its own).
			src.d.evs = b.evs
			for len(b.recs) < batchLen {
				rec, ok, err := src.next()
				if !ok {
					b.err, b.last = err, true
					break
				}
				b.recs = append(b.recs, rec)
			}
			src.d.evs = nil
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

// receive returns the next batch; false after the last one (err).
func (p *pipe) receive() (*batch, bool) {
	if p.end {
		return nil, false
	}
	b := <-p.full
	if b.last {
		p.end, p.err = true, b.err
	}
	return b, true
}

// release hands b back to the decoder, to be decoded into again.
func (p *pipe) release(b *batch) {
	select {
	case p.free <- b:
	default:
	}
}

// stop ends the decoder and waits for it, so that its reader can be closed.
func (p *pipe) stop() {
	close(p.done)
	<-p.exit
}
