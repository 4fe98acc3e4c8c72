package reconcile

import (
	"encoding/json"
	"maps"
	"math/rand/v2"
	"strconv"
	"strings"
)

// genTab is the tab of generated traces.
const genTab = "t1"

// pendingAnswer marks a generated request whose fetch record is not written yet.
const pendingAnswer = 1 << 30

// Generate returns the index-th trace of seed: a random interleaving of this
// client's sends (each answered later, or never), a second client's sends,
// queueing, interrupts, continuations, cancels, seals, scrolls, statuses
// snapshots, dropped sockets and fetch timing. The server runs ahead of the
// client: its frames wait in a delivery queue while the user acts on a stale
// view — sending while it believes the agent idle when the server is running
// (the server queues the message under its own id) or running when it is
// idle (an optimistic queue that starts a turn), or after a reconnect
// snapshot that does not say which turn runs. pol decides which chunk
// requests the client issues, so the trace times their answers. The same
// (seed, index, pol) always gives the same trace.
func Generate(seed uint64, index int, pol Policy) *Trace {
	g := &gen{r: rand.New(rand.NewPCG(seed, uint64(index)))}
	g.la = newLookahead()
	g.be = newBackend(g.la, genTab)
	g.m = newMachine(pol, genTab, g.be, g.route)
	steps := 8 + g.r.IntN(40)
	g.recs = make([]Record, 0, steps+16)
	g.la.ahead = make([]string, 0, steps+16)
	g.run(steps)
	s, i, name := strconv.FormatUint(seed, 10), strconv.Itoa(index), pol.Name
	return &Trace{
		Name:    "gen-" + s + "-" + i,
		Source:  GeneratedSource(seed, index),
		Tab:     genTab,
		Expect:  "pass",
		Meta:    &Meta{Version: 1, Extra: map[string]string{"seed": s, "index": i, "policy": name}},
		Records: g.recs,
	}
}

// generatedPrefix starts the source of a generated trace.
const generatedPrefix = "generated: "

// GeneratedSource names the source of the index-th generated trace of seed.
func GeneratedSource(seed uint64, index int) string {
	return generatedPrefix + "seed " + strconv.FormatUint(seed, 10) + ", trace " + strconv.Itoa(index)
}

type gen struct {
	r    *rand.Rand
	recs []Record
	la   *lookahead // what the generator decided; the machine's backend reads it
	be   *Backend
	m    *Machine

	// The server.
	running bool
	turns   int
	queue   []genMsg
	tool    bool        // the current step has run a tool: the queue may be consumed
	pending []genFrame  // frames the server sent that the client has not got yet
	answers []genAnswer // POST answers not delivered yet
	fetches []int       // requests whose answer is delayed
	msgs    int
	deltas  int
}

// genFrame is a frame in flight, with the turn the server ran when it sent it.
type genFrame struct {
	ev   *Event
	turn string
}

// genMsg is a message in the server's queue: its id there, and the
// client's id for it (the same unless the client sent it as a plain row).
type genMsg struct{ id, client, text string }

// genAnswer is a POST answer in flight. must: the trace needs it, since only
// the answer tells the replay what became of the message.
type genAnswer struct {
	rec  Record
	must bool
}

// route decides, as the client issues request r, whether its answer is
// delivered later by a fetch record or right away. A delayed answer's
// record index is not known yet: answerFetch sets it.
func (g *gen) route(r *request) (int, bool) {
	if g.r.IntN(100) < 40 {
		g.fetches = append(g.fetches, r.req)
		return pendingAnswer, false
	}
	return -1, false
}

// emit appends a record and runs it through the client and its backend.
func (g *gen) emit(rec Record) {
	i := len(g.recs)
	g.recs = append(g.recs, rec)
	g.be.Apply(i, rec)
	g.m.apply(i, rec)
}

func (g *gen) ws(ev *Event) {
	ev.TabID = genTab
	f := genFrame{ev: ev}
	if g.running {
		f.turn = g.turnID()
	}
	g.pending = append(g.pending, f)
}

