package reconcile

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Verdict is the outcome of replaying one trace.
type Verdict string

// Verdicts. Inconclusive: no violation, but records were skipped. Error:
// the trace could not be read (Result.Error says why); it counts as failed.
const (
	Pass         Verdict = "pass"
	Fail         Verdict = "fail"
	Inconclusive Verdict = "inconclusive"
	Error        Verdict = "error"
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

	// Context, when set, stops the replay once it is done: the result is
	// then of verdict Error, saying so.
	Context context.Context

	// NoBackend: only the trace's fetch records answer the client's chunk
	// requests; the backend model answers none (a request the trace does
	// not answer stays in flight, with a warning).
	NoBackend bool

	// Timeline, when positive, keeps up to that many records up to the
	// first violation (or the end) in Result.Timeline.
	Timeline int

	// errorRowOptional: a failed send need not show its error row, only
	// its message (tests count the traces that fail for that alone).
	errorRowOptional bool
}

// Snapshot is the client state a violation shows.
type Snapshot struct {
	C  []Chunk   `json:"chunks"`
	L  []Message `json:"live"`
	Q  []Queued  `json:"queue"`
	LT string    `json:"liveTurnId"`
	CA string    `json:"currentAssistantId"`

	Status string `json:"agentStatus"`
}

// snapshotOf copies s for a report: the machine goes on changing its rows.
func snapshotOf(s State) *Snapshot {
	c := s.Clone()
	snap := &Snapshot{C: c.C, L: c.L, Q: c.Q, LT: c.LT, CA: c.CA, Status: c.Status}
	// Empty lists, not null, for JSON readers.
	if snap.C == nil {
		snap.C = []Chunk{}
	}
	if snap.L == nil {
		snap.L = []Message{}
	}
	if snap.Q == nil {
		snap.Q = []Queued{}
	}
	return snap
}

// Violation is one invariant failing at one quiescent point.
type Violation struct {
	Invariant int       `json:"invariant"`
	Name      string    `json:"name"`
	Detail    string    `json:"detail"`
	Index     int       `json:"index"`            // 0-based record index; len(records) for the end of the trace
	Line      int       `json:"line,omitempty"`   // line in the trace file, when known
	Origin    string    `json:"origin,omitempty"` // where in a capture the record came from, when known
	Event     string    `json:"event"`            // the record as a trace line, or "end of trace"
	Before    *Snapshot `json:"before"`
	After     *Snapshot `json:"after"`

	// Record is the violating record; nil at the end of the trace.
	Record *Record `json:"-"`
	// Message and Fate name the user message the violation is about and
	// where the server's events say it went; empty when it is about
	// content, a turn or the whole state.
	Message, Text, Fate string `json:"-"`
}

// View returns the client's view of a snapshot: what the user saw.
func (s *Snapshot) View() ClientView {
	if s == nil {
		return View(&State{})
	}
	st := State{C: s.C, L: s.L, Q: s.Q, LT: s.LT, CA: s.CA, Status: s.Status}
	return View(&st)
}

// Result is the outcome of replaying one trace under one policy.
type Result struct {
	Name       string      `json:"name"`
	Source     string      `json:"source,omitempty"`
	Tab        string      `json:"tab,omitempty"`
	Policy     string      `json:"policy"`
	Verdict    Verdict     `json:"verdict"`
	Expect     string      `json:"expect,omitempty"`
	Events     int         `json:"events"`
	Reconciles int         `json:"reconciles"` // quiescent points checked, the end excluded
	Violations []Violation `json:"violations,omitempty"`
	Warnings   []string    `json:"warnings,omitempty"`
	Notes      []string    `json:"notes,omitempty"` // what an importer left out; no effect on the verdict
	Error      string      `json:"error,omitempty"` // why the trace could not be read (verdict Error)

	// Timeline is the last records up to the first violation, or to the
	// end (Options.Timeline), with Skipped records before them left out.
	Timeline []TimelineRecord `json:"-"`
	Skipped  int              `json:"-"`
}

