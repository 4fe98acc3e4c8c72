package reconcile

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
	id       string // the client's id (the server's for another client's message)
	text     string
	local    bool
	fate     fate
	turn     string
	errShown bool // the error answer arrived: the client must show an error row
}

// content is a piece of streamed content: the record that carried it.
type content struct {
	src  int
	turn string
	text string
}

// Truth follows every user message and every piece of streamed content from
// the records alone — the server's frames and the user's actions — never from
// the client's tags, which are what is under test.
type Truth struct {
	la      *lookahead
	tab     string
	msgs    []*tmsg
	byID    map[string]*tmsg
	waiting []*tmsg // sends that will start a turn, oldest first
	cont    []*tmsg // consumed for a continuation, waiting for its turn-start

	order   map[string]int // turn -> start order
	sealed  map[string]bool
	running string
	content []content
}

func newTruth(la *lookahead, tab string) *Truth {
	return &Truth{la: la, tab: tab, byID: map[string]*tmsg{}, order: map[string]int{}, sealed: map[string]bool{}}
}

func (t *Truth) lookup(id string) *tmsg {
	return t.byID[t.la.local(id)]
}

func (t *Truth) observe(i int, rec Record) {
	switch rec.Kind {
	case KindSend:
		if rec.ID == "" || t.byID[rec.ID] != nil {
			return
		}
		m := &tmsg{id: rec.ID, text: rec.Text, local: true}
		t.msgs = append(t.msgs, m)
		t.byID[m.id] = m
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
	switch ev.Type {
	case "message-queued":
		if ev.MessageID == "" || t.lookup(ev.MessageID) != nil {
			return
		}
		m := &tmsg{id: t.la.local(ev.MessageID), text: ev.Message}
		t.msgs = append(t.msgs, m)
		t.byID[m.id] = m
	case "message-consumed":
		for _, id := range ev.MessageIDs {
			m := t.lookup(id)
			if m == nil || m.fate != fatePending {
				continue
			}
			if ev.Reason == "continuation" {
				m.fate = fateContWaiting
				t.cont = append(t.cont, m)
			} else {
				m.fate, m.turn = fateInterrupt, t.running
			}
		}
	case "message-cancelled":
		t.cancel(ev.MessageID)
	case "turn-start":
		t.start(ev.TurnID)
	case "turn-sealed":
		t.seal(ev.TurnID)
	case "statuses":
		s, ok := ev.Statuses[t.tab]
		switch {
		case !ok:
		case s.Status != StatusRunning:
			t.seal(t.running)
		case s.CurrentTurnID != "" && s.CurrentTurnID != t.running:
			t.start(s.CurrentTurnID)
		}
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
	if t.running != "" {
		t.content = append(t.content, content{src: i, turn: t.running, text: text})
	}
}

// start: a turn's user row is a waiting continuation if any, else the oldest
// send the server neither queued nor rejected, else another client's message.
func (t *Truth) start(turn string) {
	if turn == "" {
		return
	}
	if _, ok := t.order[turn]; !ok {
		t.order[turn] = len(t.order)
	}
	t.running = turn
	if len(t.cont) > 0 {
		for _, m := range t.cont {
			m.fate, m.turn = fateContinuation, turn
		}
		t.cont = nil
		return
	}
	for len(t.waiting) > 0 {
		m := t.waiting[0]
		t.waiting = t.waiting[1:]
		if m.fate == fatePending {
			m.fate, m.turn = fateInitiator, turn
			return
		}
	}
}

func (t *Truth) seal(turn string) {
	if turn == "" {
		return
	}
	t.sealed[turn] = true
	if t.running == turn {
		t.running = ""
	}
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
