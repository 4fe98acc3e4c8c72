package reconcile

import (
	"fmt"
	"strconv"
	"strings"
)

// Roles of live rows and chunks.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
	RoleSystem    = "system"
)

// Agent statuses.
const (
	StatusIdle    = "idle"
	StatusRunning = "running"
	StatusError   = "error"
)

const (
	queuedPrefix    = "queued-"
	errorRowPrefix  = "error-"
	continuationSep = "\n---\n"
)

// Part is one chunk of a live row. Src is the index of the record that
// produced it; the checker follows content by it, never by the row's tags.
type Part struct {
	Type string `json:"type"`
	Text string `json:"text"`
	Src  int    `json:"-"`
}

// Message is a live row.
type Message struct {
	ID        string `json:"id"`
	Role      string `json:"role"`
	Parts     []Part `json:"chunks"`
	Streaming bool   `json:"isStreaming,omitempty"`
	TurnID    string `json:"turnId,omitempty"`
}

// text is what a user row says: its text parts joined.
func (m Message) text() string {
	var sb strings.Builder
	for _, p := range m.Parts {
		if p.Type == "text" {
			sb.WriteString(p.Text)
		}
	}
	return sb.String()
}

func (m Message) clone() Message {
	m.Parts = append([]Part(nil), m.Parts...)
	return m
}

// Queued is an entry of queuedMessages.
type Queued struct {
	ID       string `json:"id"`
	Message  string `json:"message"`
	ServerID string `json:"serverId,omitempty"`
}

// State is the client state of one tab that the invariants look at.
type State struct {
	C          []Chunk   `json:"chunks"`
	L          []Message `json:"live"`
	Q          []Queued  `json:"queue"`
	LT         string    `json:"liveTurnId,omitempty"`
	CA         string    `json:"currentAssistantId,omitempty"`
	Status     string    `json:"agentStatus"`
	ScrolledUp bool      `json:"scrolledUp,omitempty"`
	Pending    *string   `json:"pendingReconcile,omitempty"`
}

// Clone returns a deep copy of s.
func (s *State) Clone() State {
	c := *s
	c.C = append([]Chunk(nil), s.C...)
	c.Q = append([]Queued(nil), s.Q...)
	c.L = make([]Message, len(s.L))
	for i, m := range s.L {
		c.L[i] = m.clone()
	}
	if s.Pending != nil {
		p := *s.Pending
		c.Pending = &p
	}
	return c
}

type fetchMode uint8

const (
	modeReconcile fetchMode = iota // turn-sealed, or a deferred one run on scroll-down
	modeResync                     // statuses reload of a tab the server says is idle
)

func (m fetchMode) String() string {
	if m == modeResync {
		return "resync"
	}
	return "reconcile"
}

// fetchResult is a chunk response the client applies.
type fetchResult struct {
	req  int
	turn string // the reconciled turn; for a resync, LT when it was issued
	mode fetchMode
	rows []Chunk
}

type request struct {
	fetchResult     // rows: the backend model's rows when it was issued
	answerAt    int // record index of the fetch record that answers it; -1: none
}

// reqKey identifies a request across two replays of one trace, whose
// request numbers differ when deferred reconciles collapse.
type reqKey struct {
	turn string
	mode fetchMode
}

func (f fetchResult) key() reqKey { return reqKey{f.turn, f.mode} }

// applied is one quiescent point: a fetch result applied to the state.
type applied struct {
	fetchResult
	before, after State
}

// Machine is the client state machine of one tab, driven record by record.
type Machine struct {
	pol     Policy
	tab     string
	S       State
	bk      book
	backend *Backend

	inflight    []*request
	nextReq     int
	lastApplied int
	nextRow     int
	alias       map[string]string // server message id -> client id

	// route returns the index of the fetch record that answers request r,
	// or -1 when r resolves right after the record that issued it.
	route func(r *request) int
	// answered maps each fetch record that resolved a request to its key.
	answered map[int]reqKey

	index    int // index of the record being applied
	out      []applied
	warnings []string
}

// newMachine returns a machine for tab in the state of a newly created tab.
func newMachine(pol Policy, tab string, be *Backend, route func(*request) int) *Machine {
	m := &Machine{pol: pol, tab: tab, backend: be, route: route, alias: map[string]string{}, answered: map[int]reqKey{}}
	m.reset()
	return m
}

