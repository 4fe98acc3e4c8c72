package reconcile

import (
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"
)

// fetchWindow is how many rows a chunk fetch returns: the last 100 non-usage rows.
const fetchWindow = 100

// interruptHeader precedes interrupt texts folded into a tool result.
const interruptHeader = "\n\n[USER INTERRUPT]\nThe user sent this while you were working:\n\n"

// otherClientText is the user row of a turn another client started: this
// client never saw its text.
const otherClientText = "(message from another client)"

// lookahead holds the facts about the server's handling of each message, and
// of its turns, that a trace reveals only later: a send is queued at the
// server if a message-queued frame or a "queued" answer names it, and failed
// if its POST was answered with an error; which turn the server runs where
// its frames do not say (a reconnect) is told by the frames after it. Both the backend
// model and the truth tracker need them.
type lookahead struct {
	alias        map[string]string // server message id -> client id
	serverQueued map[string]bool
	failed       map[string]bool
	ahead        []string // record index -> the turn the frames after it show the server was running (the generator's)
	win          *window  // a replay's records: their turn ahead, and late facts
	sendAt       map[string]int
}

func newLookahead() *lookahead {
	return &lookahead{alias: map[string]string{}, serverQueued: map[string]bool{}, failed: map[string]bool{}, sendAt: map[string]int{}}
}

// add learns what record i, which concerns tab or not, tells about the
// messages sent before it.
func (la *lookahead) add(i int, r *Record, tab string) {
	fact := ""
	switch {
	case r.Kind == KindSend:
		if _, ok := la.sendAt[r.ID]; !ok {
			la.sendAt[r.ID] = i
		}
	case r.Kind == KindHTTP:
		if r.MessageID != "" && r.MessageID != r.ID {
			la.alias[r.MessageID] = r.ID
			fact = r.ID
		}
		switch r.Status {
		case "queued":
			la.serverQueued[r.ID], fact = true, r.ID
		case "error":
			la.failed[r.ID], fact = true, r.ID
		}
	case r.Kind == KindWS && r.Ev.Type == "message-queued" && ofTab(r.Ev, tab):
		fact = la.local(r.Ev.MessageID)
		la.serverQueued[fact] = true
	}
	if at, ok := la.sendAt[fact]; ok && fact != "" && la.win != nil && la.win.streamed() && i-at >= la.win.size {
		la.win.late = true // the send was applied before this was known
	}
}

// aheadOf is the turn the frames after record i show the server running.
func (la *lookahead) aheadOf(i int) string {
	if la.win != nil {
		return la.win.aheadOf(i)
	}
	if i >= len(la.ahead) {
		return ""
	}
	return la.ahead[i]
}

func (la *lookahead) local(id string) string {
	if c, ok := la.alias[id]; ok {
		return c
	}
	return id
}

// initiates reports whether send id can start a turn: the server neither
// queued nor rejected it.
func (la *lookahead) initiates(id string) bool {
	return !la.serverQueued[id] && !la.failed[id]
}

// ofTab reports whether ev concerns tab (statuses frames concern every tab).
func ofTab(ev *Event, tab string) bool {
	return ev.TabID == "" || tab == "" || ev.TabID == tab || ev.Type == "statuses"
}

// Backend models the server from the records of a trace: which rows are
// durable after each record. A turn's user row is written when it starts;
// its assistant and tool rows in one batch when it is sealed, with interrupt
// texts folded into the last tool result. It answers the fetches a trace does
// not record.
type Backend struct {
	la    *lookahead
	tab   string
	turns serverTurns
	index int // the record being applied
	// win: the records the model follows on demand (a replay); done of
	// them are applied, and the records leaving the window are (catchUp).
	win  *window
	done int
	rows []Chunk
	// enc, per row of rows: the pending row whose data is not encoded yet.
	// Rows are encoded when a window shows them: a trace whose fetch
	// records carry their rows never asks for most of them.
	enc  []*pending
	seq  int64
	snap *rowSet // the window as of the last write, shared until the next

	started  map[string]bool   // turns started
	texts    map[string]string // client message id -> text
	awaiting []string          // sends waiting to start a turn, oldest first
	cont     []string          // continuation texts waiting for their turn-start

	turn    string     // running turn, "" when idle
	step    int        // step of the running turn
	pend    []*pending // the running turn's rows, written when it is sealed
	newText bool       // the next delta starts a new text row
}

// pending is a row of the running turn; text rows grow delta by delta and
// are encoded once, when a window first shows the row (Backend.window).
type pending struct {
	Chunk
	text    []byte          // the row's text: data.text, data.result or data.error
	callID  string          // tool_call, tool_result
	name    string          // tool_call
	args    json.RawMessage // tool_call
	isError bool            // tool_result
}

