package reconcile

import (
	"fmt"
	"slices"
	"strings"
)

// Verdict is the outcome of replaying one trace.
type Verdict string

// Verdicts. Inconclusive: no violation, but records were skipped.
const (
	Pass         Verdict = "pass"
	Fail         Verdict = "fail"
	Inconclusive Verdict = "inconclusive"
)

// Invariant names, by number (replay.md).
var invariantNames = map[int]string{
	1: "no loss",
	2: "no duplicate, no linger",
	3: "newer turn preserved",
	4: "idempotent and deferral-safe",
}

// InvariantName returns the short name of invariant n.
func InvariantName(n int) string { return invariantNames[n] }

// Options configures Run.
type Options struct {
	Policy Policy // zero value: Membership
}

// Snapshot is the client state a violation shows.
type Snapshot struct {
	C  []Chunk   `json:"chunks"`
	L  []Message `json:"live"`
	Q  []Queued  `json:"queue"`
	LT string    `json:"liveTurnId"`
	CA string    `json:"currentAssistantId"`
}

func snapshotOf(s State) *Snapshot {
	return &Snapshot{C: s.C, L: s.L, Q: s.Q, LT: s.LT, CA: s.CA}
}

// Violation is one invariant failing at one quiescent point.
type Violation struct {
	Invariant int       `json:"invariant"`
	Name      string    `json:"name"`
	Detail    string    `json:"detail"`
	Index     int       `json:"index"`          // 0-based record index; len(records) for the end of the trace
	Line      int       `json:"line,omitempty"` // line in the trace file, when known
	Event     string    `json:"event"`          // the record as a trace line, or "end of trace"
	Before    *Snapshot `json:"before"`
	After     *Snapshot `json:"after"`
}

// Result is the outcome of replaying one trace under one policy.
type Result struct {
	Name       string      `json:"name"`
	Policy     string      `json:"policy"`
	Verdict    Verdict     `json:"verdict"`
	Expect     string      `json:"expect,omitempty"`
	Events     int         `json:"events"`
	Reconciles int         `json:"reconciles"` // quiescent points checked, the end excluded
	Violations []Violation `json:"violations,omitempty"`
	Warnings   []string    `json:"warnings,omitempty"`
}

// First returns the violation reported for the trace: the first invariant
// failing at the first quiescent point that fails, or nil.
func (r Result) First() *Violation {
	if len(r.Violations) == 0 {
		return nil
	}
	return &r.Violations[0]
}

// checkOrder is the order in which invariants are reported at one point:
// the most specific first, since a lost newer turn is also a loss.
var checkOrder = []int{3, 2, 1, 4}

// Run replays t under opts.Policy and checks invariants 1–4 at every quiescent
// point and at the end; it then replays t without its scroll events and
// compares the final views (deferral safety).
func Run(t *Trace, opts Options) Result {
	pol := opts.Policy
	if pol.Name == "" {
		pol = Membership
	}
	res := Result{Name: t.Name, Policy: pol.Name, Expect: t.Expect, Events: len(t.Records)}
	tab := traceTab(t)
	idx := make([]int, len(t.Records))
	for i := range idx {
		idx[i] = i
	}
	main := runOnce(t.Records, idx, tab, pol, true, nil)
	res.Warnings, res.Reconciles, res.Violations = main.warnings, main.points, main.violations
	// A trace that proves nothing must not read as a pass.
	if len(t.Records) == 0 {
		res.Warnings = append(res.Warnings, "the trace has no records")
	}
	if t.Meta != nil && t.Meta.Version != 1 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("meta version %d is not 1: the trace may mean something else", t.Meta.Version))
	}
	if len(res.Violations) == 0 {
		if v := deferralCheck(t, tab, pol, main); v != nil {
			res.Violations = []Violation{*v}
		}
	}
	switch {
	case len(res.Violations) > 0:
		res.Verdict = Fail
	case len(res.Warnings) > 0:
		res.Verdict = Inconclusive
	default:
		res.Verdict = Pass
	}
	return res
}

// traceTab is the tab under test: the meta record's, else the first tabId.
func traceTab(t *Trace) string {
	if t.Tab != "" {
		return t.Tab
	}
	for _, r := range t.Records {
		if r.Kind == KindWS && r.Ev.TabID != "" && r.Ev.Type != "statuses" {
			return r.Ev.TabID
		}
	}
	return ""
}

