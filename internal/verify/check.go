package verify

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/dshctl/dshctl/internal/inspect"
	"github.com/dshctl/dshctl/internal/seam"
)

// The event types whose rules verify checks.
const (
	typeTurnStart        = "turn/start"
	typeTurnEnd          = "turn/end"
	typeStepStart        = "step/start"
	typeStepEnd          = "step/end"
	typeAssistantMessage = "assistant/message"
	typeToolCall         = "tool/call"
	typeToolResult       = "tool/result"
)

const (
	// maxFindings bounds the findings a check keeps for one log; past it
	// they are counted, so memory stays bounded whatever a log holds.
	maxFindings = 256
	// maxTurnCalls bounds the tool calls of one turn that the pairing
	// check follows; past it the turn's pairing is not checked.
	maxTurnCalls = 4096
	// maxUnknownTypes bounds the distinct unknown event types counted.
	maxUnknownTypes = 64
)

// LogCheck applies verify's rules to one log as a seam.LogVisitor: a
// backend's LogVerifier feeds it the log's records in storage order, and
// Result says what is wrong. It is backend-neutral and pure: it judges
// records, never bytes.
//
// The rules: seq contiguity (a gap is reported as "41 → 43"), vocabulary,
// the seeded-header marker, turn and step bracketing, tool-call/result
// pairing, the open tail turn (a note), and the commit rule of store.md 4:
// the first bad record (one that does not decode, or does not continue the
// seq) starts an uncommitted tail unless some later record is a turn/end,
// which makes it damaged committed data instead. Records of a unit that
// fails its check are withdrawn; a torn final unit's complete records are
// counted for a salvage.
//
// Memory is bounded by the open turn's tool calls and a cap on the
// findings kept, not by the log.
type LogCheck struct {
	hdr    seam.Header
	hdrOK  bool
	inBody bool
	ver    int

	st    checkState
	found []checkFinding // made by the rules; rolled back with the state
	phys  []checkFinding // reported by the backend; rolled back with units
	order int

	facts inspect.TurnFacts // of the event at hand
	path  string            // the log's, from the positions the backend gave

	unit  *unitMark // the open provisional unit
	salv  salvageCount
	torn  *TornTail
	unkns map[string]*unknownType
}

// checkFinding is a finding with what a verify mode needs to judge it.
type checkFinding struct {
	seam.Finding
	order  int
	body   bool  // about the log's body (after its header)
	events int64 // committed events before it
	bytes  int64 // where the sound prefix before it ends, -1 when unknown
	remedy Remedy
}

// checkState is everything a rollback restores.
type checkState struct {
	next      int64 // the seq the next record must start at
	resync    bool  // the next record sets next: records were lost
	events    int64 // events read so far
	lastSeq   int64
	marker    seam.SeedMarker
	open      inspect.OpenTurnTracker
	brk       bracket
	nfound    int // len(found)
	dropped   int // findings past maxFindings
	spec      *speculation
	turnStart int64 // seq of the last turn/start
	// The records seen in the current frame, for what a repair writes
	// back of a frame that holds the first uncommitted record.
	frame     int
	frameRecs int
}

// clone returns a copy of st that shares nothing mutable with it.
func (st *checkState) clone() checkState {
	c := *st
	c.open = st.open.Clone()
	c.brk.calls = slices.Clone(st.brk.calls)
	return c
}

// speculation is an uncommitted-tail candidate: from the first bad record
// after the last turn/end on, until a turn/end commits it or the log ends.
type speculation struct {
	at      checkState // the state before the first bad record
	pos     seam.Pos
	code    string
	cause   string
	order   int
	bad     []int // indexes in found of the region's bad-record findings
	records int64 // bad records in the region
	rewrite int   // committed records before it in its frame
	bytes   int64 // where it starts: the start of its line or frame
	// overLimit says its first record is over the reader's record limit
	// (seam.ErrLimit): a repair, which must read it, cannot either.
	overLimit bool
}

type unitMark struct {
	st         checkState
	nfound     int
	nphys      int
	specBefore bool
}

// salvageCount counts the records of a torn unit that would continue the
// log.
type salvageCount struct {
	records int64
	events  int64
	from    int64
	stopped bool
}