// data encodes the row's data as the server writes it.
func (p *pending) data() json.RawMessage {
	b := make([]byte, 0, len(p.text)+len(p.args)+64)
	switch p.Type {
	case "tool_call":
		b = append(b, `{"arguments":`...)
		b = append(b, p.args...)
		b = append(b, `,"name":`...)
		b = appendJSONString(b, p.name)
		b = append(b, `,"toolCallId":`...)
		b = appendJSONString(b, p.callID)
		return append(b, '}')
	case "tool_result":
		b = append(b, `{"isError":`...)
		b = strconv.AppendBool(b, p.isError)
		b = append(b, `,"result":`...)
		b = appendJSONString(b, string(p.text))
		b = append(b, `,"toolCallId":`...)
		b = appendJSONString(b, p.callID)
		return append(b, '}')
	case "error":
		b = append(b, `{"error":`...)
	default:
		b = append(b, `{"text":`...)
	}
	b = appendJSONString(b, string(p.text))
	return append(b, '}')
}

// NewBackend returns the backend model for the records of a trace about
// tab. It follows them when asked for its rows.
func NewBackend(recs []Record, tab string) *Backend {
	w := newSliceWindow(recs)
	la := newLookahead()
	w.start(tab, la)
	return newWindowBackend(w, la, tab)
}

// newWindowBackend returns the backend model for the records of w, about
// tab. It follows them when asked for its rows (at), and as they leave the
// window.
func newWindowBackend(w *window, la *lookahead, tab string) *Backend {
	b := newBackend(la, tab)
	b.win = w
	return b
}

// catchUp applies the records up to i, which are held in the window.
func (b *Backend) catchUp(i int) {
	for b.win != nil && b.done <= i && b.done < b.win.hi {
		b.Apply(b.done, *b.win.at(b.done))
		b.done++
	}
}

func newBackend(la *lookahead, tab string) *Backend {
	return &Backend{la: la, tab: tab, texts: map[string]string{}, started: map[string]bool{}, turns: serverTurns{la: la}, rows: make([]Chunk, 0, 16)}
}

// Rows returns the durable rows a chunk fetch would return now.
func (b *Backend) Rows() []Chunk { return b.window().list }

// at returns the rows a chunk fetch returns after record i, applying the
// records up to it first when the model follows a trace on demand.
func (b *Backend) at(i int) *rowSet {
	b.catchUp(i)
	return b.window()
}

func (b *Backend) window() *rowSet {
	if b.snap == nil {
		from := max(0, len(b.rows)-fetchWindow)
		for k := from; k < len(b.rows); k++ {
			if p := b.enc[k]; p != nil {
				c := &b.rows[k]
				c.Data = p.data()
				if c.Type == "tool_call" {
					c.text = chunkText(c.Role, c.Data)
				} else {
					c.text = string(p.text)
				}
				b.enc[k] = nil
			}
		}
		// Rows are only ever appended: the window can share them.
		b.snap = newRowSet(b.rows[from:len(b.rows):len(b.rows)])
	}
	return b.snap
}

// Apply advances the model past one record, the i-th of its trace.
func (b *Backend) Apply(i int, rec Record) {
	b.index = i
	switch rec.Kind {
	case KindSend:
		b.texts[rec.ID] = rec.Text
		if b.la.initiates(rec.ID) {
			b.awaiting = append(b.awaiting, rec.ID)
		}
	case KindWS:
		if ofTab(rec.Ev, b.tab) {
			b.frame(rec.Ev)
		}
	}
}

func (b *Backend) frame(ev *Event) {
	ch := b.turns.frame(b.index, ev, b.tab)
	for _, t := range ch.sealed {
		if t != "" && t == b.turn && t != ch.started {
			b.seal()
		}
	}
	if ch.started != "" && !(ch.implicit && b.started[ch.started]) {
		b.startTurn(ch.started)
		if ch.sealed[0] == ch.started {
			b.seal() // a turn known only by its seal
		}
	}
	switch ev.Type {
	case "message-queued":
		id := b.la.local(ev.MessageID)
		if _, ok := b.texts[id]; !ok {
			b.texts[id] = ev.Message
		}
	case "message-consumed":
		var texts []string
		for _, id := range ev.MessageIDs {
			if t, ok := b.texts[b.la.local(id)]; ok {
				texts = append(texts, t)
			}
		}
		if ev.Reason == "continuation" {
			b.cont = append(b.cont, texts...)
			return
		}
		b.foldInterrupt(strings.Join(texts, continuationSep))
	case "text-delta":
		b.appendText("text", ev.Delta)
	case "reasoning-delta":
		b.appendText("thinking", ev.Delta)
	case "tool-call":
		if ev.ToolCall != nil {
			p := b.add(RoleAssistant, "tool_call")
			p.callID, p.name, p.args = ev.ToolCall.ID, ev.ToolCall.Name, ev.ToolCall.Arguments
			if len(p.args) == 0 {
				p.args = json.RawMessage("null")
			}
		}
	case "tool-result":
		if ev.ToolResult != nil {
			p := b.add(RoleTool, "tool_result")
			p.callID, p.isError = ev.ToolResult.ToolCallID, ev.ToolResult.IsError
			p.text = append(p.text, rawText(ev.ToolResult.Result)...)
		}
	case "error":
		p := b.add(RoleAssistant, "error")
		p.text = append(p.text, rawText(ev.Error)...)
	case "done":
		b.step++
		b.newText = true
	}
}

