package reconcile

import (
	"encoding/json"
	"fmt"
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
// snapshots and fetch timing. The server runs ahead of the client: its frames
// wait in a delivery queue while the user acts on a stale view. pol decides
// which chunk requests the client issues, so the trace times their answers.
// The same (seed, index, pol) always gives the same trace.
func Generate(seed uint64, index int, pol Policy) *Trace {
	g := &gen{r: rand.New(rand.NewPCG(seed, uint64(index)))}
	g.la = &lookahead{alias: map[string]string{}, serverQueued: map[string]bool{}, failed: map[string]bool{}}
	g.be = &Backend{la: g.la, tab: genTab, texts: map[string]string{}}
	g.m = newMachine(pol, genTab, g.be, g.route)
	g.run(8 + g.r.IntN(40))
	return &Trace{
		Name:    fmt.Sprintf("gen-%d-%d", seed, index),
		Tab:     genTab,
		Expect:  "pass",
		Meta:    &Meta{Version: 1, Extra: map[string]string{"seed": strconv.FormatUint(seed, 10), "index": strconv.Itoa(index), "policy": pol.Name}},
		Records: g.recs,
	}
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
	tool    bool // the current step has run a tool: the queue may be consumed
	pending []*Event
	answers []Record // POST answers not delivered yet
	fetches []int    // requests whose answer is delayed
	msgs    int
	deltas  int
}

type genMsg struct{ id, text string }

// route decides, as the client issues request r, whether its answer is
// delivered later by a fetch record or right away. A delayed answer's
// record index is not known yet: answerFetch sets it.
func (g *gen) route(r *request) int {
	if g.r.IntN(100) < 40 {
		g.fetches = append(g.fetches, r.req)
		return pendingAnswer
	}
	return -1
}

// emit appends a record and runs it through the client and its backend.
func (g *gen) emit(rec Record) {
	i := len(g.recs)
	g.recs = append(g.recs, rec)
	g.be.Apply(rec)
	g.m.apply(i, rec)
}

func (g *gen) ws(ev *Event) {
	ev.TabID = genTab
	g.pending = append(g.pending, ev)
}

func (g *gen) deliver() {
	ev := g.pending[0]
	g.pending = g.pending[1:]
	g.emit(Record{Kind: KindWS, Ev: ev})
}

func (g *gen) run(steps int) {
	g.emit(Record{Kind: KindWS, Ev: &Event{Type: "tab-created", TabID: genTab, ID: genTab}})
	for tries := 0; len(g.recs) < steps && tries < 20*steps; tries++ {
		g.step()
	}
	for len(g.pending) > 0 || len(g.fetches) > 0 {
		if len(g.pending) > 0 && (len(g.fetches) == 0 || g.r.IntN(2) == 0) {
			g.deliver()
		} else {
			g.answerFetch()
		}
	}
	for len(g.answers) > 0 {
		if g.answers[0].Status != "error" && g.r.IntN(5) == 0 {
			// Never answered within the trace. An error always is: only
			// the answer tells the replay that the server dropped the send.
			g.answers = g.answers[1:]
			continue
		}
		g.answerPOST()
	}
}

// step takes one random action among those possible now.
func (g *gen) step() {
	type action struct {
		w  int
		do func()
	}
	acts := []action{
		{2, g.localSend},
		{1, g.otherSend},
		{1, g.scroll},
	}
	if len(g.pending) > 0 {
		acts = append(acts, action{8, g.deliver})
	} else {
		acts = append(acts, action{1, g.statuses})
	}
	if g.running {
		acts = append(acts, action{5, g.content}, action{2, g.seal})
		if len(g.queue) > 0 && g.tool {
			acts = append(acts, action{3, g.interrupt})
		}
	}
	if g.cancellable() != "" {
		acts = append(acts, action{1, g.cancel})
	}
	if len(g.answers) > 0 {
		acts = append(acts, action{3, g.answerPOST})
	}
	if len(g.fetches) > 0 {
		acts = append(acts, action{3, g.answerFetch})
	}
	total := 0
	for _, a := range acts {
		total += a.w
	}
	n := g.r.IntN(total)
	for _, a := range acts {
		if n < a.w {
			a.do()
			return
		}
		n -= a.w
	}
}

func (g *gen) startTurn() {
	g.turns++
	g.running, g.tool = true, false
	g.ws(&Event{Type: "turn-start", TurnID: "turn-" + strconv.Itoa(g.turns)})
	g.ws(&Event{Type: "status", Status: StatusRunning})
}

func (g *gen) newMsg(prefix string) genMsg {
	g.msgs++
	n := strconv.Itoa(g.msgs)
	return genMsg{id: prefix + n, text: "message " + n}
}

// localSend: the user sends; the server handles the POST at once, its
// answer and frames arrive later.
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
	msg := g.newMsg("c")
	switch {
	case g.r.IntN(20) == 0:
		g.la.failed[msg.id] = true
		g.answers = append(g.answers, Record{Kind: KindHTTP, ID: msg.id, Status: "error"})
	case g.running:
		g.la.serverQueued[msg.id] = true
		g.queue = append(g.queue, msg)
		g.ws(&Event{Type: "message-queued", MessageID: msg.id, Message: msg.text})
		g.answers = append(g.answers, Record{Kind: KindHTTP, ID: msg.id, Status: "queued", MessageID: msg.id})
	default:
		g.startTurn()
		g.answers = append(g.answers, Record{Kind: KindHTTP, ID: msg.id, Status: "ok"})
	}
	g.emit(Record{Kind: KindSend, ID: msg.id, Text: msg.text})
}