type unknownType struct {
	idx   int // in found, or -1 once rolled back past
	count int64
	first int64
}

// bracket follows turns and steps for the bracketing and pairing checks.
type bracket struct {
	off      bool // suspended after damage, until the next turn/start
	turnOpen bool
	turn     int64
	hasTurn  bool
	turnSeq  int64
	stepOpen bool
	step     int64
	hasStep  bool
	calls    []callState
	overflow bool
}

type callState struct {
	id                         string
	requested, called, settled bool
}

// TornTail is a torn tail: bytes after the last complete record or unit
// that readers never serve.
type TornTail struct {
	Pos  seam.Pos
	Size int64
	// Salvage counts the events of the complete records of a torn final
	// unit that continue the log, SalvageRecords those records: what
	// --repair --salvage re-appends.
	Salvage        int64
	SalvageRecords int64
	SalvageFrom    int64
}

// CheckResult is what a LogCheck found.
type CheckResult struct {
	Header      seam.Header
	HeaderValid bool
	// Events counts the committed events read; NextSeq is the seq an
	// append would continue at (they differ where records were lost).
	Events  int64
	NextSeq int64
	// OpenTurn is the open tail turn, nil when there is none.
	OpenTurn *inspect.OpenTurn
	// Torn is the torn tail, nil when there is none.
	Torn *TornTail
	// Uncommitted is the uncommitted tail, nil when there is none.
	Uncommitted *UncommittedTail
	findings    []checkFinding
}

// UncommittedTail is the complete records after the committed log that no
// turn/end commits.
type UncommittedTail struct {
	Pos seam.Pos
	// Offset is where a repair cuts: the start of the first uncommitted
	// record's line, or of the zstd frame that holds it.
	Offset int64
	// Rewrite counts the committed records before it in that frame,
	// which a repair writes back as a frame of their own.
	Rewrite int
	Records int64
	// NotChecked says its first record is over the reader's record limit
	// (seam.ErrLimit): it was not checked, and a repair, which reads it,
	// cannot either.
	NotChecked bool
}

// NewLogCheck returns a LogCheck ready for a log's records.
func NewLogCheck() *LogCheck {
	c := &LogCheck{}
	c.st.lastSeq, c.st.frame = -1, -2
	c.st.open = *inspect.NewOpenTurnTracker(0)
	return c
}

var _ seam.LogVisitor = (*LogCheck)(nil)

// Header implements seam.LogVisitor.
func (c *LogCheck) Header(h seam.Header, valid bool) {
	c.hdr, c.hdrOK, c.ver, c.inBody = h, valid, h.Version, true
	c.st.open = *inspect.NewOpenTurnTracker(h.Version)
}

// add records a finding made by the rules and returns its index (-1 past
// the cap).
func (c *LogCheck) add(class seam.FindingClass, code string, p seam.Pos, format string, args ...any) int {
	c.order++
	if len(c.found) >= maxFindings {
		c.st.dropped++
		return -1
	}
	c.found = append(c.found, checkFinding{Finding: seam.Finding{Class: class, Code: code, Pos: p,
		Message: fmt.Sprintf(format, args...)}, order: c.order, body: c.inBody, events: c.st.events, bytes: p.Offset})
	c.st.nfound = len(c.found)
	return len(c.found) - 1
}

// Finding implements seam.LogVisitor. Damage in the body (a frame that
// fails its check) means records may be lost there: the next record sets
// the seq, and the bracketing checks resume at the next turn. An
// irregularity (a frame without a checksum) loses nothing, so the records
// around it are still held to every rule.
func (c *LogCheck) Finding(f seam.Finding) {
	c.order++
	if c.inBody && f.Class == seam.ClassDamage {
		c.st.resync, c.st.brk.off = true, true
	}
	if len(c.phys) >= maxFindings {
		c.st.dropped++
		return
	}
	c.phys = append(c.phys, checkFinding{Finding: f, order: c.order, body: c.inBody, events: c.st.events, bytes: f.Pos.Offset})
}

// frameRecord counts the records of p's frame.
func (c *LogCheck) frameRecord(p seam.Pos) {
	if p.Frame != c.st.frame || p.Frame < 0 {
		c.st.frame, c.st.frameRecs = p.Frame, 0
	}
	c.st.frameRecs++
}

