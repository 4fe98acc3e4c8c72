package reconcile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const tracesDir = "../../testdata/traces"

func loadTrace(t testing.TB, path string) *Trace {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr, err := DecodeTrace(f, filepath.Base(path))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return tr
}

func traceFiles(t testing.TB) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(tracesDir, "*.jsonl"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no traces in %s: %v", tracesDir, err)
	}
	return files
}

// isScenario reports whether path is one of the scenarios S1–S8 (s*.jsonl),
// which legacy passes too, rather than a membership regression trace
// (regress-*.jsonl).
func isScenario(path string) bool {
	return strings.HasPrefix(filepath.Base(path), "s")
}

// TestTracesPass: every trace in testdata/traces passes under membership, and
// the scenarios S1–S8 under legacy too.
func TestTracesPass(t *testing.T) {
	for _, path := range traceFiles(t) {
		tr := loadTrace(t, path)
		pols := []Policy{Membership}
		if isScenario(path) {
			pols = append(pols, Legacy)
		}
		for _, pol := range pols {
			t.Run(filepath.Base(path)+"/"+pol.Name, func(t *testing.T) {
				res := Run(tr, Options{Policy: pol})
				if res.Verdict != Pass {
					t.Fatalf("verdict %s: %+v\nwarnings: %v", res.Verdict, res.First(), res.Warnings)
				}
				if res.Reconciles == 0 {
					t.Fatalf("no reconcile was checked")
				}
			})
		}
	}
}

// TestBugVariantsFailTheirScenario: each historical bug fails the scenario
// or regression trace named after it, with the invariant that describes it
// (the traces pass under the fixed policy: TestTracesPass).
func TestBugVariantsFailTheirScenario(t *testing.T) {
	cases := []struct {
		pol       Policy
		trace     string
		invariant int
	}{
		{BugA, "s8-deferred-seal-keeps-newer-turn.jsonl", 3},
		{BugB, "s3-queued-survives-seal.jsonl", 1},
		{BugC, "s4-backfill-skips-queued.jsonl", 1},
		{BugD, "s5-consumed-interrupt-collapses.jsonl", 2},
		{MembershipPre1, "regress-1-late-http-queued-continuation.jsonl", 2},
		{MembershipPre2, "regress-2-message-queued-after-cancel.jsonl", 2},
		{MembershipPre3, "regress-3-unanswered-send-started-turn.jsonl", 2},
		{MembershipPre4, "regress-4-backfill-tag-on-waiting-send.jsonl", 2},
		{MembershipPre5, "regress-5-deferred-seal-of-other-turn.jsonl", 4},
		{MembershipPre6, "regress-6-older-fetch-after-seal-keeps-turn.jsonl", 4},
		{MembershipPre7, "regress-7-interrupt-after-snapshot-without-turn.jsonl", 2},
		{MembershipPre8, "regress-8-plain-send-queued-under-server-id.jsonl", 2},
	}
	for _, c := range cases {
		t.Run(c.pol.Name, func(t *testing.T) {
			tr := loadTrace(t, filepath.Join(tracesDir, c.trace))
			if f := tr.Meta.Extra["failsUnder"]; f != "" && f != c.pol.Name {
				t.Errorf("meta says it fails under %s", f)
			}
			res := Run(tr, Options{Policy: c.pol})
			v := res.First()
			if res.Verdict != Fail || v == nil {
				t.Fatalf("%s passes %s", c.pol.Name, c.trace)
			}
			if v.Invariant != c.invariant {
				t.Fatalf("invariant %d (%s), want %d", v.Invariant, v.Detail, c.invariant)
			}
			if v.Before == nil || v.After == nil || v.Event == "" {
				t.Fatalf("violation lacks its event or states: %+v", v)
			}
			t.Logf("%s: invariant %d at record %d: %s", c.trace, v.Invariant, v.Index, v.Detail)
		})
	}
}

// TestLegacyFailsTheServerTurnTraces: the traces of the fixes to how the
// client follows the server's turns and ids (7, 8) fail the shipped client
// too, with the invariant that describes the bug, and pass membership.
func TestLegacyFailsTheServerTurnTraces(t *testing.T) {
	for _, name := range []string{"regress-7-interrupt-after-snapshot-without-turn.jsonl", "regress-8-plain-send-queued-under-server-id.jsonl"} {
		tr := loadTrace(t, filepath.Join(tracesDir, name))
		v := Run(tr, Options{Policy: Legacy}).First()
		if v == nil || v.Invariant != 2 {
			t.Errorf("%s: legacy gives %+v, want invariant 2", name, v)
		}
		if res := Run(tr, Options{}); res.Verdict != Pass {
			t.Errorf("%s: membership gives %s", name, res.Verdict)
		}
	}
}

// TestScenarioEndStates checks the end states replay.md gives for S1–S8.
func TestScenarioEndStates(t *testing.T) {
	type want struct {
		live   []string // live row ids, in order
		chunks int
		lt     string
		render []string // roles of group(C) ++ L
	}
	cases := map[string]want{
		"s1-seal-folds-live-turn.jsonl":           {chunks: 2, render: []string{"user", "assistant"}},
		"s2-deferral.jsonl":                       {chunks: 1, render: []string{"user"}},
		"s3-queued-survives-seal.jsonl":           {live: []string{"queued-q1"}, chunks: 2, render: []string{"user", "assistant", "user"}},
		"s4-backfill-skips-queued.jsonl":          {live: []string{"queued-m2"}, chunks: 2, render: []string{"user", "assistant", "user"}},
		"s5-consumed-interrupt-collapses.jsonl":   {chunks: 4, render: []string{"user", "assistant", "tool", "assistant"}},
		"s6-continuation.jsonl":                   {chunks: 4, render: []string{"user", "assistant", "user", "assistant"}},
		"s6-continuation-server-order.jsonl":      {chunks: 4, render: []string{"user", "assistant", "user", "assistant"}},
		"s7-two-continuations-collapse.jsonl":     {chunks: 4, render: []string{"user", "assistant", "user", "assistant"}},
		"s8-deferred-seal-keeps-newer-turn.jsonl": {live: []string{"a2"}, chunks: 2, lt: "b", render: []string{"user", "assistant", "assistant"}},
	}
	for name, w := range cases {
		for _, pol := range []Policy{Membership, Legacy} {
			t.Run(name+"/"+pol.Name, func(t *testing.T) {
				s := finalState(t, loadTrace(t, filepath.Join(tracesDir, name)), pol)
				var live, render []string
				for _, c := range s.C {
					render = append(render, c.Role)
				}
				for _, r := range s.L {
					live = append(live, r.ID)
					render = append(render, r.Role)
				}
				if strings.Join(live, ",") != strings.Join(w.live, ",") {
					t.Errorf("live %v, want %v", live, w.live)
				}
				if len(s.C) != w.chunks {
					t.Errorf("%d chunks, want %d", len(s.C), w.chunks)
				}
				if s.LT != w.lt {
					t.Errorf("LT %q, want %q", s.LT, w.lt)
				}
				if strings.Join(render, ",") != strings.Join(w.render, ",") {
					t.Errorf("render %v, want %v", render, w.render)
				}
			})
		}
	}
}

// finalState replays tr and returns the client state at the end.
func finalState(t *testing.T, tr *Trace, pol Policy) State {
	t.Helper()
	return runOnce(tr.Records, traceTab(tr), pol, runOpts{}).final
}
