package reconcile

// book is what the membership policy knows about each message from the
// frames and answers this client received: whether it is still waiting for
// the server, and which turn holds it once durable. It learns which turn the
// server runs from the server's frames, never from the client's LT, which a
// reconnect can leave stale. Every policy keeps it; only membership reads it.
type book struct {
	bugs        bug // the policy's bugs; some live in the book
	entries     map[string]bkEntry
	cancelled   map[string]bool
	sealed      map[string]int // turns whose turn-sealed this client saw -> requests issued before it
	sealedOrder []string       // the same turns, in the order they were sealed
	sends       int
	turns       []bkTurn
	server      serverTurns // the turn the server runs, as its frames say
	unseen      int         // reconnect snapshots that left the running turn unknown

	// Indexes, so that no frame costs the number of messages or turns:
	plainByText map[string][]string // plain sends by text, in send order (linkable)
	waiting     []string            // entries that were awaiting or continuation when added; may be stale
	turnFirst   map[string]int      // turn -> its first index in turns
	turnLast    map[string]int      // turn -> its last index in turns
	sealedAt    map[string]int      // turn -> its index in sealedOrder
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
	kind         bkKind
	turn         string
	text         string
	order        int  // send order, for binding the oldest waiting send
	turnsAtSend  int  // turn-starts seen when it was sent
	unseenAtSend int  // book.unseen when it was sent or consumed
	guess        bool // bound as the oldest waiting send: the server may yet queue it
	plain        bool // sent as a plain row (the client believed the agent idle)
	answered     bool // its POST was answered
	// sealedN: for an interrupt consumed while the server's turn was not
	// known, how many turns this client had seen sealed then; any later
	// turn's tool result may hold it.
	sealedN int
}

type bkTurn struct {
	id    string
	bound bool // a message of this client is its user row
}

func newBook(bugs bug) book {
	return book{bugs: bugs, entries: map[string]bkEntry{}, cancelled: map[string]bool{}, sealed: map[string]int{},
		plainByText: map[string][]string{}, turnFirst: map[string]int{}, turnLast: map[string]int{}, sealedAt: map[string]int{}}
}

func (b *book) send(id, text string, optimistic bool) {
	k := bkAwaiting
	if optimistic {
		k = bkOptimistic
	}
	b.sends++
	b.entries[id] = bkEntry{kind: k, text: text, order: b.sends, turnsAtSend: len(b.turns), unseenAtSend: b.unseen, plain: !optimistic}
	if !optimistic {
		b.plainByText[text] = append(b.plainByText[text], id)
		b.waiting = append(b.waiting, id)
	}
}

// waitingIDs returns the ids of the entries awaiting their turn or
// waiting as a continuation, dropping from b.waiting those that no longer
// are (each id once).
func (b *book) waitingIDs() []string {
	keep := b.waiting[:0]
	seen := map[string]bool{}
	for _, id := range b.waiting {
		e, ok := b.entries[id]
		if !ok || seen[id] || e.kind != bkAwaiting && e.kind != bkContinuation {
			continue
		}
		seen[id] = true
		keep = append(keep, id)
	}
	clear(b.waiting[len(keep):])
	b.waiting = keep
	return keep
}

// answered marks that the POST of id was answered.
func (b *book) answered(id string) {
	if e, ok := b.entries[id]; ok {
		e.answered = true
		b.entries[id] = e
	}
}