// TimelineRecord is a record of a result's timeline.
type TimelineRecord struct {
	Index  int
	Line   int
	Origin string
	Record Record
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
// compares the final views (deferral safety). A trace read from a file
// (OpenTrace) is replayed while it is decoded, in memory bounded by the
// client's state and a window of records ahead, not by its length.
func Run(t *Trace, opts Options) Result {
	pol := opts.Policy
	if pol.Name == "" {
		pol = Membership
	}
	tab := t.Tab
	if t.open == nil {
		tab = traceTab(t)
	}
	res := Result{Name: t.Name, Source: t.Source, Tab: tab, Policy: pol.Name, Expect: t.Expect, Events: len(t.Records), Notes: t.Notes}
	if t.Err != nil {
		res.Verdict, res.Error = Error, t.Err.Error()
		return res
	}
	replay := t.replayer(tab, pol)
	main := replay(runOpts{ctx: opts.Context, check: true, errorRowOptional: opts.errorRowOptional,
		noBackend: opts.NoBackend, timeline: opts.Timeline})
	switch {
	case main.err != nil && main.decode:
		res.Verdict, res.Error = Error, main.err.Error()
		return res
	case main.err != nil:
		res.Verdict, res.Error = Error, "replay stopped: "+main.err.Error()
		return res
	}
	res.Tab, res.Events = main.tab, main.records
	if opts.Timeline > 0 {
		res.Timeline = main.timeline
		if len(main.timeline) > 0 {
			res.Skipped = main.timeline[0].Index
		}
	}
	res.Warnings, res.Reconciles, res.Violations = main.warnings, main.points, main.violations
	// A trace that proves nothing must not read as a pass.
	if main.records == 0 {
		res.Warnings = append(res.Warnings, "the trace has no records")
	}
	if t.Meta != nil && t.Meta.Version != 1 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("meta version %d is not 1: the trace may mean something else", t.Meta.Version))
	}
	if main.late {
		res.Warnings = append(res.Warnings, fmt.Sprintf("a record needed what the trace says more than %d records after it (an answer, or which turn a reconnect hid): the replay, which reads that far ahead, may have judged it wrongly", streamWindow))
	}
	if len(res.Violations) == 0 {
		v, err := deferralCheck(replay, main, opts.NoBackend, t.open != nil)
		switch {
		case err != nil && t.rc != nil:
			res.Warnings = append(res.Warnings, "not checked whether the end is the same without scroll events: "+err.Error())
		case err != nil:
			res.Verdict, res.Error = Error, err.Error()
			return res
		case v != nil:
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

// replayer returns the function that replays t with the options given:
// its records, or its file decoded as it is read.
func (t *Trace) replayer(tab string, pol Policy) func(runOpts) runOut {
	if t.open == nil {
		return func(o runOpts) runOut {
			o.where = t.where()
			return runOnce(t.Records, tab, pol, o)
		}
	}
	return func(o runOpts) runOut {
		src := t.first
		if src != nil {
			t.first = nil
			defer t.rc.Close()
		} else {
			rc, err := t.open()
			if err != nil {
				return runOut{err: err, decode: true}
			}
			defer rc.Close()
			if src, err = openLines(rc); err != nil {
				return runOut{err: fmt.Errorf("%s: %w", t.Source, err), decode: true}
			}
		}
		p := newPipe(src, streamWindow)
		defer p.stop()
		out := replayWindow(newStreamWindow(p, streamWindow), tab, pol, o)
		if out.decode {
			out.err = fmt.Errorf("%s: %w", t.Source, out.err)
		}
		return out
	}
}

// traceTab is the tab under test: the meta record's, else the first tabId.
func traceTab(t *Trace) string {
	if t.Tab != "" {
		return t.Tab
	}
	for i := range t.Records {
		if r := &t.Records[i]; r.Kind == KindWS && r.Ev.TabID != "" && r.Ev.Type != "statuses" {
			return r.Ev.TabID
		}
	}
	return ""
}

type runOut struct {
	final                    State
	deferred, deferredFailed bool
	answered                 map[int]reqKey
	view                     func() finalView // what the user sees at the end
	violations               []Violation
	warnings                 []string
	points                   int
	err                      error // from runOpts.after, the context, or the source (decode)
	decode                   bool  // err is the source's
	deferredAtEnd            bool  // a reconcile was still deferred at the end, before the flush
	tab                      string
	records                  int // records read
	timeline                 []TimelineRecord
	late                     bool // the window was too short for what a record needed to know
}

// runOpts says what runOnce does besides replaying.
type runOpts struct {
	ctx      context.Context // when set, the replay stops once it is done (runOut.err)
	check    bool            // check the invariants
	noScroll bool            // leave the scroll records out
	// answered: route fetch records by the turn and mode of the request
	// they answered in the full replay (for the replay without scroll
	// events, whose request numbers shift when deferrals collapse).
	answered map[int]reqKey
	// where names record i in warnings, when the trace says where its
	// records came from (Trace.Origins); nil: "record i".
	where            func(i int) string
	errorRowOptional bool // Options.errorRowOptional
	noBackend        bool // Options.NoBackend
	// supplied: see Machine.supplied.
	supplied func(r *request, rows *rowSet, at int, filled bool)
	// after, when set, is called after each record with the machine; an
	// error stops the replay.
	after func(i int, rec *Record, m *Machine) error
	// keepAll: the truth keeps the streamed content of sealed turns (the
	// final view compares it) in a streamed replay too.
	keepAll bool
	// timeline: keep that many records up to the first violation.
	timeline int
}

// where returns the function that names a record of t by where it came
// from, or nil when t does not say (a trace file: its records are named by
// index and line).
func (t *Trace) where() func(int) string {
	if len(t.Origins) != len(t.Records) {
		return nil
	}
	return func(i int) string {
		if i >= 0 && i < len(t.Origins) && t.Origins[i] != "" {
			return t.Origins[i]
		}
		if i == len(t.Origins) {
			return "end of trace"
		}
		return fmt.Sprintf("record %d", i)
	}
}

// runOnce replays recs. Records keep their index when scroll records are
// left out, so that content keeps its identity.
func runOnce(recs []Record, tab string, pol Policy, o runOpts) runOut {
	return replayWindow(newSliceWindow(recs), tab, pol, o)
}

// replayWindow replays the records of w. A streamed window learns
// the tab from its first records when tab is empty.
func replayWindow(w *window, tab string, pol Policy, o runOpts) runOut {
	if tab == "" && w.streamed() {
		for i := w.lo; i < w.hi; i++ {
			if r := w.at(i); r.Kind == KindWS && r.Ev.TabID != "" && r.Ev.Type != "statuses" {
				tab = r.Ev.TabID
				break
			}
		}
	}
	la := newLookahead()
	w.start(tab, la)
	be := newWindowBackend(w, la, tab)
	tr := newTruth(la, tab)
	tr.keepAll = !w.streamed() || o.keepAll
	m := newMachine(pol, tab, be, w.router(o.answered))
	m.where, m.noBackend, m.supplied = o.where, o.noBackend, o.supplied
	if w.streamed() && !o.keepAll {
		// Only the deferral check reads which request each fetch record
		// answered, and a streamed trace is read again for it.
		m.answered = nil
	}
	out := runOut{tab: tab}
	ck := newChecker(tr, m, pol)
	ck.errorRowOptional = o.errorRowOptional
	check := o.check
	var ring []TimelineRecord // the last o.timeline records read
	w.onLeft = func(i int, _ *Record) { be.catchUp(i) }
	i := 0
	for ; ; i++ {
		if o.ctx != nil && i&1023 == 0 {
			if err := o.ctx.Err(); err != nil {
				out.err = err
				return out
			}
		}
		rec, ok := w.get(i)
		if !ok {
			break
		}
		if o.timeline > 0 {
			tl := TimelineRecord{Index: i, Line: rec.Line, Record: rec.detached()}
			if o.where != nil {
				tl.Origin = o.where(i)
			}
			if len(ring) == o.timeline {
				copy(ring, ring[1:])
				ring = ring[:len(ring)-1]
			}
			ring = append(ring, tl)
		}
		if o.noScroll && rec.Kind == KindScroll {
			continue
		}
		tr.observe(i, rec)
		applied := m.apply(i, *rec)
		if o.after != nil {
			if err := o.after(i, rec, m); err != nil {
				out.err = err
				return out
			}
		}
		for _, a := range applied {
			out.points++
			if !check {
				continue
			}
			if vs := ck.point(&a); len(vs) > 0 {
				at := rec.detached()
				for k := range vs {
					vs[k].Index, vs[k].Line, vs[k].Event, vs[k].Record = i, rec.Line, rec.String(), &at
					if o.where != nil {
						vs[k].Origin = o.where(i)
					}
				}
				out.violations, out.warnings, out.records, out.timeline, out.late = vs, m.warnings, i+1, ring, w.late
				return out
			}
		}
	}
	if w.err != nil {
		out.err, out.decode = w.err, true
		return out
	}
	end := i
	out.records, out.timeline = end, ring
	out.deferredAtEnd = m.S.Pending != nil
	for _, a := range m.flush(end) {
		if !check {
			continue
		}
		if vs := ck.point(&a); len(vs) > 0 {
			for k := range vs {
				vs[k].Index, vs[k].Event = end, "end of trace (flush)"
			}
			out.violations, out.warnings, out.late = vs, m.warnings, w.late
			return out
		}
	}
	if check {
		out.violations = ck.end(m.S, end)
	}
	out.final, out.warnings, out.answered = m.S, m.warnings, m.answered
	out.deferred, out.deferredFailed = m.deferred, m.deferredFailed
	out.view = func() finalView { return ck.view(m.S) }
	out.late = w.late
	return out
}

// router returns the function that tells which fetch record answers a
// request: the first with its number, or with its key when answered is
// set (among the records decoded so far).
func (w *window) router(answered map[int]reqKey) func(*request) (int, bool) {
	carried := func(i int) (int, bool) {
		if !w.holds(i) {
			return i, false
		}
		r := w.at(i)
		return i, r.HasRows || r.FetchErr
	}
	if answered == nil {
		return func(r *request) (int, bool) {
			if i, ok := w.byReq[r.req]; ok {
				return carried(i)
			}
			return -1, false
		}
	}
	claimed := map[int]bool{}
	return func(r *request) (int, bool) {
		for i := w.lo; i < w.hi; i++ {
			if k, ok := answered[i]; ok && !claimed[i] && k == r.key() {
				claimed[i] = true
				return carried(i)
			}
		}
		return -1, false
	}
}

// deferralCheck replays the trace without its scroll events and compares
// what the user ends up seeing; nil when they agree, or no reconcile was
// deferred (scroll events then change nothing), or a deferred reconcile's
// fetch failed (the seals it stood for stay unreconciled by the failure,
// not by the deferral). A streamed replay, which let the content of
// sealed turns go, is first run again keeping it.
func deferralCheck(replay func(runOpts) runOut, main runOut, noBackend, streamed bool) (*Violation, error) {
	if !main.deferred || main.deferredFailed {
		return nil, nil
	}
	if streamed {
		if main = replay(runOpts{keepAll: true, noBackend: noBackend}); main.err != nil {
			return nil, main.err
		}
	}
	alt := replay(runOpts{noScroll: true, answered: main.answered, noBackend: noBackend, keepAll: true})
	if alt.err != nil {
		return nil, alt.err
	}
	a, b, differ := main.view().diff(alt.view())
	if !differ {
		return nil, nil
	}
	return &Violation{Invariant: 4, Name: InvariantName(4),
		Detail: fmt.Sprintf("final state differs without scroll events: %q with them, %q without", a, b),
		Index:  main.records, Event: "end of trace (replayed without scroll events)",
		Before: snapshotOf(alt.final), After: snapshotOf(main.final)}, nil
}

// checker evaluates the invariants against the truth tracker. A quiescent
// point costs what the reconcile touched — the fetched rows (indexed once
// per answer), the live rows before and after, the messages not settled yet
// and those of the turns the rows show or that are newer — never the
// trace's whole history: a message durable in a turn older than the rows'
// window is paged out, not lost.
type checker struct {
	tr  *Truth
	m   *Machine
	pol Policy

	errorRowOptional bool
	about            *tmsg // the message the last failing invariant is about

	pass        int // bumped per point, to visit each message once
	after, prev liveIndex
	cands       []*tmsg
}

// liveIndex is what the live rows of one state show, by the truth's ids.
type liveIndex struct {
	count     map[string]int // message id -> live user rows
	joined    []string       // texts of joined continuation rows
	joinedIDs []string       // their ids
	srcs      bitset         // records whose content a live row shows
	built     bool
}

// bitset is a set of record indexes; it grows to the largest one set.
type bitset []uint64

func (b *bitset) set(i int) {
	if w := i >> 6; w >= len(*b) {
		*b = append(*b, make([]uint64, w+1-len(*b)+len(*b)/4)...)
	}
	(*b)[i>>6] |= 1 << (i & 63)
}

func (b bitset) clear(i int) {
	if i>>6 < len(b) {
		b[i>>6] &^= 1 << (i & 63)
	}
}

func (b bitset) has(i int) bool { return i>>6 < len(b) && b[i>>6]&(1<<(i&63)) != 0 }

func newChecker(tr *Truth, m *Machine, pol Policy) *checker {
	return &checker{tr: tr, m: m, pol: pol,
		after: liveIndex{count: map[string]int{}},
		prev:  liveIndex{count: map[string]int{}}}
}

// build indexes the live rows of s.
func (x *liveIndex) build(s State, la *lookahead) {
	for i := range s.L {
		r := &s.L[i]
		for _, p := range r.Parts {
			if p.Src >= 0 {
				x.srcs.set(p.Src)
			}
		}
		if r.Role != RoleUser {
			continue
		}
		id := la.local(msgID(r.ID))
		if t := r.text(); strings.Contains(t, continuationSep) {
			// A joined continuation row stands for each message it joins.
			x.joined = append(x.joined, t)
			x.joinedIDs = append(x.joinedIDs, id)
			continue
		}
		x.count[id]++
	}
	x.built = true
}

// reset undoes build, touching only what build set.
func (x *liveIndex) reset(s State) {
	if !x.built {
		return
	}
	for i := range s.L {
		for _, p := range s.L[i].Parts {
			if p.Src >= 0 {
				x.srcs.clear(p.Src)
			}
		}
	}
	clear(x.count)
	x.joined, x.joinedIDs = x.joined[:0], x.joinedIDs[:0]
	x.built = false
}

// point checks one applied fetch result; every failing invariant, in checkOrder.
func (ck *checker) point(a *applied) []Violation {
	ck.after.build(a.after, ck.tr.la)
	defer ck.after.reset(a.after)
	defer ck.prev.reset(a.before)
	ck.candidates(a.after)
	var vs []Violation
	for _, n := range checkOrder {
		ck.about = nil
		if d := ck.invariant(n, a, a.after); d != "" {
			vs = append(vs, ck.aboutMessage(Violation{Invariant: n, Name: InvariantName(n), Detail: d,
				Before: snapshotOf(a.before), After: snapshotOf(a.after)}))
		}
	}
	return vs
}

// aboutMessage names in v the message the invariant just checked failed on.
func (ck *checker) aboutMessage(v Violation) Violation {
	if m := ck.about; m != nil {
		v.Message, v.Text, v.Fate = m.id, m.text, m.fate.String()+turnSuffix(m.turn)
	}
	return v
}

// end checks the state at the end of the trace.
func (ck *checker) end(s State, index int) []Violation {
	ck.after.build(s, ck.tr.la)
	defer ck.after.reset(s)
	ck.candidates(s)
	var vs []Violation
	for _, n := range checkOrder {
		ck.about = nil
		if d := ck.invariant(n, nil, s); d != "" {
			vs = append(vs, ck.aboutMessage(Violation{Invariant: n, Name: InvariantName(n), Detail: d,
				Index: index, Event: "end of trace", Before: snapshotOf(s), After: snapshotOf(s)}))
		}
	}
	return vs
}

// candidates gathers, in the order the tracker met them, the messages whose
// visibility s can decide: those not settled, those with a live row, and
// those of the turns in the fetched rows or newer than any of them.
func (ck *checker) candidates(s State) {
	tr := ck.tr
	ck.pass++
	ck.cands = ck.cands[:0]
	add := func(m *tmsg) {
		if m.mark != ck.pass {
			m.mark = ck.pass
			ck.cands = append(ck.cands, m)
		}
	}
	open := tr.open[:0]
	for _, m := range tr.open {
		if m.open() {
			open = append(open, m)
			add(m)
		}
	}
	clear(tr.open[len(open):])
	tr.open = open
	for id := range ck.after.count {
		if m := tr.byID[id]; m != nil {
			add(m)
		}
	}
	for _, id := range ck.after.joinedIDs {
		if m := tr.byID[id]; m != nil {
			add(m)
		}
	}
	newest := -1
	for _, t := range s.rows.turnList() {
		for _, m := range tr.byTurn[t] {
			add(m)
		}
		if o, ok := tr.order[t]; ok && o > newest {
			newest = o
		}
	}
	for _, t := range tr.turnList[newest+1:] {
		for _, m := range tr.byTurn[t] {
			add(m)
		}
	}
	slices.SortFunc(ck.cands, func(a, b *tmsg) int { return a.n - b.n })
}

// invariant returns why invariant n fails in state s, or "". a is the fetch
// result just applied; nil at the end of the trace.
func (ck *checker) invariant(n int, a *applied, s State) string {
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
			again := ck.pol.applyTo(a.after, &ck.m.bk, a.fetchResult)
			if d := diffState(a.after, again); d != "" {
				return fmt.Sprintf("applying the %s of %s (request %d) again changes the state: %s", a.mode, a.turn, a.req, d)
			}
		}
	}
	return ""
}