func (m *Machine) reset() {
	m.S = State{Status: StatusRunning}
	m.bk = newBook(m.pol.bugs)
}

func (m *Machine) warnf(format string, args ...any) {
	m.warnings = append(m.warnings, fmt.Sprintf("record %d: ", m.index)+fmt.Sprintf(format, args...))
}

// apply runs one record and returns the fetch results it applied.
func (m *Machine) apply(i int, rec Record) []applied {
	m.index, m.out = i, m.out[:0]
	switch rec.Kind {
	case KindWS:
		m.frame(rec.Ev)
	case KindSend:
		m.send(rec.ID, rec.Text)
	case KindHTTP:
		m.http(rec)
	case KindCancel:
		m.cancel(rec.ID)
	case KindScroll:
		m.scroll(rec.Up)
	case KindFetch:
		m.fetch(rec)
	default:
		m.warnf("unknown record kind %q; skipped", rec.Kind)
	}
	return m.out
}

// flush runs a deferred reconcile and resolves every request still in flight
// from its backend snapshot: the end-of-trace quiescent point.
func (m *Machine) flush(end int) []applied {
	m.index, m.out = end, m.out[:0]
	m.route = func(*request) int { return -1 }
	if m.S.Pending != nil {
		t := *m.S.Pending
		m.S.Pending, m.S.ScrolledUp = nil, false
		m.reconcile(t)
	}
	for len(m.inflight) > 0 {
		r := m.inflight[0]
		m.resolve(r, r.rows)
	}
	return m.out
}

// local maps a server message id to the client's id for it.
func (m *Machine) local(id string) string {
	if c, ok := m.alias[id]; ok {
		return c
	}
	return id
}

func (m *Machine) find(id string) int {
	if id == "" {
		return -1
	}
	for i := range m.S.L {
		if m.S.L[i].ID == id {
			return i
		}
	}
	return -1
}

// findMsgRow finds the row of queued message id. The shipped client only
// knows rows named queued-<id>; membership also finds a plain row whose send
// the server queued.
func (m *Machine) findMsgRow(id string) int {
	if i := m.find(queuedPrefix + id); i >= 0 {
		return i
	}
	if m.pol.membership {
		if i := m.find(id); i >= 0 && m.S.L[i].Role == RoleUser {
			return i
		}
	}
	return -1
}

func (m *Machine) findQ(id string) int {
	for i, q := range m.S.Q {
		if q.ID == id || (q.ServerID != "" && q.ServerID == id) {
			return i
		}
	}
	return -1
}

func (m *Machine) removeQ(id string) (Queued, bool) {
	i := m.findQ(id)
	if i < 0 {
		return Queued{}, false
	}
	q := m.S.Q[i]
	m.S.Q = append(m.S.Q[:i:i], m.S.Q[i+1:]...)
	return q, true
}

func (m *Machine) removeRow(i int) Message {
	r := m.S.L[i]
	m.S.L = append(m.S.L[:i:i], m.S.L[i+1:]...)
	return r
}

func (m *Machine) newRowID(prefix string) string {
	m.nextRow++
	return prefix + strconv.Itoa(m.nextRow)
}

func (m *Machine) userRow(id, text string) Message {
	return Message{ID: id, Role: RoleUser, Parts: []Part{{Type: "text", Text: text, Src: m.index}}}
}

func (m *Machine) setStatus(s string) {
	m.S.Status = s
	if s == StatusIdle || s == StatusError {
		for i := range m.S.L {
			m.S.L[i].Streaming = false
		}
		m.S.CA = ""
	}
}

func (m *Machine) stopCA() {
	if i := m.find(m.S.CA); i >= 0 {
		m.S.L[i].Streaming = false
	}
	m.S.CA = ""
}

// appendToCA appends p to the current assistant row, creating it if needed.
func (m *Machine) appendToCA(p Part) {
	p.Src = m.index
	if i := m.find(m.S.CA); i >= 0 {
		m.S.L[i].Parts = append(m.S.L[i].Parts, p)
		return
	}
	id := m.newRowID("a")
	m.S.L = append(m.S.L, Message{ID: id, Role: RoleAssistant, Parts: []Part{p}, Streaming: true, TurnID: m.S.LT})
	m.S.CA = id
}