func (g *gen) deliver() {
	f := g.pending[0]
	g.pending = g.pending[1:]
	g.emitFrame(f)
}

// emitFrame delivers a frame. Every turn is sealed within a trace, so the
// turn it was sent in is what the replay's lookahead will find: the
// generator's backend model knows it at once.
func (g *gen) emitFrame(f genFrame) {
	for len(g.la.ahead) < len(g.recs) {
		g.la.ahead = append(g.la.ahead, "")
	}
	g.la.ahead = append(g.la.ahead, f.turn)
	g.emit(Record{Kind: KindWS, Ev: f.ev})
}

func (g *gen) run(steps int) {
	g.emitFrame(genFrame{ev: &Event{Type: "tab-created", TabID: genTab, ID: genTab}})
	for tries := 0; len(g.recs) < steps && tries < 20*steps; tries++ {
		g.step()
	}
	for g.running {
		g.seal()
	}
	for len(g.pending) > 0 || len(g.fetches) > 0 {
		if len(g.pending) > 0 && (len(g.fetches) == 0 || g.r.IntN(2) == 0) {
			g.deliver()
		} else {
			g.answerFetch()
		}
	}
	for len(g.answers) > 0 {
		if !g.answers[0].must && g.r.IntN(5) == 0 {
			// Never answered within the trace.
			g.answers = g.answers[1:]
			continue
		}
		g.answerPOST()
	}
}

// Moves of the generator, with their weights when possible.
type move uint8

const (
	mvLocalSend move = iota
	mvOtherSend
	mvScroll
	mvDeliver
	mvStatuses
	mvReconnect
	mvContent
	mvSeal
	mvInterrupt
	mvCancel
	mvAnswerPOST
	mvAnswerFetch
	nMoves
)

// step takes one random move among those possible now.
func (g *gen) step() {
	var w [nMoves]int
	w[mvLocalSend], w[mvOtherSend], w[mvScroll] = 2, 1, 1
	if len(g.pending) > 0 {
		w[mvDeliver] = 8
		if g.droppable() {
			w[mvReconnect] = 1
		}
	} else {
		w[mvStatuses] = 1
	}
	if g.running {
		w[mvContent], w[mvSeal] = 5, 2
		if len(g.queue) > 0 && g.tool {
			w[mvInterrupt] = 3
		}
	}
	if g.cancellable() >= 0 {
		w[mvCancel] = 1
	}
	if len(g.answers) > 0 {
		w[mvAnswerPOST] = 3
	}
	if len(g.fetches) > 0 {
		w[mvAnswerFetch] = 3
	}
	total := 0
	for _, x := range w {
		total += x
	}
	n := g.r.IntN(total)
	mv := move(0)
	for ; n >= w[mv]; mv++ {
		n -= w[mv]
	}
	switch mv {
	case mvLocalSend:
		g.localSend()
	case mvOtherSend:
		g.otherSend()
	case mvScroll:
		g.emit(Record{Kind: KindScroll, Up: !g.m.S.ScrolledUp})
	case mvDeliver:
		g.deliver()
	case mvStatuses:
		g.statuses()
	case mvReconnect:
		g.reconnect()
	case mvContent:
		g.content()
	case mvSeal:
		g.seal()
	case mvInterrupt:
		g.interrupt()
	case mvCancel:
		g.cancel()
	case mvAnswerPOST:
		g.answerPOST()
	case mvAnswerFetch:
		g.answerFetch()
	}
}

func (g *gen) turnID() string { return "turn-" + strconv.Itoa(g.turns) }

func (g *gen) startTurn() {
	g.turns++
	g.running, g.tool = true, false
	g.ws(&Event{Type: "turn-start", TurnID: g.turnID()})
	g.ws(&Event{Type: "status", Status: StatusRunning})
}

func (g *gen) newMsg(prefix string) (id, text string) {
	g.msgs++
	n := strconv.Itoa(g.msgs)
	return prefix + n, "message " + n
}

