package reconcile

import (
	"bytes"
	"testing"
)

// TestSelfContainedReplaysAlike: the shrunk failures the generator finds
// under every policy, with the backend model's answers written in, fail
// the same way with the backend model off once decoded, except a failure
// of invariant 4 that only the model's answers to the replay without
// scroll events show.
func TestSelfContainedReplaysAlike(t *testing.T) {
	for _, pol := range Policies() {
		found := 0
		for i := 0; i < 400 && found < 3; i++ {
			g := Generate(7, i, pol)
			v := Run(g, Options{Policy: pol}).First()
			if v == nil {
				continue
			}
			found++
			sc, ok := ShrinkSelfContained(g, pol, v.Invariant)
			if !ok {
				// Only the model's answers to the replay without
				// scroll events show it (that replay has no records
				// of its own to carry them).
				if v.Invariant != 4 {
					t.Errorf("%s trace %d: invariant %d needs the backend model", pol.Name, i, v.Invariant)
				}
				continue
			}
			want := Run(sc, Options{Policy: pol})
			var buf bytes.Buffer
			if err := sc.Encode(&buf); err != nil {
				t.Fatal(err)
			}
			back, err := DecodeTrace(&buf, "saved")
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range back.Records {
				if r.Kind == KindFetch && !r.HasRows && !r.FetchErr {
					t.Errorf("%s trace %d: a fetch record without rows: %v", pol.Name, i, r)
				}
			}
			got := Run(back, Options{Policy: pol, NoBackend: true})
			gv := got.First()
			if got.Verdict != want.Verdict || gv == nil || gv.Invariant != want.First().Invariant || len(got.Warnings) > 0 {
				t.Errorf("%s trace %d: saved: %s %+v %v; shrunk: %s %+v", pol.Name, i, got.Verdict, gv, got.Warnings, want.Verdict, want.First())
			}
		}
		t.Logf("%s: %d generated failures", pol.Name, found)
	}
}

// TestNoBackendLeavesRequestsInFlight: with the backend model off, a
// request the trace does not answer is not answered at all, and the
// verdict says the replay proves nothing.
func TestNoBackendLeavesRequestsInFlight(t *testing.T) {
	g := Generate(1, 3, Membership)
	if r := Run(g, Options{Policy: Membership}); r.Verdict != Pass {
		t.Fatalf("generated trace: %s", r.Verdict)
	}
	r := Run(g, Options{Policy: Membership, NoBackend: true})
	if r.Verdict != Inconclusive || len(r.Warnings) == 0 {
		t.Fatalf("backend off: %s %v", r.Verdict, r.Warnings)
	}
	sc := SelfContained(g, Membership)
	if r := Run(sc, Options{Policy: Membership, NoBackend: true}); r.Verdict != Pass {
		t.Fatalf("self-contained, backend off: %s %v %+v", r.Verdict, r.Warnings, r.First())
	}
}