func (m *Machine) send(id, text string) {
	if id == "" {
		m.warnf("send without id; skipped")
		return
	}
	if m.S.Status != StatusRunning {
		m.S.L = append(m.S.L, m.userRow(id, text))
		m.bk.send(id, false)
		return
	}
	m.S.Q = append(m.S.Q, Queued{ID: id, Message: text})
	m.S.L = append(m.S.L, m.userRow(queuedPrefix+id, text))
	m.bk.send(id, true)
}

// unqueueRow rolls an optimistic queue back: out of Q, row renamed to id.
func (m *Machine) unqueueRow(id string) bool {
	if _, ok := m.removeQ(id); !ok {
		return false
	}
	if i := m.find(queuedPrefix + id); i >= 0 {
		m.S.L[i].ID = id
	}
	return true
}

func (m *Machine) http(rec Record) {
	id := rec.ID
	if rec.MessageID != "" && rec.MessageID != id {
		m.alias[rec.MessageID] = id
		if i := m.findQ(id); i >= 0 {
			m.S.Q[i].ServerID = rec.MessageID
		}
	}
	switch rec.Status {
	case "ok":
		if m.unqueueRow(id) {
			m.bk.httpOK(id)
		}
	case "queued":
		m.queuedAtServer(id)
	case "error":
		m.unqueueRow(id)
		if i := m.find(id); i >= 0 {
			m.S.L[i].TurnID = "" // the rollback leaves it untagged
		}
		m.S.L = append(m.S.L, Message{ID: errorRowPrefix + id, Role: RoleSystem,
			Parts: []Part{{Type: "error", Text: "send failed", Src: m.index}}})
		m.bk.failed(id)
	default:
		m.warnf("http status %q; skipped", rec.Status)
	}
}

// queuedAtServer records that the server queued message id. Membership
// also untags its plain row: a queued message is not the user row of the
// turn the backfill tagged it with.
func (m *Machine) queuedAtServer(id string) {
	if e, ok := m.bk.entries[id]; m.pol.membership && ok && e.kind != bkQueued {
		if i := m.find(id); i >= 0 && (e.kind != bkBound || e.guess) {
			m.S.L[i].TurnID = ""
		}
	}
	m.bk.serverQueued(id)
}

func (m *Machine) cancel(id string) {
	cid := m.local(id)
	if _, ok := m.removeQ(cid); !ok {
		return
	}
	if i := m.findMsgRow(cid); i >= 0 {
		m.removeRow(i)
	}
	m.bk.cancel(cid)
}

func (m *Machine) scroll(up bool) {
	m.S.ScrolledUp = up
	if up || m.S.Pending == nil {
		return
	}
	t := *m.S.Pending
	m.S.Pending = nil
	m.reconcile(t)
}

func (m *Machine) fetch(rec Record) {
	for _, r := range m.inflight {
		if r.answerAt != m.index {
			continue
		}
		m.answered[m.index] = r.key()
		switch {
		case rec.FetchErr:
			m.drop(r)
		case rec.HasRows:
			m.resolve(r, rec.Rows)
		default:
			m.resolve(r, r.rows)
		}
		return
	}
	m.warnf("fetch answers request %d, which is not in flight; skipped", rec.Req)
}

func (m *Machine) frame(ev *Event) {
	if ev.Type == "" {
		m.warnf("ws frame without type; skipped")
		return
	}
	if m.tab == "" && ev.TabID != "" {
		m.tab = ev.TabID
	}
	if ev.TabID != "" && ev.TabID != m.tab && ev.Type != "statuses" {
		return // another tab's frame
	}
	switch ev.Type {
	case "tab-created":
		m.reset()
	case "status":
		m.setStatus(ev.Status)
	case "turn-start":
		m.turnStart(ev.TurnID)
	case "text-delta":
		m.appendToCA(Part{Type: "text", Text: ev.Delta})
	case "reasoning-delta":
		m.appendToCA(Part{Type: "thinking", Text: ev.Delta})
	case "reasoning-end":
		// Ends the thinking block; no content of its own.
	case "tool-call":
		p := Part{Type: "tool_call"}
		if ev.ToolCall != nil {
			p.Text = ev.ToolCall.Name + " " + string(ev.ToolCall.Arguments)
		}
		m.appendToCA(p)
	case "tool-result":
		p := Part{Type: "tool_result"}
		if ev.ToolResult != nil {
			p.Text = rawText(ev.ToolResult.Result)
		}
		m.appendToCA(p)
	case "shell-output":
		m.appendToCA(Part{Type: "shell", Text: ev.Data})
	case "done":
		m.stopCA()
	case "error":
		m.appendToCA(Part{Type: "error", Text: rawText(ev.Error)})
		m.S.CA = ""
		m.setStatus(StatusError)
	case "notice", "model-changed":
		m.notice(ev)
	case "message-queued":
		m.messageQueued(m.local(ev.MessageID), ev.Message)
	case "message-consumed":
		m.consumed(ev)
	case "message-cancelled":
		m.cancel(ev.MessageID)
	case "turn-sealed":
		if _, seen := m.bk.sealed[ev.TurnID]; !seen {
			m.bk.sealed[ev.TurnID] = m.nextReq
		}
		m.reconcile(ev.TurnID)
	case "statuses":
		m.statuses(ev)
	default:
		m.warnf("unknown event type %q; skipped", ev.Type)
	}
}

