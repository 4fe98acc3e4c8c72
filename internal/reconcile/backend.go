package reconcile

import (
	"encoding/json"
	"strconv"
	"strings"
)

// fetchWindow is how many rows a chunk fetch returns: the last 100 non-usage rows.
const fetchWindow = 100

// interruptHeader precedes interrupt texts folded into a tool result.
const interruptHeader = "\n\n[USER INTERRUPT]\nThe user sent this while you were working:\n\n"

// otherClientText is the user row of a turn another client started: this
// client never saw its text.
const otherClientText = "(message from another client)"

// lookahead holds the facts about the server's handling of each message that
// a trace reveals only later: a send is queued at the server if a
// message-queued frame or a "queued" answer names it, and failed if its POST
// was answered with an error. Both the backend model and the truth tracker
// need them to tell which send a turn-start belongs to.
type lookahead struct {
	alias        map[string]string // server message id -> client id
	serverQueued map[string]bool
	failed       map[string]bool
}

func newLookahead(recs []Record, tab string) *lookahead {
	la := &lookahead{alias: map[string]string{}, serverQueued: map[string]bool{}, failed: map[string]bool{}}
	for _, r := range recs {
		if r.Kind == KindHTTP && r.MessageID != "" && r.MessageID != r.ID {
			la.alias[r.MessageID] = r.ID
		}
	}
	for _, r := range recs {
		switch {
		case r.Kind == KindHTTP && r.Status == "queued":
			la.serverQueued[r.ID] = true
		case r.Kind == KindHTTP && r.Status == "error":
			la.failed[r.ID] = true
		case r.Kind == KindWS && r.Ev.Type == "message-queued" && ofTab(r.Ev, tab):
			la.serverQueued[la.local(r.Ev.MessageID)] = true
		}
	}
	return la
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
// durable after each record. A turn's user row is written at its turn-start;
// its assistant and tool rows in one batch when it is sealed, with interrupt
// texts folded into the last tool result. It answers the fetches a trace does
// not record.
type Backend struct {
	la   *lookahead
	tab  string
	rows []Chunk
	seq  int64

	texts    map[string]string // client message id -> text
	awaiting []string          // sends waiting to start a turn, oldest first
	cont     []string          // continuation texts waiting for their turn-start

	turn    string  // running turn, "" when idle
	step    int     // step of the running turn
	pend    []Chunk // the running turn's rows, written when it is sealed
	newText bool    // the next delta starts a new text row
}

// NewBackend returns the backend model for the records of a trace about tab.
func NewBackend(recs []Record, tab string) *Backend {
	return &Backend{la: newLookahead(recs, tab), tab: tab, texts: map[string]string{}}
}

// Rows returns the durable rows a chunk fetch would return now.
func (b *Backend) Rows() []Chunk {
	from := max(0, len(b.rows)-fetchWindow)
	return append([]Chunk(nil), b.rows[from:]...)
}

// Apply advances the model past one record.
func (b *Backend) Apply(rec Record) {
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
	case "turn-start":
		b.startTurn(ev.TurnID)
	case "text-delta":
		b.appendText("text", ev.Delta)
	case "reasoning-delta":
		b.appendText("thinking", ev.Delta)
	case "tool-call":
		if ev.ToolCall != nil {
			b.add(RoleAssistant, "tool_call", map[string]any{"toolCallId": ev.ToolCall.ID, "name": ev.ToolCall.Name, "arguments": ev.ToolCall.Arguments})
		}
	case "tool-result":
		if ev.ToolResult != nil {
			b.add(RoleTool, "tool_result", map[string]any{"toolCallId": ev.ToolResult.ToolCallID, "result": rawText(ev.ToolResult.Result), "isError": ev.ToolResult.IsError})
		}
	case "error":
		b.add(RoleAssistant, "error", map[string]any{"error": rawText(ev.Error)})
	case "done":
		b.step++
		b.newText = true
	case "turn-sealed":
		b.seal()
	case "statuses":
		if s, ok := ev.Statuses[b.tab]; ok && s.Status != StatusRunning {
			b.seal()
		}
	}
}

func (b *Backend) write(c Chunk) {
	c.Seq = b.seq
	c.ID = "r" + strconv.FormatInt(b.seq, 10)
	c.CreatedAt = b.seq
	c.TabID = b.tab
	b.seq++
	b.rows = append(b.rows, c)
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
	b.write(Chunk{TurnID: t, Role: RoleUser, Type: "text", Data: mustJSON(map[string]string{"text": text})})
}

func (b *Backend) add(role, typ string, data map[string]any) {
	b.pend = append(b.pend, Chunk{TurnID: b.turn, Step: b.step, Role: role, Type: typ, Data: mustJSON(data)})
	b.newText = true
}

func (b *Backend) appendText(typ, delta string) {
	if n := len(b.pend); n > 0 && !b.newText && b.pend[n-1].Type == typ {
		var d map[string]string
		if json.Unmarshal(b.pend[n-1].Data, &d) == nil {
			b.pend[n-1].Data = mustJSON(map[string]string{"text": d["text"] + delta})
			return
		}
	}
	b.pend = append(b.pend, Chunk{TurnID: b.turn, Step: b.step, Role: RoleAssistant, Type: typ, Data: mustJSON(map[string]string{"text": delta})})
	b.newText = false
}

// foldInterrupt appends consumed texts to the last tool result of the
// running turn (a tool result is created when a trace shows none).
func (b *Backend) foldInterrupt(text string) {
	for i := len(b.pend) - 1; i >= 0; i-- {
		if b.pend[i].Type != "tool_result" {
			continue
		}
		var d map[string]any
		if json.Unmarshal(b.pend[i].Data, &d) == nil {
			res, _ := d["result"].(string)
			d["result"] = res + interruptHeader + text
			b.pend[i].Data = mustJSON(d)
			return
		}
	}
	b.add(RoleTool, "tool_result", map[string]any{"toolCallId": "", "result": interruptHeader + text, "isError": false})
}

// seal writes the running turn's rows with contiguous seqs.
func (b *Backend) seal() {
	if b.turn == "" {
		return
	}
	for _, c := range b.pend {
		b.write(c)
	}
	b.turn, b.pend = "", nil
}

// mustJSON encodes values built from strings, bools, numbers and raw JSON.
func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage(`null`)
	}
	return b
}