// httpOK: an optimistic send the server answered ok started a turn: the first
// turn since the send that no message of ours holds, or the next one.
func (b *book) httpOK(id string) {
	e, ok := b.entries[id]
	if !ok || e.kind != bkOptimistic {
		return
	}
	e.kind = bkAwaiting
	b.waiting = append(b.waiting, id)
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
		for _, id := range b.waitingIDs() {
			if x := b.entries[id]; x.kind == bkAwaiting && x.turnsAtSend <= k && (oldest == "" || x.order < b.entries[oldest].order) {
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

// interrupt: id was consumed into the tool result of the turn the server is
// running. lt is the client's LT, which only the pre-fix variant trusts.
func (b *book) interrupt(id, lt string) {
	e := bkEntry{kind: bkInterrupt, turn: b.server.cur, sealedN: len(b.sealedOrder)}
	if b.bugs&bugInterruptLT != 0 {
		e.turn = lt
	}
	b.entries[id] = e
}

func (b *book) continuation(ids []string) {
	for _, id := range ids {
		b.entries[id] = bkEntry{kind: bkContinuation, turnsAtSend: len(b.turns), unseenAtSend: b.unseen}
		b.waiting = append(b.waiting, id)
	}
}

func (b *book) cancel(id string) {
	delete(b.entries, id)
	b.cancelled[id] = true
}

// frame follows the server's turns through frame ev, the i-th record. A turn
// the client learns of without its turn-start — a snapshot naming it, or
// its seal — starts there for the book. The machine reports turn-start
// frames itself, after its backfill.
func (b *book) frame(i int, ev *Event, tab string) turnChange {
	wasUnknown := b.server.unknown
	ch := b.server.frame(i, ev, tab)
	if ev.Type != "turn-start" && ch.started != "" && !b.started(ch.started) {
		b.turnStart(ch.started)
	}
	if b.server.unknown && !wasUnknown {
		b.unseen++
	}
	return ch
}

// started reports whether the book knows turn t started.
func (b *book) started(t string) bool {
	_, ok := b.turnLast[t]
	return ok
}

// startedBefore reports whether t is among the first n turns the book saw start.
func (b *book) startedBefore(t string, n int) bool {
	i, ok := b.turnFirst[t]
	return ok && i < min(n, len(b.turns))
}

// represented reports whether rows hold e's message, whose row shows text,
// as a user row: of a turn that started since it was sent (or consumed for a
// continuation), or, when a reconnect hid a turn's start since then, of any
// turn not known to have started before.
func (b *book) represented(e bkEntry, rows *rowSet, text string) bool {
	if e.kind == bkBound && b.pagedOut(rows, e.turn) {
		return true
	}
	for _, t := range b.turns[min(e.turnsAtSend, len(b.turns)):] {
		if rows.representsUser(t.id, text) {
			return true
		}
	}
	if b.unseen == e.unseenAtSend {
		return false
	}
	for _, t := range rows.turnList() {
		if !b.startedBefore(t, e.turnsAtSend) && rows.representsUser(t, text) {
			return true
		}
	}
	return false
}

// pagedOut reports whether the rows are a window that starts after turn t
// began: t's user row is older than the window (the chunk endpoint returns
// the last 100 rows), so their lack of it says nothing.
func (b *book) pagedOut(rows *rowSet, t string) bool {
	if t == "" || rows.first() == "" {
		return false
	}
	if rows.startsInside(t) {
		return true
	}
	if t == rows.first() {
		return false
	}
	at, ok := b.turnLast[t]
	first, ok2 := b.turnLast[rows.first()]
	return ok && ok2 && first > at
}

// seal records that this client saw turn t sealed, having issued reqs requests.
func (b *book) seal(t string, reqs int) {
	if _, seen := b.sealed[t]; !seen {
		b.sealed[t] = reqs
		b.sealedAt[t] = len(b.sealedOrder)
		b.sealedOrder = append(b.sealedOrder, t)
	}
}

// turnStart binds the turn's user row: a waiting continuation first, else the
// oldest plain send still waiting for its turn.
func (b *book) turnStart(t string) {
	turn := bkTurn{id: t}
	oldest := ""
	for _, id := range b.waitingIDs() {
		switch e := b.entries[id]; e.kind {
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
	if _, ok := b.turnFirst[t]; !ok {
		b.turnFirst[t] = len(b.turns)
	}
	b.turnLast[t] = len(b.turns)
	b.turns = append(b.turns, turn)
}

// linkable returns the plain send, not answered yet, that a message-queued
// frame for an id this client does not know most likely stands for: the
// oldest with the same text. A client that sent while it believed the agent
// idle gets the server's id for its message only with the POST's answer,
// which may come after the frame.
func (b *book) linkable(text string) string {
	best := ""
	for _, id := range b.plainByText[text] {
		e, ok := b.entries[id]
		if !ok || !e.plain || e.answered || e.text != text {
			continue
		}
		if e.kind != bkAwaiting && !(e.kind == bkBound && e.guess) {
			continue
		}
		if best == "" || e.order < b.entries[best].order {
			best = id
		}
	}
	return best
}

// interruptHeld reports whether rows hold interrupt e's text: in its turn's
// tool result, or, when the server's turn was not known, in a tool result of
// any turn this client had not seen sealed when it was consumed.
func (b *book) interruptHeld(e bkEntry, rows *rowSet, text string) bool {
	if e.turn != "" || b.bugs&bugInterruptLT != 0 {
		return rows.hasToolText(e.turn, text)
	}
	for _, t := range rows.turnList() {
		if b.sealedBefore(t, e.sealedN) {
			continue
		}
		if rows.hasToolText(t, text) {
			return true
		}
	}
	return false
}

// sealedBefore reports whether t is among the first n turns this client saw sealed.
func (b *book) sealedBefore(t string, n int) bool {
	i, ok := b.sealedAt[t]
	return ok && i < n
}