// Record implements seam.LogVisitor.
func (c *LogCheck) Record(r *seam.Record, p seam.Pos) {
	c.path = p.Path
	st := &c.st
	first := r.FirstSeq()
	p.Seq = first
	if st.resync {
		st.next, st.resync = first, false
	}
	if first != st.next {
		code, msg := "seq-gap", fmt.Sprintf("seq gap: %d → %d (seq %d is missing)", st.next-1, first, st.next)
		if first > st.next+1 {
			msg = fmt.Sprintf("seq gap: %d → %d (seqs %d–%d are missing)", st.next-1, first, st.next, first-1)
		}
		if first < st.next {
			code, msg = "seq-overlap", fmt.Sprintf("seq overlap: %d → %d (seq %d again)", st.next-1, first, first)
		}
		c.bad(p, code, msg, r.Packed == nil && r.Event.Type == typeTurnEnd, false)
		st.next = r.NextSeq()
		return
	}
	c.frameRecord(p)
	st.next = r.NextSeq()
	if pr := r.Packed; pr != nil {
		// A packed row is a run of assistant/chunk events, which no rule
		// here interprets: account for them without expanding it.
		c.packed(pr, p)
		c.salvaged(first, r.NextSeq()-first)
		return
	}
	e := &r.Event
	if err := seam.CheckVocabulary(e, c.ver); err != nil {
		c.unknown(e, p)
		c.salv.stopped = true
	}
	ruled := c.order
	if err := seam.CheckRecord(r, c.ver); err != nil {
		// What append refuses (the same rules): dsh reads the record,
		// but not as its text says, or its writer never writes it so.
		c.add(seam.ClassIrregular, "record-rule", p, "%v", err)
	}
	st.marker.Observe(e)
	if e.Type == typeTurnStart {
		st.turnStart = e.Seq
	}
	inspect.ReadFacts(e, &c.facts)
	c.semantic(e, p, &c.facts)
	st.open.ObserveFacts(e, &c.facts)
	st.events++
	st.lastSeq = e.Seq
	if c.order != ruled {
		// A salvage re-appends only what an append would take: the
		// records of a torn frame up to the first that breaks a rule
		// (a second turn/end for a turn that ended, say).
		c.salv.stopped = true
	}
	c.salvaged(first, 1)
	if e.Type == typeTurnEnd && st.spec != nil {
		c.commit(p)
	}
}

// salvaged counts a record of n events from seq first toward the salvage
// of a torn unit.
func (c *LogCheck) salvaged(first, n int64) {
	if c.unit == nil || c.salv.stopped {
		return
	}
	if c.salv.records == 0 {
		c.salv.from = first
	}
	c.salv.records++
	c.salv.events += n
}

// packed accounts for the events of a packed row (v0/v1, where
// assistant/chunk is known).
func (c *LogCheck) packed(p *seam.PackedRow, pos seam.Pos) {
	st := &c.st
	n := int64(len(p.Parts))
	t := p.Time0
	for _, dt := range p.DT {
		t += dt
	}
	last := seam.Event{Type: "assistant/chunk", Seq: p.Seq0 + n - 1, Time: t}
	if err := seam.CheckVocabulary(&last, c.ver); err != nil {
		c.unknown(&last, pos)
		c.salv.stopped = true
	}
	c.facts = inspect.TurnFacts{Calls: c.facts.Calls[:0]}
	st.open.ObserveFacts(&last, &c.facts)
	st.events += n
	st.lastSeq = last.Seq
}

// unknown reports an event type the version does not know and that is not
// ignorable: once per type, counted.
func (c *LogCheck) unknown(e *seam.Event, p seam.Pos) {
	if c.unkns == nil {
		c.unkns = map[string]*unknownType{}
	}
	if u := c.unkns[e.Type]; u != nil && u.idx >= 0 && u.idx < len(c.found) &&
		strings.HasPrefix(c.found[u.idx].Message, fmt.Sprintf("event type %q", e.Type)) {
		u.count++
		return
	}
	if len(c.unkns) >= maxUnknownTypes {
		return
	}
	idx := c.add(seam.ClassDamage, "unknown-type", p,
		"event type %q is unknown to format v%d and not marked ignorable: dsh refuses the log (written by a newer dsh or a plugin)", e.Type, c.ver)
	c.unkns[e.Type] = &unknownType{idx: idx, count: 1, first: e.Seq}
}

