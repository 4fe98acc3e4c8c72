package reconcile

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dshctl/dshctl/internal/fixture"
)

// turnsAhead, the reference for the turn a window finds ahead of each frame, returns, for every frame of tab, the turn the frames after it
// show the server was running then: that of the next turn-sealed, unless a
// turn-start or an idle snapshot comes first (the turn ended unseen), or a
// snapshot naming a turn. serverTurns reads it where the frames so far do
// not say which turn runs.
func turnsAhead(recs []Record, tab string) []string {
	out := make([]string, len(recs))
	next := ""
	for i := len(recs) - 1; i >= 0; i-- {
		r := &recs[i]
		if r.Kind != KindWS || !ofTab(r.Ev, tab) {
			continue
		}
		switch ev := r.Ev; ev.Type {
		case "turn-sealed":
			next = ev.TurnID
		case "turn-start":
			next = ""
		case "statuses":
			snap, ok := ev.Statuses[tab]
			switch {
			case !ok:
			case snap.Status != StatusRunning:
				next = ""
			case snap.CurrentTurnID != "":
				next = snap.CurrentTurnID
			}
		}
		out[i] = next
	}
	return out
}

// router is the request router of a replay of recs, for tests that drive a
// machine themselves.
func router(recs []Record, answered map[int]reqKey) func(*request) (int, bool) {
	w := newSliceWindow(recs)
	w.start("", newLookahead())
	return w.router(answered)
}

// streamedTraces are the traces the streamed replay is compared on: the
// committed ones, and the reference client's when the fixtures are there.
func streamedTraces(t *testing.T) []string {
	files := traceFiles(t)
	if dir, ok := fixture.Lookup(t); ok {
		ind, _ := filepath.Glob(filepath.Join(dir, "dispatch-client", "traces", "*.jsonl"))
		files = append(files, ind...)
	}
	return files
}

// TestStreamedReplayMatches: a trace replayed while it is decoded, with a
// window of records ahead as small as 64, gets the result the decoded
// trace gets under every policy, unless it says it needed to see further.
func TestStreamedReplayMatches(t *testing.T) {
	defer func(n int) { streamWindow = n }(streamWindow)
	for _, size := range []int{1 << 14, 64} {
		streamWindow = size
		for _, path := range streamedTraces(t) {
			whole := loadTrace(t, path)
			streamed := OpenTrace(path, func() (io.ReadCloser, error) { return os.Open(path) })
			if streamed.Err != nil {
				t.Fatal(streamed.Err)
			}
			for _, pol := range []Policy{Membership, Legacy, BugD} {
				a, b := Run(whole, Options{Policy: pol}), Run(streamed, Options{Policy: pol})
				if slices.ContainsFunc(b.Warnings, func(w string) bool { return strings.Contains(w, "records after it") }) {
					continue
				}
				a.Timeline, b.Timeline = nil, nil
				if d := resultDiff(a, b); d != "" {
					t.Errorf("window %d, %s, %s: %s", size, filepath.Base(path), pol.Name, d)
				}
			}
		}
	}
}

// resultDiff says how two results of one trace differ, or "".
func resultDiff(a, b Result) string {
	switch {
	case a.Verdict != b.Verdict || a.Events != b.Events || a.Reconciles != b.Reconciles || a.Name != b.Name || a.Tab != b.Tab:
		return fmt.Sprintf("%s %d events %d reconciles vs streamed %s %d %d (%v)", a.Verdict, a.Events, a.Reconciles, b.Verdict, b.Events, b.Reconciles, b.Warnings)
	case !slices.Equal(a.Warnings, b.Warnings):
		return fmt.Sprintf("warnings %q vs %q", a.Warnings, b.Warnings)
	case len(a.Violations) != len(b.Violations):
		return fmt.Sprintf("%d vs %d violations", len(a.Violations), len(b.Violations))
	}
	for k := range a.Violations {
		x, y := a.Violations[k], b.Violations[k]
		if x.Invariant != y.Invariant || x.Index != y.Index || x.Detail != y.Detail || x.Event != y.Event {
			return fmt.Sprintf("violation %+v vs %+v", x, y)
		}
	}
	return ""
}

// TestWindowTurnsAhead: the turn a window finds ahead of each frame, as its
// records come, is what a backward pass over the whole trace finds.
func TestWindowTurnsAhead(t *testing.T) {
	check := func(name string, recs []Record, tab string) {
		w := newSliceWindow(recs)
		w.start(tab, newLookahead())
		want := turnsAhead(recs, tab)
		for i := range recs {
			if got := w.aheadOf(i); got != want[i] {
				t.Fatalf("%s: record %d: %q, want %q", name, i, got, want[i])
			}
		}
	}
	for _, path := range streamedTraces(t) {
		tr := loadTrace(t, path)
		check(filepath.Base(path), tr.Records, traceTab(tr))
	}
	for i := range 300 {
		g := Generate(5, i, Membership)
		check(g.Name, g.Records, genTab)
	}
}
