package reconcile

import (
	"fmt"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// recordGen draws records from a small vocabulary, in any order: the
// machine must cope with traces no server would produce.
func recordGen() *rapid.Generator[Record] {
	ids := rapid.SampledFrom([]string{"m1", "m2", "m3"})
	turns := rapid.SampledFrom([]string{"a", "b", "c"})
	ws := func(ev Event) Record {
		ev.TabID = "t1"
		return Record{Kind: KindWS, Ev: &ev}
	}
	return rapid.Custom(func(t *rapid.T) Record {
		switch rapid.IntRange(0, 15).Draw(t, "kind") {
		case 0:
			id := ids.Draw(t, "id")
			return Record{Kind: KindSend, ID: id, Text: "text of " + id}
		case 1:
			return Record{Kind: KindHTTP, ID: ids.Draw(t, "id"), Status: rapid.SampledFrom([]string{"ok", "queued", "error"}).Draw(t, "status")}
		case 2:
			return Record{Kind: KindCancel, ID: ids.Draw(t, "id")}
		case 3:
			return Record{Kind: KindScroll, Up: rapid.Bool().Draw(t, "up")}
		case 4:
			return Record{Kind: KindFetch, Req: rapid.IntRange(1, 4).Draw(t, "req"), FetchErr: rapid.Bool().Draw(t, "err")}
		case 5:
			return ws(Event{Type: "turn-start", TurnID: turns.Draw(t, "turn")})
		case 6:
			return ws(Event{Type: "turn-sealed", TurnID: turns.Draw(t, "turn")})
		case 7:
			return ws(Event{Type: "status", Status: rapid.SampledFrom([]string{"idle", "running", "error"}).Draw(t, "status")})
		case 8:
			id := ids.Draw(t, "id")
			return ws(Event{Type: "message-queued", MessageID: id, Message: "text of " + id})
		case 9:
			return ws(Event{Type: "message-consumed", MessageIDs: rapid.SliceOfNDistinct(ids, 1, 3, rapid.ID).Draw(t, "ids"), Reason: rapid.SampledFrom([]string{"", "continuation"}).Draw(t, "reason")})
		case 10:
			return ws(Event{Type: "message-cancelled", MessageID: ids.Draw(t, "id")})
		case 11:
			return ws(Event{Type: "done"})
		case 12:
			return ws(Event{Type: "statuses", Statuses: map[string]StatusSnapshot{"t1": {Status: rapid.SampledFrom([]string{"idle", "running"}).Draw(t, "status"), CurrentTurnID: turns.Draw(t, "turn")}}})
		case 13:
			return ws(Event{Type: "notice", Message: "note"})
		default:
			return ws(Event{Type: "text-delta", Delta: fmt.Sprintf("d%d ", rapid.IntRange(0, 99).Draw(t, "delta"))})
		}
	})
}

// TestMachineProperties checks, on arbitrary record sequences and every
// policy, properties of the machine that hold whatever the server does.
func TestMachineProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		pol := rapid.SampledFrom(Policies()).Draw(t, "policy")
		recs := rapid.SliceOfN(recordGen(), 0, 40).Draw(t, "records")
		be := NewBackend(recs, "t1")
		m := newMachine(pol, "t1", be, func(*request) (int, bool) { return -1, false })
		for i, rec := range recs {
			before := m.S.Clone()
			for _, a := range m.apply(i, rec) {
				// Applying one fetch result twice changes nothing.
				again := pol.applyTo(a.after.Clone(), &m.bk, a.fetchResult)
				if d := diffState(a.after, again); d != "" {
					t.Fatalf("record %d: applyTo not idempotent under %s: %s", i, pol.Name, d)
				}
				// C is exactly the fetched rows.
				if len(a.after.C) != len(a.rows.list) {
					t.Fatalf("record %d: C has %d rows, fetched %d", i, len(a.after.C), len(a.rows.list))
				}
			}
			if rec.Kind == KindWS && rec.Ev.Type == "turn-start" {
				checkBackfill(t, pol, before, m.S, rec.Ev.TurnID)
			}
			// Every queued row's message is in Q or was renamed away.
			for _, q := range m.S.Q {
				if q.ID == "" {
					t.Fatalf("record %d: empty id in Q", i)
				}
			}
		}
	})
}

// checkBackfill: turn-start tags at most one row, never a queued one, except
// under bug C, which tags every trailing untagged user row.
func checkBackfill(t *rapid.T, pol Policy, before, after State, turn string) {
	tagged := 0
	for j := range after.L {
		if j >= len(before.L) || before.L[j].TurnID == after.L[j].TurnID {
			continue
		}
		if before.L[j].TurnID != "" || after.L[j].TurnID != turn {
			t.Fatalf("backfill retagged %s from %q to %q", after.L[j].ID, before.L[j].TurnID, after.L[j].TurnID)
		}
		tagged++
		if pol.bugs&bugC == 0 && strings.HasPrefix(after.L[j].ID, queuedPrefix) {
			t.Fatalf("backfill tagged queued row %s", after.L[j].ID)
		}
	}
	if pol.bugs&bugC == 0 && tagged > 1 {
		t.Fatalf("backfill tagged %d rows", tagged)
	}
	if after.LT != turn {
		t.Fatalf("LT %q after turn-start %s", after.LT, turn)
	}
}

// TestGeneratedPassMembershipProperty: any generated trace passes the default
// policy (rapid picks seed and index, and shrinks a failure to a small one).
func TestGeneratedPassMembershipProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		seed := rapid.Uint64().Draw(t, "seed")
		index := rapid.IntRange(0, 1<<20).Draw(t, "index")
		tr := Generate(seed, index, Membership)
		if res := Run(tr, Options{}); res.Verdict != Pass {
			t.Fatalf("%s: %s %+v", tr.Name, res.Verdict, res.First())
		}
	})
}

// TestShrinkFixedPoint: the shrinker's result still fails, and dropping any
// single record of it makes it pass.
func TestShrinkFixedPoint(t *testing.T) {
	fails := failsAsBug(BugD, 2)
	for i := range genBudget {
		tr := Generate(genSeed, i, BugD)
		if !fails(tr) {
			continue
		}
		small := Shrink(tr, fails)
		if !fails(small) {
			t.Fatal("shrunk trace does not fail")
		}
		for j := range small.Records {
			recs := append(append([]Record(nil), small.Records[:j]...), small.Records[j+1:]...)
			if fails(small.withRecords(recs)) {
				t.Fatalf("record %d of the shrunk trace can still go", j)
			}
		}
		return
	}
	t.Fatal("no failing trace to shrink")
}