type runOut struct {
	final      State
	answered   map[int]reqKey
	view       []string
	violations []Violation
	warnings   []string
	points     int
}

// runOnce replays recs; idx maps each record to its index in the full trace,
// so that content keeps its identity when records are left out.
//
// Fetch records answer requests by number; when answered is set (the replay
// without scroll events), by the turn and mode of the request they answered
// in the full replay, since request numbers shift when deferrals collapse.
func runOnce(recs []Record, idx []int, tab string, pol Policy, check bool, answered map[int]reqKey) runOut {
	be := NewBackend(recs, tab)
	tr := newTruth(be.la, tab)
	m := newMachine(pol, tab, be, router(recs, idx, answered))
	var out runOut
	ck := checker{tr: tr, m: m, pol: pol}
	for j, rec := range recs {
		i := idx[j]
		be.Apply(rec)
		tr.observe(i, rec)
		for _, a := range m.apply(i, rec) {
			out.points++
			if !check {
				continue
			}
			if vs := ck.point(a); len(vs) > 0 {
				for k := range vs {
					vs[k].Index, vs[k].Line, vs[k].Event = j, rec.Line, rec.String()
				}
				out.violations, out.warnings = vs, m.warnings
				return out
			}
		}
	}
	end := len(recs)
	if len(idx) > 0 {
		end = idx[len(idx)-1] + 1
	}
	for _, a := range m.flush(end) {
		if !check {
			continue
		}
		if vs := ck.point(a); len(vs) > 0 {
			for k := range vs {
				vs[k].Index, vs[k].Event = len(recs), "end of trace (flush)"
			}
			out.violations, out.warnings = vs, m.warnings
			return out
		}
	}
	if check {
		var vs []Violation
		for _, n := range checkOrder {
			if d := ck.invariant(n, nil, m.S); d != "" {
				vs = append(vs, Violation{Invariant: n, Name: InvariantName(n), Detail: d,
					Index: len(recs), Event: "end of trace", Before: snapshotOf(m.S), After: snapshotOf(m.S)})
			}
		}
		out.violations = vs
	}
	out.final, out.warnings, out.answered = m.S, m.warnings, m.answered
	out.view = ck.view(m.S)
	return out
}

// router returns the function that tells which fetch record answers a
// request: the first with its number, or with its key when answered is set.
func router(recs []Record, idx []int, answered map[int]reqKey) func(*request) int {
	byReq := map[int]int{}
	var keyed []int // fetch records not claimed yet
	for j, r := range recs {
		if r.Kind != KindFetch {
			continue
		}
		if _, ok := byReq[r.Req]; !ok {
			byReq[r.Req] = idx[j]
		}
		if _, ok := answered[idx[j]]; ok {
			keyed = append(keyed, idx[j])
		}
	}
	if answered == nil {
		return func(r *request) int {
			if i, ok := byReq[r.req]; ok {
				return i
			}
			return -1
		}
	}
	return func(r *request) int {
		for k, i := range keyed {
			if answered[i] == r.key() {
				keyed = append(keyed[:k:k], keyed[k+1:]...)
				return i
			}
		}
		return -1
	}
}

// deferralCheck replays t without its scroll events and compares what the
// user ends up seeing; nil when they agree or t has no scroll event.
func deferralCheck(t *Trace, tab string, pol Policy, main runOut) *Violation {
	var recs []Record
	var idx []int
	for i, r := range t.Records {
		if r.Kind != KindScroll {
			recs = append(recs, r)
			idx = append(idx, i)
		}
	}
	if len(recs) == len(t.Records) {
		return nil
	}
	alt := runOnce(recs, idx, tab, pol, false, main.answered)
	for k := 0; k < max(len(main.view), len(alt.view)); k++ {
		a, b := at(main.view, k), at(alt.view, k)
		if a == b {
			continue
		}
		return &Violation{Invariant: 4, Name: InvariantName(4),
			Detail: fmt.Sprintf("final state differs without scroll events: %q with them, %q without", a, b),
			Index:  len(t.Records), Event: "end of trace (replayed without scroll events)",
			Before: snapshotOf(alt.final), After: snapshotOf(main.final)}
	}
	return nil
}