// visible counts where message m shows in s, whose live rows x indexes:
// live rows and durable rows.
func (ck *checker) visible(m *tmsg, s State, x *liveIndex) (live, durable int) {
	live = x.count[m.id]
	if m.fate == fateContWaiting || m.fate == fateContinuation {
		for _, j := range x.joined {
			if joinedHas(j, m.text) {
				live++
			}
		}
	}
	switch m.fate {
	case fateInitiator, fateContinuation:
		durable = s.rows.userCount(m.turn, m.text)
	case fateInterrupt:
		if !m.anyTurn {
			durable = s.rows.toolCount(m.turn, m.text)
			break
		}
		for _, t := range s.rows.turnList() {
			if at, ok := ck.tr.sealedAt[t]; ok && at < m.at {
				continue
			}
			durable += s.rows.toolCount(t, m.text)
		}
	}
	if durable == 0 && ck.pagedOut(m, s.rows) {
		durable = 1 // written before the window the rows show
	}
	return live, durable
}

// pagedOut reports whether message m, durable in its turn, is written
// before the window of rows: its turn is older than the first turn the rows
// show, or the window starts inside it (which rows of a turn precede the
// window cannot be told then).
func (ck *checker) pagedOut(m *tmsg, rows *rowSet) bool {
	if m.turn == "" || rows.first() == "" {
		return false
	}
	if rows.startsInside(m.turn) {
		return true
	}
	at, ok := ck.tr.order[m.turn]
	first, ok2 := ck.tr.order[rows.first()]
	return ok && ok2 && first > at
}

