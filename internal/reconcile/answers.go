package reconcile

import "slices"

// SelfContained returns t with every answer the backend model gave, when t
// is replayed under pol, written into the trace: a fetch record with the
// rows right after the record whose request it answered at once, the rows
// in a fetch record that asked the model for them, and at the end a scroll
// back down (when a reconcile was still deferred) and a fetch record for
// each request still in flight. Such a trace replays to the same states
// with the backend model off (Options.NoBackend), and a client that issues
// the same requests finds each answered. t itself is not changed.
func SelfContained(t *Trace, pol Policy) *Trace {
	if pol.Name == "" {
		pol = Membership
	}
	type answer struct {
		req  int
		rows []Chunk
	}
	after := map[int][]answer{} // record index -> fetch records to insert after it
	filled := map[int][]Chunk{}
	var atEnd []answer
	end := len(t.Records)
	out := runOnce(t.Records, traceTab(t), pol, runOpts{supplied: func(r *request, rows *rowSet, at int, fill bool) {
		list := slices.Clone(rows.rows())
		if list == nil {
			list = []Chunk{}
		}
		switch {
		case fill:
			filled[at] = list
		case at < 0 || at >= end:
			atEnd = append(atEnd, answer{r.req, list})
		default:
			after[at] = append(after[at], answer{r.req, list})
		}
	}})
	// A fetch record that answered no request (its request came after
	// it, or another answered it) only warns; it goes, so that the
	// answers written here are the ones found.
	unused := 0
	for i := range t.Records {
		if _, ok := out.answered[i]; t.Records[i].Kind == KindFetch && !ok {
			unused++
		}
	}
	if len(after)+len(filled)+len(atEnd)+unused == 0 {
		return t
	}
	fetch := func(a answer) Record {
		return Record{Kind: KindFetch, Req: a.req, Rows: a.rows, HasRows: true, rows: newRowSet(a.rows)}
	}
	c := *t
	c.Records = make([]Record, 0, len(t.Records)+len(atEnd)+len(after)+1)
	c.Origins = nil
	for i, rec := range t.Records {
		if _, ok := out.answered[i]; rec.Kind == KindFetch && !ok {
			continue
		}
		if rows, ok := filled[i]; ok {
			rec.Rows, rec.HasRows, rec.rows = rows, true, newRowSet(rows)
		}
		c.Records = append(c.Records, rec)
		for _, a := range after[i] {
			c.Records = append(c.Records, fetch(a))
		}
	}
	if out.deferredAtEnd {
		c.Records = append(c.Records, Record{Kind: KindScroll, Up: false})
	}
	for _, a := range atEnd {
		c.Records = append(c.Records, fetch(a))
	}
	return &c
}

// ShrinkSelfContained is ShrinkFailure for a trace to be saved: the shrunk
// trace, with the backend model's answers written in (SelfContained),
// fails with invariant n under pol with the backend model off. ok is
// false when no such trace was found (a failure of invariant 4 that only
// the backend model's answers to the replay without scroll events show):
// the trace is then t shrunk as ShrinkFailure does, which needs the model.
func ShrinkSelfContained(t *Trace, pol Policy, n int) (shrunk *Trace, ok bool) {
	alone := func(c *Trace) bool {
		v := Run(SelfContained(c, pol), Options{Policy: pol, NoBackend: true}).First()
		return v != nil && v.Invariant == n
	}
	s := ShrinkFailure(t, pol, n)
	if alone(s) {
		return SelfContained(s, pol), true
	}
	if alone(t) {
		both := func(c *Trace) bool { return FailsWith(pol, n)(c) && alone(c) }
		return SelfContained(Shrink(t, both), pol), true
	}
	return s, false
}