func at(s []string, k int) string {
	if k < len(s) {
		return s[k]
	}
	return "(nothing)"
}

// checker evaluates the invariants against the truth tracker.
type checker struct {
	tr  *Truth
	m   *Machine
	pol Policy
}

// point checks one applied fetch result; every failing invariant, in checkOrder.
func (ck checker) point(a applied) []Violation {
	var vs []Violation
	for _, n := range checkOrder {
		if d := ck.invariant(n, &a, a.after); d != "" {
			vs = append(vs, Violation{Invariant: n, Name: InvariantName(n), Detail: d,
				Before: snapshotOf(a.before), After: snapshotOf(a.after)})
		}
	}
	return vs
}

// invariant returns why invariant n fails in state s, or "". a is the fetch
// result just applied; nil at the end of the trace.
func (ck checker) invariant(n int, a *applied, s State) string {
	switch n {
	case 1:
		return ck.loss(s)
	case 2:
		return ck.duplicate(s)
	case 3:
		if a != nil && a.mode == modeReconcile {
			return ck.newerTurn(a)
		}
	case 4:
		if a != nil {
			again := ck.pol.applyTo(a.after.Clone(), &ck.m.bk, a.fetchResult)
			if d := diffState(a.after, again); d != "" {
				return fmt.Sprintf("applying the %s of %s (request %d) again changes the state: %s", a.mode, a.turn, a.req, d)
			}
		}
	}
	return ""
}

// visible counts where message m shows in s: live rows and durable rows.
func (ck checker) visible(m *tmsg, s State) (live, durable int) {
	for _, r := range s.L {
		if r.Role != RoleUser {
			continue
		}
		if msgID(r.ID) == m.id {
			live++
			continue
		}
		if (m.fate == fateContWaiting || m.fate == fateContinuation) && strings.Contains(r.text(), continuationSep) && joinedHas(r.text(), m.text) {
			live++
		}
	}
	for _, c := range s.C {
		if c.TurnID != m.turn || m.turn == "" {
			continue
		}
		switch m.fate {
		case fateInitiator, fateContinuation:
			if c.Role == RoleUser && joinedHas(userText(c), m.text) {
				durable++
			}
		case fateInterrupt:
			if m.text != "" && c.Type == "tool_result" && strings.Contains(textOf(c.Data), m.text) {
				durable++
			}
		}
	}
	return live, durable
}

func srcSet(s State) map[int]bool {
	set := map[int]bool{}
	for _, r := range s.L {
		for _, p := range r.Parts {
			set[p.Src] = true
		}
	}
	return set
}

func hasRow(s State, id string) bool {
	return slices.ContainsFunc(s.L, func(r Message) bool { return r.ID == id })
}

// loss: invariant 1.
func (ck checker) loss(s State) string {
	for _, m := range ck.tr.msgs {
		if m.fate == fateCancelled {
			continue
		}
		live, dur := ck.visible(m, s)
		if m.fate == fateFailed && m.errShown {
			if live == 0 || !hasRow(s, errorRowPrefix+m.id) {
				return fmt.Sprintf("failed message %q (%q) is not visible with its error", m.id, m.text)
			}
			continue
		}
		if live+dur == 0 {
			return fmt.Sprintf("message %q (%q, %s%s) is not visible", m.id, m.text, m.fate, turnSuffix(m.turn))
		}
	}
	srcs := srcSet(s)
	for _, c := range ck.tr.content {
		if !ck.tr.sealed[c.turn] && !srcs[c.src] {
			return fmt.Sprintf("content of running turn %s (record %d, %q) is not visible", c.turn, c.src, c.text)
		}
	}
	return ""
}

func turnSuffix(t string) string {
	if t == "" {
		return ""
	}
	return " of " + t
}

// duplicate: invariant 2.
func (ck checker) duplicate(s State) string {
	for _, m := range ck.tr.msgs {
		live, dur := ck.visible(m, s)
		switch {
		case m.fate == fateCancelled && live > 0:
			return fmt.Sprintf("cancelled message %q (%q) is still visible", m.id, m.text)
		case live+dur > 1:
			return fmt.Sprintf("message %q (%q, %s%s) is visible %d times (%d live, %d durable)", m.id, m.text, m.fate, turnSuffix(m.turn), live+dur, live, dur)
		}
	}
	for _, r := range s.L {
		if r.TurnID != "" && ck.tr.sealed[r.TurnID] && hasContent(s.C, r.TurnID) {
			return fmt.Sprintf("live row %q carries turn %s, which is sealed and reconciled", r.ID, r.TurnID)
		}
	}
	return ""
}