// BadRecord implements seam.LogVisitor. A record the backend did not
// check (a seam.NotCheckedError) is not known to be sound, so it is held to
// the commit rule as a bad record: a turn/end after it makes it an error.
func (c *LogCheck) BadRecord(p seam.Pos, cause error, turnEnd bool) {
	c.path = p.Path
	var nc *seam.NotCheckedError
	if errors.As(cause, &nc) {
		c.bad(p, "record-too-large", nc.Why+", so it was not checked", turnEnd, nc.OverLimit)
		return
	}
	c.bad(p, recordCode(cause), causeText(cause), turnEnd, false)
}

// BadRecords takes n records, from p on, that do not decode and are not
// turn/ends, as n calls of BadRecord would, when they follow at least
// maxFindings such records of the same unit passed one by one (a
// backend's walk counts the rest of a run of junk lines so; verify's JSONL
// walk passes 1024): the first of those started the uncommitted-tail
// candidate, and the findings are at their cap, so each would only be
// counted. Otherwise the records are counted without findings of their
// own.
func (c *LogCheck) BadRecords(p seam.Pos, n int64) {
	c.path = p.Path
	st := &c.st
	c.salv.stopped = true
	c.order += int(n)
	st.dropped += int(n)
	if st.spec != nil {
		sp := *st.spec // copy on write, as in bad
		sp.bad = slices.Clip(sp.bad)
		sp.records += n
		st.spec = &sp
	}
	st.resync, st.brk.off = true, true
	if p.Frame != st.frame || p.Frame < 0 {
		st.frame, st.frameRecs = p.Frame, 0
	}
	if p.Frame < 0 {
		st.frameRecs = 1
	} else {
		st.frameRecs += int(n)
	}
}

// bad handles a record that does not continue the log; overLimit says it
// is over the reader's record limit.
func (c *LogCheck) bad(p seam.Pos, code, msg string, turnEnd, overLimit bool) {
	st := &c.st
	if turnEnd && st.spec != nil {
		c.commit(p)
	}
	c.salv.stopped = true
	if st.spec != nil {
		// Copy on write: a checkpoint may share it.
		sp := *st.spec
		sp.bad = slices.Clip(sp.bad)
		st.spec = &sp
	} else {
		at := st.clone()
		sp := &speculation{at: at, pos: p, code: code, cause: msg, order: c.order + 1, bytes: p.Offset, overLimit: overLimit}
		if p.Frame >= 0 && p.Frame == st.frame {
			sp.rewrite = st.frameRecs
		}
		st.spec = sp
	}
	if p.Seq < 0 {
		p.Seq = -1
	}
	idx := c.add(seam.ClassDamage, code, p, "%s", msg)
	if sp := st.spec; idx >= 0 && len(sp.bad) < maxFindings {
		sp.bad = append(sp.bad, idx)
	}
	st.spec.records++
	st.resync, st.brk.off = true, true
	c.frameRecord(p)
}

// commit makes the uncommitted-tail candidate committed data: a turn/end
// at p follows its bad records.
func (c *LogCheck) commit(p seam.Pos) {
	for _, i := range c.st.spec.bad {
		f := &c.found[i]
		switch {
		case strings.Contains(f.Message, committedNote):
		case f.Code == "record-too-large":
			f.Message += fmt.Sprintf("; %s (line %d), so this record was committed: verify cannot tell whether dsh accepts the log", committedNote, p.Line)
		default:
			f.Message += fmt.Sprintf("; %s (line %d), so this record was committed: damaged committed data, which dsh refuses", committedNote, p.Line)
		}
	}
	c.st.spec = nil
}

const committedNote = "a turn/end follows"

// BeginUnit implements seam.LogVisitor.
func (c *LogCheck) BeginUnit(p seam.Pos) {
	c.unit = &unitMark{st: c.st.clone(), nfound: len(c.found), nphys: len(c.phys), specBefore: c.st.spec != nil}
	c.salv = salvageCount{from: -1, stopped: c.st.spec != nil}
}