// localSend: the user sends; the server handles the POST at once, its
// answer and frames arrive later. The client queues the message itself
// (with its own id) when it believes the agent runs, and sends a plain row
// otherwise; either belief may be stale.
func (g *gen) localSend() {
	if !g.running {
		// A turn-start still in the delivery queue while the server is idle
		// belongs to a turn already over; the client sees it before the
		// send's own turn-start, which keeps "the next turn-start after a
		// send that the server did not queue is its turn" true.
		for g.hasPendingStart() {
			g.deliver()
		}
	}
	id, text := g.newMsg("c")
	optimistic := g.m.S.Status == StatusRunning
	switch {
	case g.r.IntN(20) == 0:
		g.la.failed[id] = true
		g.answers = append(g.answers, genAnswer{rec: Record{Kind: KindHTTP, ID: id, Status: "error"}, must: true})
	case g.running:
		// The server queues it: under the client's queue id when there is
		// one, else under an id of its own, which only the answer links.
		sid := id
		if !optimistic {
			sid = "s" + id[1:]
			g.la.alias[sid] = id
		}
		g.la.serverQueued[id] = true
		g.queue = append(g.queue, genMsg{id: sid, client: id, text: text})
		g.ws(&Event{Type: "message-queued", MessageID: sid, Message: text})
		g.answers = append(g.answers, genAnswer{rec: Record{Kind: KindHTTP, ID: id, Status: "queued", MessageID: sid}, must: sid != id})
	default:
		g.startTurn()
		g.answers = append(g.answers, genAnswer{rec: Record{Kind: KindHTTP, ID: id, Status: "ok"}})
	}
	g.emit(Record{Kind: KindSend, ID: id, Text: text})
}

func (g *gen) hasPendingStart() bool {
	for _, f := range g.pending {
		if f.ev.Type == "turn-start" {
			return true
		}
	}
	return false
}

// otherSend: a second client on the same tab sends.
func (g *gen) otherSend() {
	id, text := g.newMsg("o")
	if g.running {
		g.queue = append(g.queue, genMsg{id: id, client: id, text: text})
		g.ws(&Event{Type: "message-queued", MessageID: id, Message: text})
		return
	}
	g.startTurn()
}

func (g *gen) content() {
	g.deltas++
	n := strconv.Itoa(g.deltas)
	switch g.r.IntN(6) {
	case 0:
		g.ws(&Event{Type: "reasoning-delta", Delta: "think" + n + " "})
	case 1, 2:
		id := "call-" + n
		g.ws(&Event{Type: "tool-call", ToolCall: &ToolCall{ID: id, Name: "tool" + n, Arguments: json.RawMessage(`{}`)}})
		g.ws(&Event{Type: "tool-result", ToolResult: &ToolResult{ToolCallID: id, Result: json.RawMessage(strconv.Quote("result" + n))}})
		g.tool = true
	case 3:
		g.ws(&Event{Type: "done"})
		g.tool = false
	default:
		g.ws(&Event{Type: "text-delta", Delta: "text" + n + " "})
	}
}

// interrupt: after a tool, the server consumes the whole queue into the
// step's tool result.
func (g *gen) interrupt() {
	g.ws(&Event{Type: "message-consumed", MessageIDs: g.queueIDs()})
	g.queue = nil
}

func (g *gen) queueIDs() []string {
	ids := make([]string, len(g.queue))
	for i, m := range g.queue {
		ids[i] = m.id
	}
	return ids
}

// seal ends the running turn; a queue left over becomes the next turn.
func (g *gen) seal() {
	g.ws(&Event{Type: "status", Status: StatusIdle})
	g.ws(&Event{Type: "turn-sealed", TurnID: g.turnID()})
	g.running = false
	if len(g.queue) > 0 {
		g.ws(&Event{Type: "message-consumed", MessageIDs: g.queueIDs(), Reason: "continuation"})
		g.queue = nil
		g.startTurn()
	}
}