func hasRow(s State, id string) bool {
	return slices.ContainsFunc(s.L, func(r Message) bool { return r.ID == id })
}

// loss: invariant 1.
func (ck *checker) loss(s State) string {
	for _, m := range ck.cands {
		if m.fate == fateCancelled {
			continue
		}
		live, dur := ck.visible(m, s, &ck.after)
		if m.fate == fateFailed && m.errShown {
			if live == 0 || !ck.errorRowOptional && !hasRow(s, errorRowPrefix+m.id) {
				ck.about = m
				return fmt.Sprintf("failed message %q (%q) is not visible with its error", m.id, m.text)
			}
			continue
		}
		if live+dur == 0 {
			ck.about = m
			return fmt.Sprintf("message %q (%q, %s%s) is not visible", m.id, m.text, m.fate, turnSuffix(m.turn))
		}
	}
	for _, t := range ck.tr.unsealed {
		for c := range ck.tr.turnContent(t) {
			if !ck.after.srcs.has(c.src) {
				return fmt.Sprintf("content of running turn %s (record %d, %q) is not visible", c.turn, c.src, c.text)
			}
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
func (ck *checker) duplicate(s State) string {
	for _, m := range ck.cands {
		live, dur := ck.visible(m, s, &ck.after)
		if m.fate == fateCancelled && live > 0 || live+dur > 1 {
			ck.about = m
		}
		switch {
		case m.fate == fateCancelled && live > 0:
			return fmt.Sprintf("cancelled message %q (%q) is still visible", m.id, m.text)
		case live+dur > 1:
			return fmt.Sprintf("message %q (%q, %s%s) is visible %d times (%d live, %d durable)", m.id, m.text, m.fate, turnSuffix(m.turn), live+dur, live, dur)
		}
	}
	for _, r := range s.L {
		if r.TurnID != "" && ck.tr.sealed(r.TurnID) && s.rows.hasContent(r.TurnID) {
			return fmt.Sprintf("live row %q carries turn %s, which is sealed and reconciled", r.ID, r.TurnID)
		}
	}
	return ""
}

// newerTurn: invariant 3, for a reconcile of an older turn applied while a
// newer turn runs.
func (ck *checker) newerTurn(a *applied) string {
	r := ck.tr.turns.cur
	if r == "" || !ck.tr.newer(r, a.turn) {
		return ""
	}
	if a.before.LT == r && a.after.LT != r {
		return fmt.Sprintf("reconcile of %s moved LT off the running turn %s (to %q)", a.turn, r, a.after.LT)
	}
	if a.before.LT == r && a.before.CA != "" && a.after.CA != a.before.CA {
		return fmt.Sprintf("reconcile of %s moved CA off %q of the running turn %s (to %q)", a.turn, a.before.CA, r, a.after.CA)
	}
	ck.prev.build(a.before, ck.tr.la)
	for c := range ck.tr.turnContent(r) {
		if ck.prev.srcs.has(c.src) && !ck.after.srcs.has(c.src) {
			return fmt.Sprintf("reconcile of %s removed content of the running turn %s (record %d, %q)", a.turn, r, c.src, c.text)
		}
	}
	for _, m := range ck.tr.byTurn[r] {
		lb, db := ck.visible(m, a.before, &ck.prev)
		la, da := ck.visible(m, a.after, &ck.after)
		if lb+db > 0 && la+da == 0 {
			ck.about = m
			return fmt.Sprintf("reconcile of %s removed message %q (%s) of the running turn %s", a.turn, m.id, m.fate, r)
		}
	}
	return ""
}

// finalView is what the user sees at the end, in terms of the truth: how
// often each message shows, which content shows, LT and the queue. Two
// replays of one trace that end with equal views showed the user the same
// thing.
type finalView struct {
	msgs  []*tmsg
	shown []int // per message
	cont  []content
	seen  []bool // per content
	lt    string
	queue []string
}

func (ck *checker) view(s State) finalView {
	ck.after.build(s, ck.tr.la)
	defer ck.after.reset(s)
	v := finalView{msgs: ck.tr.msgs, cont: ck.tr.content, lt: s.LT}
	for _, m := range ck.tr.msgs {
		live, dur := ck.visible(m, s, &ck.after)
		v.shown = append(v.shown, live+dur)
	}
	for _, c := range ck.tr.content {
		v.seen = append(v.seen, ck.after.srcs.has(c.src) || s.rows.showsContent(c.turn, c.text))
	}
	for _, e := range s.Q {
		v.queue = append(v.queue, e.ID)
	}
	return v
}

// diff describes the first difference between two views of one trace.
func (v finalView) diff(w finalView) (a, b string, differ bool) {
	for k := range min(len(v.shown), len(w.shown)) {
		if v.shown[k] != w.shown[k] {
			f := func(n int) string { return fmt.Sprintf("message %s shown %d times", v.msgs[k].id, n) }
			return f(v.shown[k]), f(w.shown[k]), true
		}
	}
	for k := range min(len(v.seen), len(w.seen)) {
		if v.seen[k] != w.seen[k] {
			f := func(ok bool) string { return fmt.Sprintf("content of record %d shown: %t", v.cont[k].src, ok) }
			return f(v.seen[k]), f(w.seen[k]), true
		}
	}
	if v.lt != w.lt {
		return "liveTurnId " + v.lt, "liveTurnId " + w.lt, true
	}
	if !slices.Equal(v.queue, w.queue) {
		return "queue [" + strings.Join(v.queue, " ") + "]", "queue [" + strings.Join(w.queue, " ") + "]", true
	}
	if len(v.shown) != len(w.shown) || len(v.seen) != len(w.seen) {
		f := func(x finalView) string {
			return strconv.Itoa(len(x.shown)) + " messages, " + strconv.Itoa(len(x.seen)) + " pieces of content"
		}
		return f(v), f(w), true
	}
	return "", "", false
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

// States replays t under pol, without checking, and gives state the
// client's view after each record (its index, the record, which is valid
// only during the call). It returns the
// view at the end of the trace, before any request still in flight is
// answered, and the first error state returns or the trace's.
func States(t *Trace, pol Policy, state func(i int, rec *Record, v ClientView) error) (ClientView, error) {
	if pol.Name == "" {
		pol = Membership
	}
	if t.Err != nil {
		return ClientView{}, t.Err
	}
	tab := t.Tab
	if t.open == nil {
		tab = traceTab(t)
	}
	last := View(&State{Status: StatusRunning})
	out := t.replayer(tab, pol)(runOpts{after: func(i int, rec *Record, m *Machine) error {
		last = View(&m.S)
		return state(i, rec, last)
	}})
	if out.err != nil {
		return ClientView{}, out.err
	}
	return last, nil
}