// EndUnit implements seam.LogVisitor.
func (c *LogCheck) EndUnit(end seam.UnitEnd) {
	u := c.unit
	c.unit = nil
	if u == nil || end == seam.UnitComplete {
		return
	}
	c.st = u.st
	c.found, c.phys = c.found[:u.nfound], c.phys[:u.nphys]
	if end == seam.UnitTorn {
		c.torn = &TornTail{Salvage: c.salv.events, SalvageRecords: c.salv.records, SalvageFrom: c.salv.from}
		if c.salv.events == 0 {
			c.torn.SalvageFrom = -1
		}
	}
}

// TornTail implements seam.LogVisitor.
func (c *LogCheck) TornTail(p seam.Pos, size int64) {
	t := c.torn
	if t == nil {
		t = &TornTail{SalvageFrom: -1}
	}
	t.Pos, t.Size = p, size
	c.torn = t
	c.order++
}

// Result ends the check: an uncommitted-tail candidate that no turn/end
// committed becomes the uncommitted tail, and the rules over the whole log
// (seed marker, open turn) are applied to the committed events.
func (c *LogCheck) Result() CheckResult {
	st := &c.st
	var unc *UncommittedTail
	if sp := st.spec; sp != nil {
		c.st = sp.at
		c.found = c.found[:sp.at.nfound]
		notChecked := sp.code == "record-too-large"
		unc = &UncommittedTail{Pos: sp.pos, Offset: sp.bytes, Rewrite: sp.rewrite, Records: sp.records, NotChecked: sp.overLimit}
		how := "does not continue the log"
		if notChecked {
			how = "is not known to continue the log"
		}
		msg := fmt.Sprintf("uncommitted tail from here on: no turn/end follows, so dsh never committed it; its first record %s: %s", how, sp.cause)
		if sp.records > 1 {
			msg += fmt.Sprintf(" (%s in it)", count64(sp.records, "invalid record"))
		}
		if sp.rewrite > 0 {
			msg += fmt.Sprintf("; a repair writes the %s before it in its frame back as a frame of their own", count64(int64(sp.rewrite), "committed record"))
		}
		c.found = append(c.found, checkFinding{Finding: seam.Finding{Class: seam.ClassTail, Code: "uncommitted-tail", Pos: sp.pos, Message: msg},
			order: sp.order, body: true, events: sp.at.events, bytes: sp.bytes, remedy: remedyIf(sp.overLimit, RemedyRecordLimit)})
	}
	st = &c.st
	if t := c.torn; t != nil {
		msg := fmt.Sprintf("torn final line: %d bytes an interrupted append left, which readers ignore", t.Size)
		switch {
		case t.Pos.Frame >= 0:
			msg = fmt.Sprintf("torn final frame: %d bytes an interrupted append left, which readers ignore", t.Size)
		case t.Pos.Line < 0 && t.Pos.Offset < 0:
			// A database row, located by its seq: appends are
			// transactions, so it was written damaged, not cut short.
			msg = fmt.Sprintf("torn final row: %d bytes that do not decode, which readers ignore", t.Size)
		}
		switch {
		case t.Salvage > 0:
			span := fmt.Sprintf("seq %d–%d", t.SalvageFrom, t.SalvageFrom+t.Salvage-1)
			if t.Salvage != t.SalvageRecords {
				span = count64(t.Salvage, "event") + ", " + span
			}
			msg += fmt.Sprintf("; it holds %s (%s) that dsh 0.1.0 salvaged",
				count64(t.SalvageRecords, "complete record"), span)
		case t.Pos.Frame >= 0:
			msg += "; it holds no complete record that continues the log"
		}
		c.found = append(c.found, checkFinding{Finding: seam.Finding{Class: seam.ClassTail, Code: "torn-tail", Pos: t.Pos, Message: msg},
			order: c.order + 1, body: true, events: st.events, bytes: t.Pos.Offset, remedy: remedyIf(t.Salvage > 0, RemedySalvage)})
	}
	for _, u := range c.unkns {
		if u.idx >= 0 && u.idx < len(c.found) && u.count > 1 && strings.HasPrefix(c.found[u.idx].Message, "event type ") {
			c.found[u.idx].Message += fmt.Sprintf(" (%s, the first at seq %d)", count64(u.count, "event"), u.first)
		}
	}
	if c.hdrOK {
		if _, err := st.marker.Result(&c.hdr); err != nil {
			c.order++
			c.found = append(c.found, checkFinding{Finding: seam.Finding{Class: seam.ClassDamage, Code: "seed-marker",
				Pos: seam.Pos{Path: c.path, Offset: -1, Frame: -1, Line: 1, Seq: -1}, Message: causeText(err)}, order: c.order, events: st.events, bytes: -1})
		}
	}
	ot := st.open.OpenTurn()
	if st.brk.off {
		ot = nil // damage since the last turn/start: the tail turn is not known
	}
	if ot != nil {
		c.order++
		c.found = append(c.found, checkFinding{Finding: seam.Finding{Class: seam.ClassNote, Code: "open-turn",
			Pos: seam.Pos{Path: c.path, Offset: -1, Frame: -1, Line: -1, Seq: st.turnStart}, Message: openTurnText(ot)}, order: c.order, body: true, events: st.events, bytes: -1, remedy: RemedyCloseTurn})
	}
	if n := st.dropped; n > 0 {
		c.order++
		c.found = append(c.found, checkFinding{Finding: seam.Finding{Class: seam.ClassNote, Code: "more-findings", Pos: seam.NoPos,
			Message: fmt.Sprintf("%s not listed (verify keeps %d per log)", count64(int64(n), "more finding"), maxFindings)}, order: c.order, events: st.events, bytes: -1})
	}
	all := append(slices.Clone(c.phys), c.found...)
	slices.SortStableFunc(all, func(a, b checkFinding) int { return a.order - b.order })
	return CheckResult{Header: c.hdr, HeaderValid: c.hdrOK, Events: st.events, NextSeq: st.next, OpenTurn: ot,
		Torn: c.torn, Uncommitted: unc, findings: all}
}

