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
// invariant n first.
func FailsWith(pol Policy, n int) func(*Trace) bool {
	return func(t *Trace) bool {
		res := Run(t, Options{Policy: pol})
		v := res.First()
		return v != nil && v.Invariant == n
	}
}

// withRecords returns a copy of t with recs as its records.
func (t *Trace) withRecords(recs []Record) *Trace {
	c := *t
	c.Records = append([]Record(nil), recs...)
	return &c
}