func (m *Machine) notice(ev *Event) {
	text := ev.Message
	if text == "" {
		text = ev.Type
	}
	p := Part{Type: "system", Text: text, Src: m.index}
	if i := m.find(m.S.CA); i >= 0 {
		m.S.L[i].Parts = append(m.S.L[i].Parts, p)
		return
	}
	if n := len(m.S.L); n > 0 && m.S.L[n-1].Role == RoleSystem && !strings.HasPrefix(m.S.L[n-1].ID, errorRowPrefix) {
		m.S.L[n-1].Parts = append(m.S.L[n-1].Parts, p)
		return
	}
	m.S.L = append(m.S.L, Message{ID: m.newRowID("s"), Role: RoleSystem, Parts: []Part{p}})
}

// turnStart sets LT and backfills: walking L from the end up to the first
// non-user row, it tags the first user row that is not queued, if untagged.
func (m *Machine) turnStart(t string) {
	m.S.LT = t
	for j := len(m.S.L) - 1; j >= 0; j-- {
		r := &m.S.L[j]
		if r.Role != RoleUser {
			break
		}
		if m.pol.bugs&bugC != 0 {
			if r.TurnID == "" {
				r.TurnID = t
			}
			continue
		}
		if strings.HasPrefix(r.ID, queuedPrefix) {
			continue
		}
		if r.TurnID == "" {
			r.TurnID = t
		}
		break
	}
	m.bk.turnStart(t)
}

func (m *Machine) messageQueued(id, text string) {
	if id == "" {
		m.warnf("message-queued without messageId; skipped")
		return
	}
	if m.pol.membership && m.bk.cancelled[id] && m.pol.bugs&bugRequeueCancelled == 0 {
		return // a frame that crossed the user's cancel
	}
	m.queuedAtServer(id)
	if m.findQ(id) >= 0 {
		return
	}
	m.S.Q = append(m.S.Q, Queued{ID: id, Message: text})
	if m.find(queuedPrefix+id) < 0 && m.find(id) < 0 {
		m.S.L = append(m.S.L, m.userRow(queuedPrefix+id, text))
	}
}

func (m *Machine) consumed(ev *Event) {
	if ev.Reason == "continuation" {
		m.continuation(ev.MessageIDs)
		return
	}
	var moved []Message
	for _, id := range ev.MessageIDs {
		cid := m.local(id)
		m.removeQ(cid)
		m.bk.interrupt(cid, m.S.LT)
		i := m.findMsgRow(cid)
		if i < 0 {
			continue
		}
		r := m.removeRow(i)
		r.ID = cid
		if m.pol.bugs&bugD == 0 && m.S.LT != "" {
			r.TurnID = m.S.LT
		}
		moved = append(moved, r)
	}
	at := len(m.S.L)
	if i := m.find(m.S.CA); i >= 0 {
		at = i + 1
	}
	m.S.L = append(m.S.L[:at:at], append(moved, m.S.L[at:]...)...)
	m.stopCA()
}

