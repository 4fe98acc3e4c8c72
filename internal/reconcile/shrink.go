package reconcile

// Shrink returns the smallest trace it finds that still fails: first the
// shortest failing prefix, then single records dropped, pass after pass,
// until no record can go (a fixed point). fails must hold for t.
func Shrink(t *Trace, fails func(*Trace) bool) *Trace {
	cur := t.withRecords(t.Records)
	for n := 1; n < len(t.Records); n++ {
		if c := t.withRecords(t.Records[:n]); fails(c) {
			cur = c
			break
		}
	}
	for changed := true; changed; {
		changed = false
		for i := 0; i < len(cur.Records); {
			recs := append(append([]Record(nil), cur.Records[:i]...), cur.Records[i+1:]...)
			if c := t.withRecords(recs); fails(c) {
				cur, changed = c, true
				continue
			}
			i++
		}
	}
	return cur
}

// FailsWith returns a predicate for Shrink: the trace fails under pol with
// invariant n first. For a bug variant the trace must also pass under
// legacy, where that bug is fixed, so that shrinking keeps the bug's own
// failure and does not drift to one every policy shares.
func FailsWith(pol Policy, n int) func(*Trace) bool {
	return func(t *Trace) bool {
		v := Run(t, Options{Policy: pol}).First()
		if v == nil || v.Invariant != n {
			return false
		}
		return !pol.Hidden || Run(t, Options{Policy: Legacy}).Verdict == Pass
	}
}

// withRecords returns a copy of t with recs as its records.
func (t *Trace) withRecords(recs []Record) *Trace {
	c := *t
	c.Records = append([]Record(nil), recs...)
	return &c
}