// Findings returns the findings, in storage order.
func (r *CheckResult) Findings() []seam.Finding {
	out := make([]seam.Finding, len(r.findings))
	for i, f := range r.findings {
		out[i] = f.Finding
	}
	return out
}

func openTurnText(ot *inspect.OpenTurn) string {
	var parts []string
	if n := len(ot.PendingCalls); n > 0 {
		parts = append(parts, count64(int64(n), "tool call")+" without a result")
	}
	if ot.StepOpen {
		parts = append(parts, fmt.Sprintf("step %d open", ot.Step))
	}
	s := fmt.Sprintf("turn %d is open", ot.Turn)
	if len(parts) > 0 {
		s += " (" + strings.Join(parts, ", ") + ")"
	}
	return s + ": dsh will close it on resume"
}

// remedyOf is what a user can do about f.
func remedyOf(f *checkFinding) Remedy {
	switch {
	case f.remedy != "":
		return f.remedy
	case f.Code == "record-too-large":
		return RemedyRecordLimit
	case f.Code == "frame-too-large":
		return RemedyFrameLimit
	}
	return ""
}

// remedyIf is r when cond holds, else none.
func remedyIf(cond bool, r Remedy) Remedy {
	if cond {
		return r
	}
	return ""
}

// semantic applies the bracketing and pairing rules to one committed event.
func (c *LogCheck) semantic(e *seam.Event, p seam.Pos, f *inspect.TurnFacts) {
	b := &c.st.brk
	if b.off {
		if e.Type != typeTurnStart {
			return
		}
		*b = bracket{calls: b.calls[:0]} // resume at a turn boundary
	}
	irregular := func(code, format string, args ...any) {
		c.add(seam.ClassIrregular, code, p, format, args...)
	}
	turn, hasTurn := f.Turn, f.HasTurn
	switch e.Type {
	case typeTurnStart:
		if b.turnOpen {
			irregular("turn-bracketing", "turn/start%s while turn %d (from seq %d) is open: it has no turn/end", turnOf(turn, hasTurn), b.turn, b.turnSeq)
		}
		*b = bracket{turnOpen: true, turn: turn, hasTurn: hasTurn, turnSeq: e.Seq, calls: b.calls[:0]}
	case typeTurnEnd:
		switch {
		case !b.turnOpen:
			irregular("turn-bracketing", "turn/end%s without a turn/start", turnOf(turn, hasTurn))
		case hasTurn && b.hasTurn && turn != b.turn:
			irregular("turn-bracketing", "turn/end of turn %d closes turn %d", turn, b.turn)
		}
		if b.stepOpen {
			irregular("step-bracketing", "turn/end while step %d is open: it has no step/end", b.step)
		}
		*b = bracket{turnSeq: b.turnSeq, calls: b.calls[:0]}
	case typeStepStart:
		step, hasStep := f.Step, f.HasStep
		switch {
		case !b.turnOpen:
			irregular("step-bracketing", "step/start outside any turn")
		case hasTurn && b.hasTurn && turn != b.turn:
			irregular("step-bracketing", "step/start of turn %d inside turn %d", turn, b.turn)
		}
		if b.stepOpen {
			irregular("step-bracketing", "step/start of step %d while step %d is open: it has no step/end", step, b.step)
		}
		b.stepOpen, b.step, b.hasStep = true, step, hasStep
	case typeStepEnd:
		step, hasStep := f.Step, f.HasStep
		switch {
		case !b.stepOpen:
			irregular("step-bracketing", "step/end of step %d without a step/start", step)
		case hasStep && b.hasStep && step != b.step:
			irregular("step-bracketing", "step/end of step %d closes step %d", step, b.step)
		}
		b.stepOpen = false
	case typeAssistantMessage, typeToolCall, typeToolResult:
		if !b.turnOpen {
			irregular("turn-bracketing", "%s outside any turn", e.Type)
			return
		}
		if hasTurn && b.hasTurn && turn != b.turn {
			irregular("turn-bracketing", "%s of turn %d inside turn %d", e.Type, turn, b.turn)
		}
		c.pairing(e, f, irregular)
	}
}

