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
	// Name is what the row shows for the part where that is not Text: a
	// tool call's name, an error as the client prints it, a system
	// chunk's frame type.
	Name string `json:"-"`
}

// Message is a live row.
type Message struct {
	ID        string `json:"id"`
	Role      string `json:"role"`
	Parts     []Part `json:"chunks"`
	Streaming bool   `json:"isStreaming,omitempty"`
	TurnID    string `json:"turnId,omitempty"`

	// unknownTurn: membership made this row while a reconnect snapshot
	// had left the server's running turn unknown; it belongs to that turn.
	unknownTurn bool
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
	C          []Chunk   `json:"chunks"` // the fetched rows; never changed in place
	L          []Message `json:"live"`
	Q          []Queued  `json:"queue"`
	LT         string    `json:"liveTurnId,omitempty"`
	CA         string    `json:"currentAssistantId,omitempty"`
	Status     string    `json:"agentStatus"`
	ScrolledUp bool      `json:"scrolledUp,omitempty"`
	Pending    *string   `json:"pendingReconcile,omitempty"`

	rows *rowSet // C, indexed
}

// Clone returns a deep copy of s (C is shared: it never changes in place).
func (s *State) Clone() State {
	c := *s
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
	rows *rowSet
}

type request struct {
	fetchResult      // rows: the backend model's rows when it was issued
	answerAt    int  // record index of the fetch record that answers it; -1: none
	deferred    bool // issued by a reconcile deferred while scrolled up
}

// reqKey identifies a request across two replays of one trace, whose
// request numbers differ when deferred reconciles collapse.
type reqKey struct {
	turn string
	mode fetchMode
}

func (f fetchResult) key() reqKey { return reqKey{f.turn, f.mode} }

// applied is one quiescent point: a fetch result applied to the state.
// before and after share rows with the machine's state: they are read at
// once, and cloned only for a report.
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
	links       map[string]link   // client id -> the server id it was linked to by text, until the POST's answer

	// route returns the index of the fetch record that answers request r,
	// or -1 when r resolves right after the record that issued it, and
	// whether that record carries the answer (rows or an error) rather than
	// asking the backend model.
	route func(r *request) (at int, carried bool)
	// answered maps each fetch record that resolved a request to its key.
	answered map[int]reqKey

	// deferred: a reconcile was deferred while scrolled up; without one,
	// scroll records change nothing. deferredFailed: its fetch failed.
	deferred, deferredFailed bool

	// noBackend: only the trace's fetch records answer requests; one it
	// does not answer stays in flight (Options.NoBackend).
	noBackend bool
	// supplied, when set, is told of each answer the backend model gave:
	// the request, the rows, and the record it resolved after (-1: the
	// end of the trace), or the fetch record without rows it filled.
	supplied func(r *request, rows *rowSet, at int, filled bool)

	rowIdx, qIdx idIndex // where ids stand in S.L and S.Q; changed() after an edit
	// streamed: the parts the last assistant row streamed, which a new
	// one makes room for at once (rows of a session stream alike):
	// growing ~150 parts one chunk at a time copied them twice over.
	streamed int

	index    int // index of the record being applied
	out      []applied
	warnings []string
	where    func(int) string // names a record in warnings; nil: by index
}

// newMachine returns a machine for tab in the state of a newly created tab.
func newMachine(pol Policy, tab string, be *Backend, route func(*request) (int, bool)) *Machine {
	m := &Machine{pol: pol, tab: tab, backend: be, route: route, alias: map[string]string{}, links: map[string]link{}, answered: map[int]reqKey{}}
	m.reset()
	return m
}

func (m *Machine) reset() {
	m.changed()
	m.S = State{Status: StatusRunning}
	m.bk = newBook(m.pol.bugs)
}