// cancellable returns the index in the server's queue of a message the user
// can cancel: queued in the client's view and still in the server's queue.
func (g *gen) cancellable() int {
	for _, q := range g.m.S.Q {
		for i, s := range g.queue {
			if s.client == q.ID && strings.HasPrefix(s.client, "c") {
				return i
			}
		}
	}
	return -1
}

func (g *gen) cancel() {
	i := g.cancellable()
	s := g.queue[i]
	g.queue = append(g.queue[:i:i], g.queue[i+1:]...)
	g.ws(&Event{Type: "message-cancelled", MessageID: s.id})
	g.emit(Record{Kind: KindCancel, ID: s.client})
}

// snapshot is the statuses frame for the server's state now; withTurn says
// whether a running snapshot names its turn.
func (g *gen) snapshot(withTurn bool) genFrame {
	s := StatusSnapshot{Status: StatusIdle}
	f := genFrame{}
	if g.running {
		s = StatusSnapshot{Status: StatusRunning}
		f.turn = g.turnID()
		if withTurn {
			s.CurrentTurnID = f.turn
		}
	}
	f.ev = &Event{Type: "statuses", TabID: genTab, Statuses: map[string]StatusSnapshot{genTab: s}}
	return f
}

// statuses: a snapshot sent when the client has caught up; a third of the
// running ones do not name the turn.
func (g *gen) statuses() {
	g.emitFrame(g.snapshot(g.r.IntN(3) > 0))
}

// droppable: frames a dropped socket may lose, leaving the client's view of
// the turn and of the agent's status stale. Frames about messages are kept
// (the truth could not follow a message whose fate was lost), and so is
// turn-sealed, whose turn id is what tells which turn a snapshot that names
// none was about.
func droppable(ev *Event) bool {
	switch ev.Type {
	case "text-delta", "reasoning-delta", "tool-call", "tool-result", "done", "status", "turn-start":
		return true
	}
	return false
}

func (g *gen) droppable() bool {
	for _, f := range g.pending {
		if droppable(f.ev) {
			return true
		}
	}
	return false
}

// reconnect: the socket drops and comes back. The client loses the frames
// in flight that the server does not send again, gets the others, then a
// snapshot of the server's state that half of the time does not name the
// running turn.
func (g *gen) reconnect() {
	frames := g.pending
	g.pending = nil
	for _, f := range frames {
		if !droppable(f.ev) {
			g.emitFrame(f)
		}
	}
	g.emitFrame(g.snapshot(g.r.IntN(2) == 0))
}

func (g *gen) answerPOST() {
	i := g.r.IntN(len(g.answers))
	a := g.answers[i]
	g.answers = append(g.answers[:i:i], g.answers[i+1:]...)
	g.emit(a.rec)
}

// answerFetch delivers a delayed chunk answer; it carries no rows, so the
// backend model answers from the rows durable when the request was issued,
// and the trace stays consistent when the shrinker drops records.
func (g *gen) answerFetch() {
	i := g.r.IntN(len(g.fetches))
	req := g.fetches[i]
	g.fetches = append(g.fetches[:i:i], g.fetches[i+1:]...)
	rec := Record{Kind: KindFetch, Req: req, FetchErr: g.r.IntN(15) == 0}
	for _, r := range g.m.inflight {
		if r.req == req {
			r.answerAt = len(g.recs)
		}
	}
	g.emit(rec)
}

// Failing returns t with its meta record saying that it fails under pol with
// invariant n and which command reproduces it: a saved failure explains
// itself.
func (t *Trace) Failing(pol Policy, n int, reproduce string) *Trace {
	meta := Meta{Version: 1}
	if t.Meta != nil {
		meta = *t.Meta
	}
	meta.Extra = maps.Clone(meta.Extra)
	if meta.Extra == nil {
		meta.Extra = map[string]string{}
	}
	meta.Extra["foundWith"] = pol.Name
	meta.Extra["invariant"] = strconv.Itoa(n) + " (" + InvariantName(n) + ")"
	meta.Extra["reproduce"] = reproduce
	c := *t
	c.Meta = &meta
	return &c
}