func (g *gen) hasPendingStart() bool {
	for _, ev := range g.pending {
		if ev.Type == "turn-start" {
			return true
		}
	}
	return false
}

// otherSend: a second client on the same tab sends.
func (g *gen) otherSend() {
	msg := g.newMsg("o")
	if g.running {
		g.queue = append(g.queue, msg)
		g.ws(&Event{Type: "message-queued", MessageID: msg.id, Message: msg.text})
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
	g.ws(&Event{Type: "turn-sealed", TurnID: "turn-" + strconv.Itoa(g.turns)})
	g.running = false
	if len(g.queue) > 0 {
		g.ws(&Event{Type: "message-consumed", MessageIDs: g.queueIDs(), Reason: "continuation"})
		g.queue = nil
		g.startTurn()
	}
}

// cancellable returns a message the user can cancel: queued in the client's
// view and still in the server's queue.
func (g *gen) cancellable() string {
	for _, q := range g.m.S.Q {
		for _, s := range g.queue {
			if s.id == q.ID && strings.HasPrefix(s.id, "c") {
				return s.id
			}
		}
	}
	return ""
}

func (g *gen) cancel() {
	id := g.cancellable()
	for i, s := range g.queue {
		if s.id == id {
			g.queue = append(g.queue[:i:i], g.queue[i+1:]...)
			break
		}
	}
	g.ws(&Event{Type: "message-cancelled", MessageID: id})
	g.emit(Record{Kind: KindCancel, ID: id})
}

func (g *gen) scroll() {
	g.emit(Record{Kind: KindScroll, Up: !g.m.S.ScrolledUp})
}

// statuses: a reconnect snapshot, sent when the client has caught up.
func (g *gen) statuses() {
	s := StatusSnapshot{Status: StatusIdle}
	if g.running {
		s = StatusSnapshot{Status: StatusRunning, CurrentTurnID: "turn-" + strconv.Itoa(g.turns)}
	}
	g.emit(Record{Kind: KindWS, Ev: &Event{Type: "statuses", Statuses: map[string]StatusSnapshot{genTab: s}}})
}

func (g *gen) answerPOST() {
	i := g.r.IntN(len(g.answers))
	rec := g.answers[i]
	g.answers = append(g.answers[:i:i], g.answers[i+1:]...)
	g.emit(rec)
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