// continuation replaces the consumed rows by one untagged user row holding
// their texts joined, at the first one's position.
func (m *Machine) continuation(ids []string) {
	var texts, cids []string
	pos := -1
	for _, id := range ids {
		cid := m.local(id)
		cids = append(cids, cid)
		q, inQ := m.removeQ(cid)
		if i := m.findMsgRow(cid); i >= 0 {
			if pos < 0 || i < pos {
				pos = i
			}
			texts = append(texts, m.removeRow(i).text())
		} else if inQ {
			texts = append(texts, q.Message)
		}
	}
	m.bk.continuation(cids)
	if pos < 0 || len(cids) == 0 {
		return
	}
	row := m.userRow(cids[0], strings.Join(texts, continuationSep))
	m.S.L = append(m.S.L[:pos:pos], append([]Message{row}, m.S.L[pos:]...)...)
}

func (m *Machine) statuses(ev *Event) {
	snap, ok := ev.Statuses[m.tab]
	if !ok {
		return
	}
	switch snap.Status {
	case StatusIdle, StatusError:
		wasRunning := m.S.Status == StatusRunning
		m.setStatus(snap.Status)
		if wasRunning {
			m.issue(m.S.LT, modeResync)
		}
	case StatusRunning:
		m.S.Status = StatusRunning
		if snap.CurrentTurnID != "" {
			m.S.LT = snap.CurrentTurnID
		}
		if snap.CurrentAssistantID == "" {
			return
		}
		m.S.CA = snap.CurrentAssistantID
		if m.find(m.S.CA) >= 0 || len(snap.CurrentChunks) == 0 {
			return
		}
		row := Message{ID: m.S.CA, Role: RoleAssistant, Streaming: true, TurnID: m.S.LT}
		for _, c := range snap.CurrentChunks {
			row.Parts = append(row.Parts, Part{Type: c.Type, Text: textOf(c.Data), Src: m.index})
		}
		m.S.L = append(m.S.L, row)
	default:
		m.warnf("statuses: status %q; skipped", snap.Status)
	}
}

// reconcile(t) is what turn-sealed triggers.
func (m *Machine) reconcile(t string) {
	if len(m.S.L) == 0 && m.S.LT == "" {
		return
	}
	if m.S.ScrolledUp {
		m.S.Pending = &t
		return
	}
	m.issue(t, modeReconcile)
}

func (m *Machine) issue(t string, mode fetchMode) {
	m.nextReq++
	r := &request{fetchResult: fetchResult{req: m.nextReq, turn: t, mode: mode, rows: m.backend.Rows()}}
	m.inflight = append(m.inflight, r)
	if r.answerAt = m.route(r); r.answerAt < 0 {
		m.resolve(r, r.rows)
	}
}

func (m *Machine) drop(r *request) {
	for i, x := range m.inflight {
		if x == r {
			m.inflight = append(m.inflight[:i:i], m.inflight[i+1:]...)
			return
		}
	}
}

func (m *Machine) resolve(r *request, rows []Chunk) {
	m.drop(r)
	if m.pol.membership && r.req < m.lastApplied {
		return // stale: a newer answer is applied already
	}
	if r.req > m.lastApplied {
		m.lastApplied = r.req
	}
	f := r.fetchResult
	f.rows = rows
	a := applied{fetchResult: f, before: m.S.Clone()}
	m.S = m.pol.applyTo(m.S, &m.bk, f)
	a.after = m.S.Clone()
	m.out = append(m.out, a)
}

// applyTo returns s with fetch result f applied: C = fetched rows, L = the
// rows the policy keeps, LT and CA kept only when a newer turn is preserved.
func (p Policy) applyTo(s State, bk *book, f fetchResult) State {
	kept, keepLTCA := p.keep(&s, bk, f)
	s.C = append([]Chunk(nil), f.rows...)
	s.L = kept
	if !keepLTCA {
		s.LT, s.CA = "", ""
	}
	return s
}

// msgID is the message id a user row stands for.
func msgID(rowID string) string {
	return strings.TrimPrefix(rowID, queuedPrefix)
}

// book is what the membership policy knows about each message from the
// events it saw: whether it is still waiting for the server, and which turn
// holds it once durable. Every policy keeps it; only membership reads it.
type book struct {
	bugs      bug // the policy's bugs; bugLateQueued lives in the book
	entries   map[string]bkEntry
	cancelled map[string]bool
	sealed    map[string]int // turns whose turn-sealed this client saw -> requests issued before it
	sends     int
	turns     []bkTurn
}

type bkKind uint8

