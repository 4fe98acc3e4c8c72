package inspect

import (
	"bytes"
	"context"
	"slices"
	"time"

	"github.com/dshctl/dshctl/internal/seam"
)

// Sink receives a session's log as Stream reads it: the header, the events
// in seq order, then, when asked for, the synthetic closers.
type Sink interface {
	Header(h *seam.Header) error
	Event(e *seam.Event) error
	// Closers starts the n synthetic closers, which follow as events.
	Closers(n int) error
	// End ends the log read so far; only followed events come after it.
	End() error
	// Flush makes what was written so far visible (Stream calls it when it
	// waits for more events).
	Flush() error
}

// StreamOptions say what Stream reads.
type StreamOptions struct {
	Filter FilterOptions
	// Closers adds, after the log, the closers of an interrupted tail turn
	// (what dsh's resume would append; nothing is written).
	Closers bool
	// Follow keeps reading what is appended, every Poll, until ctx ends or
	// the filter wants nothing more, like tail -f.
	Follow bool
	Poll   time.Duration
	// Last, when HasLast, gives only the last Last events the filter
	// matches (before the closers, and before what Follow reads), like
	// tail -n.
	Last    int64
	HasLast bool
}

// StreamResult says what Stream did besides the events.
type StreamResult struct {
	// Closers is the number of synthetic closers (before filtering).
	Closers int
	// Matched is the number of events given to the sink, closers
	// included: 0 when a filter matched nothing.
	Matched int64
}

// Stream gives sink the log h reads, filtered, streamed with memory bounded
// by the largest event. It shows every event, including events of types
// the log's version does not know and that are not ignorable (a plugin's);
// since dsh refuses such a log, Stream then fails, once everything was
// given, with an *UnknownTypesError. A bad
// filter is a *FilterError, before anything is given. The end of ctx ends
// a follow cleanly.
func Stream(ctx context.Context, h seam.Handle, o StreamOptions, sink Sink) (StreamResult, error) {
	var res StreamResult
	filter, err := NewFilter(o.Filter)
	if err != nil {
		return res, err
	}
	hdr := h.Header()
	t := &tally{Sink: sink, u: newUnknownTypes(hdr.Version)}
	if err := sink.Header(&hdr); err != nil {
		return res, err
	}
	var next int64
	if o.HasLast {
		next, err = streamLast(ctx, h, o.Filter, filter, o.Last, t)
	} else {
		next, err = streamEvents(ctx, h, filter.ScanFrom(), filter, t)
	}
	if err != nil {
		return res, err
	}
	if o.Closers {
		closers, err := Closers(ctx, h)
		if err != nil {
			return res, err
		}
		res.Closers = len(closers)
		if err := sink.Closers(len(closers)); err != nil {
			return res, err
		}
		for i := range closers {
			if filter.Match(&closers[i]) {
				if err := t.Event(&closers[i]); err != nil {
					return res, err
				}
			}
		}
	}
	if err := sink.End(); err != nil {
		return res, err
	}
	if t := filter.Turns(); o.Filter.HasTurn && !t.Found && !o.Follow {
		return res, &TurnError{Turn: o.Filter.Turn, Turns: t}
	}
	if o.Follow {
		if err := sink.Flush(); err != nil {
			return res, err
		}
		if err := follow(ctx, h, next, filter, t, o.Poll); err != nil {
			return res, err
		}
	}
	res.Matched = t.n
	return res, t.err(ctx, h)
}

// streamEvents gives sink the events of h from seq next on that filter
// matches and returns the seq after the last event read.
func streamEvents(ctx context.Context, h seam.Handle, next int64, filter *Filter, sink Sink) (int64, error) {
	// Sinks write each event out and keep none of it. One variable for
	// the scan: the sink's pointer would move each loop variable to the
	// heap, an allocation per event.
	var cur seam.Event
	for ev, err := range h.Scan(ctx, seam.ScanOptions{From: next, Transient: true}) {
		if err != nil {
			return next, err
		}
		cur = ev
		next = cur.Seq + 1
		if filter.Match(&cur) {
			if err := sink.Event(&cur); err != nil {
				return next, err
			}
		}
		if filter.Done() {
			break
		}
	}
	return next, nil
}

