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
		v := Run(t, Options{Policy: pol}).First()
		return v != nil && v.Invariant == n
	}
}

// failsAsBug is FailsWith for a bug variant, plus: the trace passes under
// the policy where that bug is fixed (legacy, or membership for its pre-fix
// variants). Shrinking then keeps the bug's own failure instead of drifting
// to one that the fixed policy shares.
func failsAsBug(pol Policy, n int) func(*Trace) bool {
	fails, fixed := FailsWith(pol, n), pol.fixed()
	return func(t *Trace) bool {
		return fails(t) && Run(t, Options{Policy: fixed}).Verdict == Pass
	}
}

// ShrinkFailure shrinks t, which fails under pol with invariant n. For a bug
// variant it keeps, when it can, a failure that legacy does not share.
func ShrinkFailure(t *Trace, pol Policy, n int) *Trace {
	if pol.Hidden {
		if fails := failsAsBug(pol, n); fails(t) {
			return Shrink(t, fails)
		}
	}
	return Shrink(t, FailsWith(pol, n))
}

// withRecords returns a copy of t with recs as its records.
func (t *Trace) withRecords(recs []Record) *Trace {
	c := *t
	c.Records = append([]Record(nil), recs...)
	return &c
}