const (
	bkAwaiting     bkKind = iota // a plain send whose turn has not started
	bkOptimistic                 // queued optimistically; the server's answer is unknown
	bkQueued                     // queued at the server
	bkBound                      // the user row of turn
	bkInterrupt                  // folded into turn's tool result
	bkContinuation               // consumed for the next turn, not started yet
	bkFailed                     // its POST failed
)

type bkEntry struct {
	kind        bkKind
	turn        string
	order       int  // send order, for binding the oldest waiting send
	turnsAtSend int  // turn-starts seen when it was sent
	guess       bool // bound as the oldest waiting send: the server may yet queue it
}

type bkTurn struct {
	id    string
	bound bool // a message of this client is its user row
}

func newBook(bugs bug) book {
	return book{bugs: bugs, entries: map[string]bkEntry{}, cancelled: map[string]bool{}, sealed: map[string]int{}}
}

func (b *book) send(id string, optimistic bool) {
	k := bkAwaiting
	if optimistic {
		k = bkOptimistic
	}
	b.sends++
	b.entries[id] = bkEntry{kind: k, order: b.sends, turnsAtSend: len(b.turns)}
}

// httpOK: an optimistic send the server answered ok started a turn: the first
// turn since the send that no message of ours holds, or the next one.
func (b *book) httpOK(id string) {
	e, ok := b.entries[id]
	if !ok || e.kind != bkOptimistic {
		return
	}
	e.kind = bkAwaiting
	for i := e.turnsAtSend; i < len(b.turns); i++ {
		if !b.turns[i].bound {
			b.turns[i].bound = true
			e.kind, e.turn = bkBound, b.turns[i].id
			break
		}
	}
	b.entries[id] = e
}

// unbind frees the turn e was bound to when e turns out to be queued or
// failed, and gives it to the oldest send that was waiting when it started.
func (b *book) unbind(e bkEntry) {
	if e.kind != bkBound {
		return
	}
	for k := range b.turns {
		if b.turns[k].id != e.turn {
			continue
		}
		b.turns[k].bound = false
		oldest := ""
		for id, x := range b.entries {
			if x.kind == bkAwaiting && x.turnsAtSend <= k && (oldest == "" || x.order < b.entries[oldest].order) {
				oldest = id
			}
		}
		if oldest != "" {
			x := b.entries[oldest]
			x.kind, x.turn, x.guess = bkBound, e.turn, true
			b.entries[oldest] = x
			b.turns[k].bound = true
		}
		return
	}
}

func (b *book) serverQueued(id string) {
	e, ok := b.entries[id]
	if !ok {
		b.entries[id] = bkEntry{kind: bkQueued}
		return
	}
	switch e.kind {
	case bkBound:
		if !e.guess && b.bugs&bugLateQueued == 0 {
			return // a late answer for a message already in its turn
		}
		fallthrough
	case bkAwaiting, bkOptimistic:
		b.unbind(e)
		e.kind, e.turn = bkQueued, ""
		b.entries[id] = e
	}
}

func (b *book) failed(id string) {
	e, ok := b.entries[id]
	if !ok {
		return
	}
	b.unbind(e)
	e.kind, e.turn = bkFailed, ""
	b.entries[id] = e
}

func (b *book) interrupt(id, turn string) {
	b.entries[id] = bkEntry{kind: bkInterrupt, turn: turn}
}

func (b *book) continuation(ids []string) {
	for _, id := range ids {
		b.entries[id] = bkEntry{kind: bkContinuation, turnsAtSend: len(b.turns)}
	}
}

func (b *book) cancel(id string) {
	delete(b.entries, id)
	b.cancelled[id] = true
}

// turnStart binds the turn's user row: a waiting continuation first, else the
// oldest plain send still waiting for its turn.
func (b *book) turnStart(t string) {
	turn := bkTurn{id: t}
	oldest := ""
	for id, e := range b.entries {
		switch e.kind {
		case bkContinuation:
			e.kind, e.turn, e.guess = bkBound, t, false
			b.entries[id] = e
			turn.bound = true
		case bkAwaiting:
			if oldest == "" || e.order < b.entries[oldest].order {
				oldest = id
			}
		}
	}
	if !turn.bound && oldest != "" {
		e := b.entries[oldest]
		e.kind, e.turn, e.guess = bkBound, t, true
		b.entries[oldest] = e
		turn.bound = true
	}
	b.turns = append(b.turns, turn)
}