// streamLast gives sink the last n events of h that filter (made of o)
// matches, in seq order, and returns the seq to follow from. Without a turn
// filter it reads the log backward from its end (or from o.To), so that
// the last events of a long log cost what they hold, not the whole log; a
// turn is known only from its turn/start, so a turn filter reads forward,
// keeping the last n. Either way it holds at most n events.
func streamLast(ctx context.Context, h seam.Handle, o FilterOptions, filter *Filter, n int64, sink Sink) (int64, error) {
	var last []seam.Event // newest first, or a ring of the last n
	next := int64(-1)
	switch {
	case n == 0 && !o.HasTurn:
		snap, err := h.Snapshot(ctx)
		if err != nil {
			return 0, err
		}
		return max(snap.EventCount, o.From), nil
	case o.HasTurn:
		var cur seam.Event
		next, k := filter.ScanFrom(), 0
		for ev, err := range h.Scan(ctx, seam.ScanOptions{From: next, Transient: true}) {
			if err != nil {
				return next, err
			}
			cur = ev
			next = cur.Seq + 1
			if filter.Match(&cur) && n > 0 {
				c := cloneEvent(&cur)
				if int64(len(last)) < n {
					last = append(last, c)
				} else {
					last[k] = c
					k = (k + 1) % len(last)
				}
			}
			if filter.Done() {
				break
			}
		}
		for i := range last {
			if err := sink.Event(&last[(k+i)%len(last)]); err != nil {
				return next, err
			}
		}
		return next, nil
	}
	// Matched on their own: filter has no turn to track, and must see
	// what Follow reads next as if nothing was read before.
	m, err := NewFilter(o)
	if err != nil {
		return 0, err
	}
	from := int64(0) // from the end
	if o.HasTo {
		from = o.To + 1
	}
	for ev, err := range h.Scan(ctx, seam.ScanOptions{From: from, Reverse: true}) {
		if err != nil {
			return 0, err
		}
		if next < 0 {
			next = ev.Seq + 1
		}
		if ev.Seq < o.From {
			break
		}
		if m.Match(&ev) {
			last = append(last, cloneEvent(&ev))
			if int64(len(last)) == n {
				break
			}
		}
	}
	for i := len(last) - 1; i >= 0; i-- {
		if err := sink.Event(&last[i]); err != nil {
			return next, err
		}
	}
	return max(next, o.From), nil
}

// cloneEvent is e with its own copies of the buffers a transient scan
// lends.
func cloneEvent(e *seam.Event) seam.Event {
	c := *e
	c.Data = bytes.Clone(e.Data)
	c.SurfaceOp = bytes.Clone(e.SurfaceOp)
	c.SourceEventSeqs = slices.Clone(e.SourceEventSeqs)
	return c
}

// follow gives sink what is appended to h, polling like tail -f, until ctx
// ends or the filter wants nothing more. A read handle sees every append
// that returned before a scan starts, so polling is a scan from the next
// seq.
func follow(ctx context.Context, h seam.Handle, next int64, filter *Filter, sink Sink, poll time.Duration) error {
	tick := time.NewTicker(poll)
	defer tick.Stop()
	for !filter.Done() {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		var err error
		if next, err = streamEvents(ctx, h, next, filter, sink); err != nil {
			if ctx.Err() != nil {
				return sink.Flush() // interrupted mid-scan: the way follow ends
			}
			return err
		}
		if err := sink.Flush(); err != nil {
			return err
		}
	}
	return nil
}

// tally is a Sink that counts the events it is given, and those of types
// the log's version does not know and that are not ignorable.
type tally struct {
	Sink
	u *unknownTypes
	n int64
}

func (t *tally) Event(e *seam.Event) error {
	t.u.observe(e)
	t.n++
	return t.Sink.Event(e)
}

// err is the refusal dsh would give the log, if it holds unknown types.
func (t *tally) err(ctx context.Context, h seam.Handle) error {
	snap := seam.Snapshot{Header: h.Header()}
	if s, err := h.Snapshot(ctx); err == nil {
		snap.Location = s.Location
	}
	return t.u.err(snap, false)
}