func (b *Backend) write(c Chunk, enc *pending) {
	c.Seq = b.seq
	c.ID = "r" + strconv.FormatInt(b.seq, 10)
	c.CreatedAt = b.seq
	c.TabID = b.tab
	b.seq++
	if len(b.rows) >= 4*fetchWindow {
		// Only the last window of rows is ever fetched: the older
		// ones go (windows handed out keep the array they share).
		b.rows = append(make([]Chunk, 0, 4*fetchWindow), b.rows[len(b.rows)-fetchWindow:]...)
		b.enc = append(make([]*pending, 0, 4*fetchWindow), b.enc[len(b.enc)-fetchWindow:]...)
	}
	b.rows = append(b.rows, c)
	b.enc = append(b.enc, enc)
	b.snap = nil
}

func (b *Backend) startTurn(t string) {
	b.seal()
	text := otherClientText
	switch {
	case len(b.cont) > 0:
		text = strings.Join(b.cont, continuationSep)
		b.cont = nil
	case len(b.awaiting) > 0:
		text = b.texts[b.awaiting[0]]
		b.awaiting = b.awaiting[1:]
	}
	b.turn, b.step, b.newText = t, 0, true
	b.started[t] = true
	b.write(Chunk{TurnID: t, Role: RoleUser, Type: "text", Data: appendJSONString(append(make([]byte, 0, len(text)+12), `{"text":`...), text), text: text}, nil)
	b.rows[len(b.rows)-1].Data = append(b.rows[len(b.rows)-1].Data, '}')
}

// add starts a row of the running turn.
func (b *Backend) add(role, typ string) *pending {
	if b.turn == "" {
		return &pending{} // no turn runs: nothing becomes durable
	}
	b.pend = append(b.pend, &pending{Chunk: Chunk{TurnID: b.turn, Step: b.step, Role: role, Type: typ}})
	b.newText = true
	return b.pend[len(b.pend)-1]
}

func (b *Backend) appendText(typ, delta string) {
	if n := len(b.pend); n > 0 && !b.newText && b.pend[n-1].Type == typ {
		b.pend[n-1].text = append(b.pend[n-1].text, delta...)
		return
	}
	p := b.add(RoleAssistant, typ)
	p.text = append(p.text, delta...)
	b.newText = false
}

// foldInterrupt appends consumed texts to the last tool result of the
// running turn (a tool result is created when a trace shows none).
func (b *Backend) foldInterrupt(text string) {
	for i := len(b.pend) - 1; i >= 0; i-- {
		if b.pend[i].Type == "tool_result" {
			b.pend[i].text = append(append(b.pend[i].text, interruptHeader...), text...)
			return
		}
	}
	p := b.add(RoleTool, "tool_result")
	p.text = append(append(p.text, interruptHeader...), text...)
}

// seal writes the running turn's rows with contiguous seqs.
func (b *Backend) seal() {
	if b.turn == "" {
		return
	}
	for _, p := range b.pend {
		b.write(p.Chunk, p)
	}
	b.turn, b.pend = "", b.pend[:0]
}

// appendJSONString appends s as a JSON string, escaped as encoding/json
// escapes it (HTML characters left as they are).
func appendJSONString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 || r == '\u2028' || r == '\u2029' {
				dst = append(dst, s[start:i]...)
				switch r {
				case utf8.RuneError:
					dst = append(dst, `\ufffd`...)
				default:
					dst = append(dst, `\u202`...)
					dst = append(dst, hex[r&0xf])
				}
				start = i + size
			}
			i += size
			continue
		}
		if c >= 0x20 && c != '"' && c != '\\' {
			i++
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
		i++
		start = i
	}
	return append(append(dst, s[start:]...), '"')
}
