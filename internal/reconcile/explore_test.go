package reconcile

import (
	"os"
	"testing"
)

func TestExplore(t *testing.T) {
	counts := map[string]map[int]int{}
	for _, pol := range []Policy{Membership} {
		counts[pol.Name] = map[int]int{}
		shown := 0
		for i := 0; i < 10000; i++ {
			tr := Generate(1, i, pol)
			res := Run(tr, Options{Policy: pol})
			if v := res.First(); v != nil {
				counts[pol.Name][v.Invariant]++
				if pol.Name == "membership" {
					t.Logf("%s: %d events: inv %d at %d: %s", tr.Name, len(tr.Records), v.Invariant, v.Index, v.Detail)
				}
				if pol.Name == "membership" && shown < 2 {
					shown++
					s := Shrink(tr, FailsWith(pol, v.Invariant))
					s.Encode(os.Stdout)
					r2 := Run(s, Options{Policy: pol})
					t.Logf("%s: %d events: inv %d at %d: %s", tr.Name, len(s.Records), r2.First().Invariant, r2.First().Index, r2.First().Detail)
				}
			} else if res.Verdict != Pass {
				counts[pol.Name][0]++
			}
		}
	}
	t.Logf("%v", counts)
}
