package reconcile

import (
	"bytes"
	"fmt"
	"os"
	"testing"
)

func TestZZExplore(t *testing.T) {
	if os.Getenv("EXPLORE") == "" {
		t.Skip()
	}
	for _, pol := range []Policy{MembershipPre1, MembershipPre2, MembershipPre3, MembershipPre4, MembershipPre5} {
		t.Run(pol.Name, func(t *testing.T) {
			t.Parallel()
			counts := map[int]int{}
			var best = map[int]*Trace{}
			first := map[int]string{}
			for seed := uint64(1); seed <= 3; seed++ {
				for i := range 20000 {
					tr := Generate(seed, i, pol)
					v := Run(tr, Options{Policy: pol}).First()
					if v == nil {
						continue
					}
					if Run(tr, Options{Policy: Membership}).Verdict != Pass {
						continue
					}
					counts[v.Invariant]++
					if counts[v.Invariant] > 6 {
						continue
					}
					small := Shrink(tr, failsAsBug(pol, v.Invariant))
					if b := best[v.Invariant]; b == nil || len(small.Records) < len(b.Records) {
						best[v.Invariant] = small
						first[v.Invariant] = fmt.Sprintf("%d/%d", seed, i)
					}
				}
			}
			for n, b := range best {
				var buf bytes.Buffer
				b.Encode(&buf)
				res := Run(b, Options{Policy: pol})
				var out bytes.Buffer
				WriteText(&out, res)
				t.Logf("%s inv %d: %d failures; best %s (%d records)\n%s%s", pol.Name, n, counts[n], first[n], len(b.Records), buf.String(), out.String())
			}
		})
	}
}
