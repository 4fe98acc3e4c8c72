package reconcile

import "iter"

// fate is where a user message went, as the server's events tell it.
type fate uint8

const (
	fatePending      fate = iota // queued, or sent and waiting for its turn
	fateInitiator                // the user row of turn
	fateInterrupt                // folded into a tool result of turn
	fateContWaiting              // consumed for a continuation whose turn has not started
	fateContinuation             // part of the joined user row of turn
	fateFailed                   // its POST was answered with an error
	fateCancelled                // cancelled: must not be visible
)

var fateNames = [...]string{"pending", "initiator", "interrupt", "continuation (waiting)", "continuation", "failed", "cancelled"}

func (f fate) String() string { return fateNames[f] }

// tmsg is one user message the truth tracker follows.
type tmsg struct {
	n        int    // the order in which the tracker met it
	id       string // the client's id (the server's for another client's message)
	text     string
	local    bool
	fate     fate
	turn     string
	anyTurn  bool // an interrupt consumed while the server's turn was unknown
	at       int  // the record that consumed it
	errShown bool // the error answer arrived: the client must show an error row
	mark     int  // the checker's pass that last visited it
}

// open reports whether m must be checked at every quiescent point: it is not
// durable in a known turn, so no window of rows settles it.
func (m *tmsg) open() bool {
	switch m.fate {
	case fatePending, fateContWaiting, fateFailed:
		return true
	case fateInterrupt:
		return m.anyTurn
	}
	return false
}

// content is a piece of streamed content: the record that carried it.
type content struct {
	src  int
	turn string
	text string
}

// Truth follows every user message and every piece of streamed content from
// the records alone — the server's frames, its answers, the fetched rows and
// the user's actions — never from the client's tags or beliefs, which are
// what is under test. Which turn the server runs comes from its frames, a
// reconnect snapshot that does not say being resolved by the frames after it.
type Truth struct {
	la      *lookahead
	tab     string
	turns   serverTurns
	msgs    []*tmsg
	byID    map[string]*tmsg
	waiting []*tmsg // sends that will start a turn, oldest first
	cont    []*tmsg // consumed for a continuation, waiting for its turn-start
	open    []*tmsg // messages that may be open (compacted by the checker)
	byTurn  map[string][]*tmsg

	order     map[string]int        // turn -> start order
	turnList  []string              // turns in start order
	sealedAt  map[string]int        // turn -> record that sealed it
	content   []content             // every piece, in order (keepAll)
	contentOf map[string]*[]content // turn -> its pieces; those of a sealed turn go unless keepAll
	last      *[]content            // the list content was last added to
	lastTurn  string
	unsealed  []string   // turns with content, not sealed
	spare     *[]content // a sealed turn's list, let go: the next turn's
	// keepAll keeps every piece of content: the final view, which the
	// deferral check compares, shows sealed turns' too. A streamed replay
	// lets a sealed turn's go (the loss and newer-turn checks read only
	// those of turns still running).
	keepAll bool
}

// turnContent returns the pieces of content of turn.
func (t *Truth) turnContent(turn string) iter.Seq[content] {
	return func(yield func(content) bool) {
		if list := t.contentOf[turn]; list != nil {
			for _, c := range *list {
				if !yield(c) {
					return
				}
			}
		}
	}
}

func newTruth(la *lookahead, tab string) *Truth {
	return &Truth{la: la, tab: tab, turns: serverTurns{la: la}, byID: map[string]*tmsg{},
		byTurn: map[string][]*tmsg{}, order: map[string]int{}, sealedAt: map[string]int{}, contentOf: map[string]*[]content{}}
}

func (t *Truth) lookup(id string) *tmsg {
	return t.byID[t.la.local(id)]
}

func (t *Truth) add(m *tmsg) {
	m.n = len(t.msgs)
	t.msgs = append(t.msgs, m)
	t.byID[m.id] = m
	t.open = append(t.open, m)
}

// settle gives m a durable fate in turn.
func (t *Truth) settle(m *tmsg, f fate, turn string) {
	m.fate, m.turn = f, turn
	if turn != "" {
		t.byTurn[turn] = append(t.byTurn[turn], m)
	}
}

func (t *Truth) observe(i int, rec *Record) {
	switch rec.Kind {
	case KindSend:
		if rec.ID == "" || t.byID[rec.ID] != nil {
			return
		}
		m := &tmsg{id: rec.ID, text: rec.Text, local: true}
		t.add(m)
		if t.la.initiates(m.id) {
			t.waiting = append(t.waiting, m)
		}
	case KindHTTP:
		if m := t.byID[rec.ID]; m != nil && rec.Status == "error" && m.fate == fatePending {
			m.fate, m.errShown = fateFailed, true
		}
	case KindCancel:
		t.cancel(rec.ID)
	case KindWS:
		if ofTab(rec.Ev, t.tab) {
			t.frame(i, rec.Ev)
		}
	}
}