func (m *Machine) warnf(format string, args ...any) {
	at := fmt.Sprintf("record %d", m.index)
	if m.where != nil {
		at = m.where(m.index)
	}
	m.warnings = append(m.warnings, at+": "+fmt.Sprintf(format, args...))
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
	m.route = func(*request) (int, bool) { return -1, false }
	if m.noBackend {
		for _, r := range m.inflight {
			m.warnf("request %d (%s of %s) is not answered in the trace, and the backend model is off", r.req, r.mode, r.turn)
		}
		m.inflight = nil
		return m.out
	}
	if m.S.Pending != nil {
		t := *m.S.Pending
		m.S.Pending, m.S.ScrolledUp = nil, false
		m.runDeferred(t)
	}
	for len(m.inflight) > 0 {
		r := m.inflight[0]
		if r.rows == nil {
			r.rows = m.backend.at(m.index)
		}
		if m.supplied != nil {
			m.supplied(r, r.rows, -1, false)
		}
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

func (m *Machine) removeQ(id string) (Queued, bool) {
	i := m.findQ(id)
	if i < 0 {
		return Queued{}, false
	}
	q := m.S.Q[i]
	m.S.Q = append(m.S.Q[:i:i], m.S.Q[i+1:]...)
	m.changed()
	return q, true
}

func (m *Machine) removeRow(i int) Message {
	r := m.S.L[i]
	m.S.L = append(m.S.L[:i:i], m.S.L[i+1:]...)
	m.changed()
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
		m.streamed = max(m.streamed, len(m.S.L[i].Parts))
		return
	}
	id := m.newRowID("a")
	parts := append(make([]Part, 0, min(m.streamed, maxPartsAhead)), p)
	m.streamed = 0
	row := Message{ID: id, Role: RoleAssistant, Parts: parts, Streaming: true, TurnID: m.S.LT}
	if m.serverTurns() {
		switch srv := &m.bk.server; {
		case srv.unknown:
			row.TurnID, row.unknownTurn = "", true
		case srv.cur != "":
			row.TurnID = srv.cur
		}
	}
	m.S.L = append(m.S.L, row)
	m.S.CA = id
}

// maxPartsAhead bounds the room a new assistant row takes for its parts.
const maxPartsAhead = 256

// serverTurns reports whether the policy places content and interrupts in
// the turn the server's frames say runs, rather than in LT (membership from
// fix 7 on).
func (m *Machine) serverTurns() bool {
	return m.pol.membership && m.pol.bugs&bugInterruptLT == 0
}

// turnChanged: the server's frames say another turn runs (ch), or that the
// turn a reconnect left unknown ended. Streaming goes on in a row of the new
// turn, and rows made while the turn was unknown join the turn it turns out
// to have been.
func (m *Machine) turnChanged(ch turnChange, wasUnknown bool, ev *Event) {
	if i := m.find(m.S.CA); i >= 0 {
		ca := &m.S.L[i]
		switch {
		case m.bk.server.unknown && !wasUnknown,
			ev.Type == "turn-sealed" && ca.TurnID == ev.TurnID && !ca.unknownTurn,
			ch.started != "" && (ca.TurnID != ch.started || ca.unknownTurn) && !(wasUnknown && ch.implicit):
			m.stopCA()
		}
	}
	if !wasUnknown || m.bk.server.unknown {
		return
	}
	for i := range m.S.L {
		if r := &m.S.L[i]; r.unknownTurn {
			r.unknownTurn = false
			if ev.Type != "turn-start" {
				r.TurnID = ch.started
			}
		}
	}
}

func (m *Machine) send(id, text string) {
	if id == "" {
		m.warnf("send without id; skipped")
		return
	}
	if m.S.Status != StatusRunning {
		m.S.L = append(m.S.L, m.userRow(id, text))
		m.bk.send(id, text, false)
		return
	}
	m.S.Q = append(m.S.Q, Queued{ID: id, Message: text})
	m.S.L = append(m.S.L, m.userRow(queuedPrefix+id, text))
	m.bk.send(id, text, true)
}

// unqueueRow rolls an optimistic queue back: out of Q, row renamed to id.
func (m *Machine) unqueueRow(id string) bool {
	if _, ok := m.removeQ(id); !ok {
		return false
	}
	if i := m.find(queuedPrefix + id); i >= 0 {
		m.S.L[i].ID = id
		m.changed()
	}
	return true
}

func (m *Machine) http(rec Record) {
	id := rec.ID
	if m.linking() {
		m.settleLink(id, rec)
	}
	m.bk.answered(id)
	// The shipped client does nothing with the server's id in the answer:
	// a message-queued frame for it adds a row of its own. Membership
	// maps one to the other (and from fix 8 on merges their rows).
	if rec.MessageID != "" && rec.MessageID != id && m.pol.membership {
		if m.linking() {
			m.merge(id, rec.MessageID)
		}
		m.alias[rec.MessageID] = id
		if i := m.findQ(id); i >= 0 {
			m.S.Q[i].ServerID = rec.MessageID
			m.changed()
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

// linking reports whether the policy links the server's id for a message to
// the plain send it stands for (membership from fix 8 on).
func (m *Machine) linking() bool {
	return m.pol.membership && m.pol.bugs&bugNoServerLink == 0
}

// link is a message-queued frame taken for this client's own send before
// the POST's answer says so.
type link struct {
	server string  // the server's id for the message
	text   string  // its text
	hadQ   bool    // the send was queued optimistically: its Q entry predates the link
	prev   bkEntry // the book's entry for the send before the link
}

// link takes the server's queued message id, which this client has not
// seen, for its own unanswered send c with the same text: the POST's answer
// would say so, but the frame may come first. The send's row stays; no
// second row is added for the server's id.
func (m *Machine) link(id, c, text string) {
	l := link{server: id, text: text, prev: m.bk.entries[c]}
	m.alias[id] = c
	if i := m.findQ(c); i >= 0 {
		l.hadQ = true
		m.S.Q[i].ServerID = id
		m.changed()
	} else {
		m.S.Q = append(m.S.Q, Queued{ID: c, Message: text, ServerID: id})
	}
	m.links[c] = l
	m.queuedAtServer(c)
}

// settleLink: the POST of c is answered. An answer that does not say the
// server queued it under the linked id undoes the link: the frame was
// another message with the same text, which gets its own row.
func (m *Machine) settleLink(c string, rec Record) {
	l, ok := m.links[c]
	if !ok {
		return
	}
	delete(m.links, c)
	if rec.Status == "queued" && (rec.MessageID == "" || rec.MessageID == l.server) {
		return
	}
	delete(m.alias, l.server)
	if i := m.findQ(c); i >= 0 {
		if l.hadQ {
			m.S.Q[i].ServerID = ""
		} else {
			m.S.Q = append(m.S.Q[:i:i], m.S.Q[i+1:]...)
		}
		m.changed()
	}
	m.bk.entries[c] = l.prev
	m.bk.waiting = append(m.bk.waiting, c) // awaiting again, maybe
	m.queuedAtServer(l.server)
	m.S.Q = append(m.S.Q, Queued{ID: l.server, Message: l.text})
	m.S.L = append(m.S.L, m.userRow(queuedPrefix+l.server, l.text))
}

// merge: the POST of c says the server queued it as id. A row and queue
// entry that a message-queued frame made for id before the answer are c's.
func (m *Machine) merge(c, id string) {
	own := m.find(c)
	if own < 0 {
		own = m.find(queuedPrefix + c)
	}
	other := m.find(queuedPrefix + id)
	if other < 0 {
		other = m.find(id)
	}
	if own < 0 || other < 0 || own == other {
		return
	}
	m.removeRow(other)
	if i := m.findQ(id); i >= 0 && m.S.Q[i].ID == id {
		if m.findQ(c) >= 0 {
			m.S.Q = append(m.S.Q[:i:i], m.S.Q[i+1:]...)
		} else {
			m.S.Q[i].ID, m.S.Q[i].ServerID = c, id
		}
		m.changed()
	}
	delete(m.bk.entries, id)
	m.queuedAtServer(c)
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
	m.runDeferred(t)
}

// runDeferred runs the reconcile of t that scrolling up deferred. Its
// request stands for every seal it collapsed.
func (m *Machine) runDeferred(t string) {
	n := m.nextReq
	m.reconcile(t)
	for _, r := range m.inflight {
		if r.req > n {
			r.deferred = true
		}
	}
}

func (m *Machine) fetch(rec Record) {
	for _, r := range m.inflight {
		if r.answerAt != m.index {
			continue
		}
		if m.answered != nil {
			m.answered[m.index] = r.key()
		}
		switch {
		case rec.FetchErr:
			m.drop(r)
			// The seals it stood for go unreconciled: the replay without
			// scroll events, which reconciled each, may end elsewhere.
			m.deferredFailed = m.deferredFailed || r.deferred
		case rec.HasRows:
			m.resolve(r, rec.rowSet())
		case m.noBackend:
			m.drop(r)
			m.warnf("fetch answers request %d without rows, and the backend model is off; skipped", rec.Req)
		default:
			if m.supplied != nil {
				m.supplied(r, r.rows, m.index, true)
			}
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
	wasUnknown := m.bk.server.unknown
	if ch := m.bk.frame(m.index, ev, m.tab); m.serverTurns() {
		m.turnChanged(ch, wasUnknown, ev)
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
			p.Text, p.Name = ev.ToolCall.Name+" "+string(ev.ToolCall.Arguments), ev.ToolCall.Name
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
		m.appendToCA(Part{Type: "error", Text: rawText(ev.Error), Name: jsString(ev.Error)})
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
		m.bk.seal(ev.TurnID, m.nextReq)
		m.reconcile(ev.TurnID)
	case "statuses":
		m.statuses(ev)
	default:
		if !knownFrame[ev.Type] {
			m.warnf("unknown event type %q; skipped", ev.Type)
		}
	}
}

func (m *Machine) notice(ev *Event) {
	text := ev.Message
	switch {
	case ev.Type == "model-changed" && ev.ModelID != "":
		text = "model changed to " + ev.ModelID
	case text == "":
		text = ev.Type
	}
	p := Part{Type: "system", Text: text, Src: m.index, Name: ev.Type}
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
	if m.findQ(id) < 0 && m.find(queuedPrefix+id) < 0 && m.find(id) < 0 && m.linking() {
		if c := m.bk.linkable(text); c != "" {
			m.link(id, c, text)
			return
		}
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
	// The shipped client tags consumed rows with LT; membership with the
	// turn the server's frames say it is running (none when a reconnect
	// left that unknown), since LT can be stale.
	tag := m.S.LT
	if m.pol.membership && m.pol.bugs&bugInterruptLT == 0 {
		tag = m.bk.server.cur
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
		if m.pol.bugs&bugD == 0 && tag != "" {
			r.TurnID = tag
		}
		moved = append(moved, r)
	}
	at := len(m.S.L)
	if i := m.find(m.S.CA); i >= 0 {
		at = i + 1
	}
	m.S.L = append(m.S.L[:at:at], append(moved, m.S.L[at:]...)...)
	m.changed()
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
	m.changed()
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
			row.Parts = append(row.Parts, Part{Type: c.Type, Text: c.shown(), Src: m.index})
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
		m.deferred = true
		return
	}
	m.issue(t, modeReconcile)
}

func (m *Machine) issue(t string, mode fetchMode) {
	m.nextReq++
	r := &request{fetchResult: fetchResult{req: m.nextReq, turn: t, mode: mode}}
	m.inflight = append(m.inflight, r)
	at, carried := m.route(r)
	r.answerAt = at
	if m.noBackend {
		if at <= m.index {
			// In flight until the end, where flush says so.
			r.answerAt = -1
		}
		return
	}
	if at < 0 || at <= m.index || !carried {
		// The backend model answers (a record that predates the
		// request never does): its rows as of now.
		r.rows = m.backend.at(m.index)
	}
	if at < 0 {
		if m.supplied != nil {
			m.supplied(r, r.rows, m.index, false)
		}
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

func (m *Machine) resolve(r *request, rows *rowSet) {
	m.drop(r)
	if m.pol.membership && r.req < m.lastApplied {
		return // stale: a newer answer is applied already
	}
	if r.req > m.lastApplied {
		m.lastApplied = r.req
	}
	f := r.fetchResult
	f.rows = rows
	a := applied{fetchResult: f, before: m.S}
	m.S = m.pol.applyTo(m.S, &m.bk, f)
	m.changed()
	a.after = m.S
	m.out = append(m.out, a)
}

// applyTo returns s with fetch result f applied: C = fetched rows, L = the
// rows the policy keeps, LT and CA kept only when a newer turn is preserved
// (membership also keeps CA while it streams a turn a reconnect hid).
func (p Policy) applyTo(s State, bk *book, f fetchResult) State {
	kept, keepLT, keepCA := p.keep(&s, bk, f)
	s.C, s.rows = f.rows.list, f.rows
	s.L = kept
	if !keepLT {
		s.LT = ""
	}
	if !keepCA {
		s.CA = ""
	}
	return s
}

// msgID is the message id a user row stands for.
func msgID(rowID string) string {
	return strings.TrimPrefix(rowID, queuedPrefix)
}
