package sqlite

import (
	"errors"
	"strings"
	"testing"

	"github.com/dshctl/dshctl/internal/seam"
)

// TestScanBudgetCountsDecodedBytes checks that a scan's budget bounds what
// the payloads decode to, not only the stored bytes: a schema-17 row of a
// few hundred stored bytes that inflates to 4 MiB is past a 64 KiB budget
// (16 × 64 KiB decoded) before it is inflated, forward (read ahead) and in
// reverse.
func TestScanBudgetCountsDecodedBytes(t *testing.T) {
	for _, schema := range []int{Schema14, Schema17} {
		s := newStore(t, schema, Options{})
		h, err := s.Create(ctx, headerFor(s, "big"), seam.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		pad := strings.Repeat("a", 4<<20)
		var evs []seam.Event
		for i := range int64(8) {
			evs = append(evs, seam.Event{Type: "step/start", Seq: i, Time: 1785331618500 + i,
				Data: []byte(`{"turn":1,"step":1,"pad":"` + pad + `"}`)})
		}
		if err := h.Append(ctx, evs); err != nil {
			t.Fatal(err)
		}
		h.Close()
		r, err := s.Open(ctx, "big", seam.Read)
		if err != nil {
			t.Fatal(err)
		}
		const budget = 64 << 10
		for _, reverse := range []bool{false, true} {
			var decoded int
			var last error
			for e, err := range r.Scan(ctx, seam.ScanOptions{MaxBytes: budget, Reverse: reverse}) {
				if err != nil {
					last = err
					break
				}
				decoded += len(e.Data)
			}
			if !errors.Is(last, seam.ErrScanBudget) || decoded > budget*seam.ScanDecodedFactor {
				t.Errorf("schema %d, reverse %v: scan ended with %v after %d decoded bytes; want ErrScanBudget within %d",
					schema, reverse, last, decoded, budget*seam.ScanDecodedFactor)
			}
		}
		r.Close()
	}
}