// newerTurn: invariant 3, for a reconcile of an older turn applied while a
// newer turn runs.
func (ck checker) newerTurn(a *applied) string {
	r := ck.tr.running
	if r == "" || !ck.tr.newer(r, a.turn) {
		return ""
	}
	if a.before.LT == r && a.after.LT != r {
		return fmt.Sprintf("reconcile of %s moved LT off the running turn %s (to %q)", a.turn, r, a.after.LT)
	}
	if a.before.LT == r && a.before.CA != "" && a.after.CA != a.before.CA {
		return fmt.Sprintf("reconcile of %s moved CA off %q of the running turn %s (to %q)", a.turn, a.before.CA, r, a.after.CA)
	}
	before, after := srcSet(a.before), srcSet(a.after)
	for _, c := range ck.tr.content {
		if c.turn == r && before[c.src] && !after[c.src] {
			return fmt.Sprintf("reconcile of %s removed content of the running turn %s (record %d, %q)", a.turn, r, c.src, c.text)
		}
	}
	for _, m := range ck.tr.msgs {
		if m.turn != r {
			continue
		}
		lb, db := ck.visible(m, a.before)
		la, da := ck.visible(m, a.after)
		if lb+db > 0 && la+da == 0 {
			return fmt.Sprintf("reconcile of %s removed message %q (%s) of the running turn %s", a.turn, m.id, m.fate, r)
		}
	}
	return ""
}

// view is what the user sees at the end, in terms of the truth: how often
// each message shows, which content shows, LT and the queue. Two replays of
// one trace that end with equal views showed the user the same thing.
func (ck checker) view(s State) []string {
	var v []string
	for _, m := range ck.tr.msgs {
		live, dur := ck.visible(m, s)
		v = append(v, fmt.Sprintf("message %s shown %d times", m.id, live+dur))
	}
	srcs := srcSet(s)
	for _, c := range ck.tr.content {
		shown := srcs[c.src]
		if !shown && c.text != "" {
			shown = slices.ContainsFunc(s.C, func(x Chunk) bool {
				return x.TurnID == c.turn && x.Role != RoleUser && strings.Contains(textOf(x.Data), c.text)
			})
		}
		v = append(v, fmt.Sprintf("content of record %d shown: %t", c.src, shown))
	}
	var q []string
	for _, e := range s.Q {
		q = append(q, e.ID)
	}
	return append(v, "liveTurnId "+s.LT, "queue ["+strings.Join(q, " ")+"]")
}

// diffState describes the first difference between two states, or "".
func diffState(a, b State) string {
	switch {
	case a.LT != b.LT:
		return fmt.Sprintf("LT %q vs %q", a.LT, b.LT)
	case a.CA != b.CA:
		return fmt.Sprintf("CA %q vs %q", a.CA, b.CA)
	case len(a.C) != len(b.C):
		return fmt.Sprintf("%d vs %d chunks", len(a.C), len(b.C))
	case len(a.L) != len(b.L):
		return fmt.Sprintf("%d vs %d live rows", len(a.L), len(b.L))
	case len(a.Q) != len(b.Q):
		return fmt.Sprintf("%d vs %d queued", len(a.Q), len(b.Q))
	}
	for i := range a.C {
		if a.C[i].ID != b.C[i].ID || a.C[i].Seq != b.C[i].Seq {
			return fmt.Sprintf("chunk %d: %s vs %s", i, a.C[i].ID, b.C[i].ID)
		}
	}
	for i := range a.L {
		x, y := a.L[i], b.L[i]
		if x.ID != y.ID || x.TurnID != y.TurnID || x.Streaming != y.Streaming || !slices.Equal(x.Parts, y.Parts) {
			return fmt.Sprintf("live row %d: %s vs %s", i, x.ID, y.ID)
		}
	}
	for i := range a.Q {
		if a.Q[i] != b.Q[i] {
			return fmt.Sprintf("queue entry %d: %s vs %s", i, a.Q[i].ID, b.Q[i].ID)
		}
	}
	return ""
}