// cancel: a message still pending can be cancelled; one that started a turn
// or was consumed stays where it went.
func (t *Truth) cancel(id string) {
	if m := t.lookup(id); m != nil && m.fate == fatePending {
		m.fate = fateCancelled
	}
}

func (t *Truth) frame(i int, ev *Event) {
	ch := t.turns.frame(i, ev, t.tab)
	if ch.started != "" && !(ch.implicit && t.known(ch.started)) {
		t.start(ch.started)
	}
	for _, s := range ch.sealed {
		t.seal(s, i)
	}
	switch ev.Type {
	case "message-queued":
		if ev.MessageID == "" || t.lookup(ev.MessageID) != nil {
			return
		}
		t.add(&tmsg{id: t.la.local(ev.MessageID), text: ev.Message})
	case "message-consumed":
		for _, id := range ev.MessageIDs {
			m := t.lookup(id)
			if m == nil || m.fate != fatePending {
				continue
			}
			switch {
			case ev.Reason == "continuation":
				m.fate = fateContWaiting
				t.cont = append(t.cont, m)
			case t.turns.cur != "":
				t.settle(m, fateInterrupt, t.turns.cur)
			default:
				m.fate, m.anyTurn, m.at = fateInterrupt, true, i
			}
		}
	case "message-cancelled":
		t.cancel(ev.MessageID)
	case "text-delta", "reasoning-delta":
		t.addContent(i, ev.Delta)
	case "tool-call":
		if ev.ToolCall != nil {
			t.addContent(i, ev.ToolCall.Name)
		}
	case "tool-result":
		if ev.ToolResult != nil {
			t.addContent(i, rawText(ev.ToolResult.Result))
		}
	}
}

func (t *Truth) addContent(i int, text string) {
	turn := t.turns.cur
	if turn == "" {
		return
	}
	c := content{src: i, turn: turn, text: text}
	if t.keepAll {
		t.content = append(t.content, c)
	}
	if t.last == nil || t.lastTurn != turn {
		list := t.contentOf[turn]
		if list == nil {
			if list, t.spare = t.spare, nil; list == nil {
				list = new([]content)
			}
			t.contentOf[turn] = list
			t.unsealed = append(t.unsealed, turn)
		}
		t.last, t.lastTurn = list, turn
	}
	*t.last = append(*t.last, c)
}

// start: a turn's user row is a waiting continuation if any, else the oldest
// send the server neither queued nor rejected, else another client's message.
func (t *Truth) start(turn string) {
	if _, ok := t.order[turn]; !ok {
		t.order[turn] = len(t.turnList)
		t.turnList = append(t.turnList, turn)
	}
	if len(t.cont) > 0 {
		for _, m := range t.cont {
			t.settle(m, fateContinuation, turn)
		}
		t.cont = nil
		return
	}
	for len(t.waiting) > 0 {
		m := t.waiting[0]
		t.waiting = t.waiting[1:]
		if m.fate == fatePending {
			t.settle(m, fateInitiator, turn)
			return
		}
	}
}

func (t *Truth) seal(turn string, i int) {
	if turn == "" {
		return
	}
	if _, ok := t.sealedAt[turn]; !ok {
		t.sealedAt[turn] = i
	}
	for k, u := range t.unsealed {
		if u == turn {
			t.unsealed = append(t.unsealed[:k:k], t.unsealed[k+1:]...)
			break
		}
	}
	if !t.keepAll {
		if list := t.contentOf[turn]; list != nil {
			clear(*list)
			*list, t.spare = (*list)[:0], list
			delete(t.contentOf, turn)
		}
		if t.lastTurn == turn {
			t.last, t.lastTurn = nil, ""
		}
	}
}

func (t *Truth) sealed(turn string) bool {
	_, ok := t.sealedAt[turn]
	return ok
}

// known reports whether the tracker saw turn start.
func (t *Truth) known(turn string) bool {
	_, ok := t.order[turn]
	return ok
}

// newer reports whether turn r started after turn t (or t is unknown).
func (t *Truth) newer(r, turn string) bool {
	ro, ok := t.order[r]
	if !ok {
		return false
	}
	to, ok := t.order[turn]
	return !ok || ro > to
}