func turnOf(turn int64, ok bool) string {
	if !ok {
		return ""
	}
	return fmt.Sprintf(" of turn %d", turn)
}

// pairing follows the tool calls of the open turn: the calls an
// assistant/message requests, the tool/call that starts one, and the
// tool/result that settles it.
func (c *LogCheck) pairing(e *seam.Event, f *inspect.TurnFacts, irregular func(code, format string, args ...any)) {
	b := &c.st.brk
	if b.overflow || f.Bad {
		return
	}
	find := func(id string) *callState {
		for i := range b.calls {
			if b.calls[i].id == id {
				return &b.calls[i]
			}
		}
		if len(b.calls) >= maxTurnCalls {
			b.overflow = true
			return nil
		}
		b.calls = append(b.calls, callState{id: id})
		return &b.calls[len(b.calls)-1]
	}
	switch e.Type {
	case typeAssistantMessage:
		for _, call := range f.Calls {
			if cs := find(call.ID); cs != nil {
				cs.requested = true
			}
		}
	case typeToolCall:
		if f.CallID == "" {
			return
		}
		if cs := find(f.CallID); cs != nil {
			if cs.called {
				irregular("tool-pairing", "second tool/call for call %q", f.CallID)
			}
			cs.called = true
		}
	case typeToolResult:
		if f.CallID == "" {
			return
		}
		cs := find(f.CallID)
		switch {
		case cs == nil:
			return
		case cs.settled:
			irregular("tool-pairing", "second tool/result for call %q", f.CallID)
		case !cs.requested && !cs.called:
			irregular("tool-pairing", "tool/result for call %q, which no assistant/message or tool/call of turn %d made", f.CallID, b.turn)
		}
		cs.settled = true
	}
}

// recordCode names the rule a record broke, from the cause seam's decoder
// gave.
func recordCode(err error) string {
	switch {
	case errors.Is(err, seam.ErrRecordSyntax):
		return "record-json"
	case errors.Is(err, seam.ErrPackedRow):
		return "packed-row"
	case errors.Is(err, seam.ErrSourceEventSeqs):
		return "source-event-seqs"
	case errors.Is(err, seam.ErrSurfaceOp):
		return "surface-op"
	}
	return "envelope"
}

// causeText is the cause of a seam error without its kind, which the
// finding's class restates.
func causeText(err error) string {
	var se *seam.Error
	if errors.As(err, &se) && se.Err != nil {
		return se.Err.Error()
	}
	return err.Error()
}

func count64(n int64, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
