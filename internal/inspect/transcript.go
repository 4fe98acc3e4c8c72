package inspect

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/dshctl/dshctl/internal/seam"
	"github.com/dshctl/dshctl/internal/termui"
	"github.com/mattn/go-runewidth"
)

// DefaultTranscriptWidth is the line width a Transcript uses when
// TranscriptOptions.Width is 0.
const DefaultTranscriptWidth = 100

// TranscriptOptions tune a Transcript.
type TranscriptOptions struct {
	// Width caps the one-line renderings (tool calls, tool results,
	// reasoning) and the rules, in runes: 0 means DefaultTranscriptWidth, a
	// negative value means no cap.
	Width int
	// Wrap wraps the text of prompts and replies (and other messages) at
	// Width columns, for a terminal: continuation lines are indented like
	// a message's later lines.
	Wrap bool
	// Color adds ANSI colours; callers set it only for a terminal without
	// NO_COLOR.
	Color bool
	// Location is the zone of the times in turn headers; nil means UTC.
	Location *time.Location
	// Context, when it ends, stops the rendering, also inside an event:
	// Render then returns its error. Nil means context.Background().
	Context context.Context
}

// Transcript is a Sink that renders a session as a readable conversation
// for `cat -o text`: a heading, turn headers, prompts, assistant text, tool
// calls and results, errors, titles, compactions, and one line for each
// event of a plugin's type. The other dsh events (chunks, steps, requests)
// are passed over. Its state is bounded by one turn.
type Transcript struct {
	w     io.Writer
	o     TranscriptOptions
	width int // < 0: no cap
	rule  int
	buf   []byte
	// names maps the current turn's call ids to tool names; shown holds the
	// ids already rendered from an assistant/message, so the tool/call that
	// follows is not rendered twice.
	names map[string]string
	shown map[string]bool
	wrote bool
	ctx   context.Context
	err   error // of the event being rendered: the context's end or a write
	// open is the turn started and not ended yet, -1 for none; markOpen
	// says End marks it (MarkOpenTurn).
	open     int64
	markOpen bool
}

// NewTranscript returns a Transcript writing to w.
func NewTranscript(w io.Writer, o TranscriptOptions) *Transcript {
	t := &Transcript{w: w, o: o, width: o.Width, names: map[string]string{}, shown: map[string]bool{}, open: -1}
	if t.width == 0 {
		t.width = DefaultTranscriptWidth
	}
	t.rule = 80
	if t.width > 0 {
		t.rule = min(t.width, 80)
	}
	if t.o.Location == nil {
		t.o.Location = time.UTC
	}
	t.ctx = o.Context
	if t.ctx == nil {
		t.ctx = context.Background()
	}
	return t
}

// Header writes the heading of the transcript of the session h heads:
// its id, format and creation time, then its project and parent, if any.
func (t *Transcript) Header(h *seam.Header) error {
	b := fmt.Appendf(nil, "session %s  v%d  created %s\n", h.ID, h.Version,
		time.UnixMilli(h.CreatedAt).UTC().Format(time.RFC3339))
	if h.Cwd != "" {
		b = fmt.Appendf(b, "project %s\n", h.Cwd)
	}
	if h.ParentSession != "" {
		b = fmt.Appendf(b, "parent  %s\n", h.ParentSession)
	}
	_, err := t.w.Write(b)
	return err
}

// Event renders e (Sink).
func (t *Transcript) Event(e *seam.Event) error { return t.Render(e) }

// Closers marks where n synthetic closers start, when there are any.
func (t *Transcript) Closers(n int) error {
	if n == 0 {
		return nil
	}
	_, err := io.WriteString(t.w, "\n[synthetic closers: what dsh's resume would append; not stored]\n")
	return err
}

// MarkOpenTurn makes End say that the last turn is open, when it has no
// turn/end: for a transcript of the whole log to its end (a filter that
// leaves out a turn/end, or a follow, would make any turn look open).
func (t *Transcript) MarkOpenTurn() { t.markOpen = true }

// End closes the transcript: with MarkOpenTurn, a line saying the last
// turn is open.
func (t *Transcript) End() error {
	if !t.markOpen || t.open < 0 {
		return nil
	}
	t.buf = t.buf[:0]
	t.styled(termui.Yellow, t.cut("── turn "+strconv.FormatInt(t.open, 10)+" is open: no turn/end yet; dsh closes it on resume (dshctl append --close-interrupted) ──"))
	t.nl()
	_, err := t.w.Write(t.buf)
	return err
}

// Flush flushes the writer, if it buffers.
func (t *Transcript) Flush() error {
	if f, ok := t.w.(interface{ Flush() error }); ok {
		return f.Flush()
	}
	return nil
}

// Render writes the lines for e, if any, with a single Write, but for a
// text longer than flushBytes, which is written as it is rendered.
func (t *Transcript) Render(e *seam.Event) error {
	if err := t.ctx.Err(); err != nil {
		return err
	}
	t.buf, t.err = t.buf[:0], nil
	t.replaced(e)
	switch e.Type {
	case typeTurnStart:
		t.turnStart(e)
	case typeTurnEnd:
		t.turnEnd(e)
	case typeUserMessage:
		var m message
		if decode(e.Data, &m) {
			t.user(&m)
		}
	case typeAssistantMessage:
		t.assistant(e)
	case typeToolCall:
		var d toolCallPayload
		if json.Unmarshal(e.Data, &d) == nil {
			t.names[d.CallID] = d.Name
			if !t.shown[d.CallID] {
				t.call(d.Name, d.Arguments)
			}
		}
	case typeToolResult:
		t.toolResult(e)
	case typeSystemMessage, typeDeveloperMessage:
		t.other(e)
	case typeSessionTitle:
		var d struct{ Title string }
		if json.Unmarshal(e.Data, &d) == nil {
			t.labelled("title", termui.Blue, t.headText(d.Title))
		}
	case typeEndSeed:
		// v2+ marks the end of a fork's inherited events with inherited:
		// true; the plain marker (and every v0 one) also follows a resume.
		s := "── session/end-seed ──"
		if bytes.Contains(e.Data, []byte(`"inherited":true`)) {
			s = "── end of inherited events ──"
		}
		t.styled(termui.Dim, s)
		t.nl()
	case typeSubagent:
		var d struct{ Label, Mode string }
		if json.Unmarshal(e.Data, &d) == nil && d.Label != "" {
			t.styled(termui.Dim, "subagent: "+clean(d.Label)+modeSuffix(d.Mode))
			t.nl()
		}
	default:
		// A type outside dsh's vocabulary comes from a plugin: show that it
		// happened, since nothing else would.
		if !seam.KnownType(seam.MaxVersion, e.Type) && !seam.KnownType(0, e.Type) {
			t.styled(termui.Dim, t.line("· "+clean(e.Type)+" ", t.head(e.Data)))
			t.nl()
		}
	}
	if t.err == nil {
		t.err = t.ctx.Err() // a wrap stops there too
	}
	if t.err != nil {
		return t.err
	}
	if len(t.buf) == 0 {
		return nil
	}
	t.wrote = true
	_, err := t.w.Write(t.buf)
	return err
}

func modeSuffix(mode string) string {
	if mode == "" {
		return ""
	}
	return " (" + clean(mode) + ")"
}

func (t *Transcript) turnStart(e *seam.Event) {
	clear(t.names)
	clear(t.shown)
	var d turnStep
	_ = json.Unmarshal(e.Data, &d)
	if t.wrote {
		t.nl()
	}
	head := "── turn " + strconv.FormatInt(d.Turn, 10) + " · " +
		time.UnixMilli(e.Time).In(t.o.Location).Format("2006-01-02 15:04:05 MST") + " "
	if n := t.rule - utf8.RuneCountInString(head); n > 2 {
		head += strings.Repeat("─", n)
	} else {
		head += "──"
	}
	t.styled(termui.Bold, head)
	t.nl()
	t.open = d.Turn
}

// turnEnd is silent for a completed turn and shows every other reason as an
// error rule.
func (t *Transcript) turnEnd(e *seam.Event) {
	var d turnEnd
	_ = json.Unmarshal(e.Data, &d)
	t.open = -1
	r := d.Reason
	if r.Kind == "completed" {
		return
	}
	s := "── turn " + strconv.FormatInt(d.Turn, 10) + " " + clean(r.Kind)
	if r.Reason.Kind != "" {
		s += " (" + clean(r.Reason.Kind) + ")"
	}
	if r.Error.Code != "" {
		s += " " + clean(r.Error.Code)
	}
	if r.Error.Message != "" {
		s += ": " + oneLine(t.headText(r.Error.Message))
	}
	t.styled(termui.Red, t.cut(s+" ──"))
	t.nl()
}

// replaced announces a surface event that replaces earlier ones, like a
// compaction summary replacing the messages it shadows.
func (t *Transcript) replaced(e *seam.Event) {
	if len(e.SurfaceOp) == 0 || e.SurfaceOp[0] != '{' {
		return
	}
	var op struct {
		Start, End, StartSeq, EndSeq *int64
	}
	if json.Unmarshal(e.SurfaceOp, &op) != nil {
		return
	}
	start, end := op.Start, op.End
	if op.StartSeq != nil {
		start, end = op.StartSeq, op.EndSeq
	}
	if start == nil || end == nil {
		return
	}
	t.styled(termui.Dim, "── replaces seqs "+strconv.FormatInt(*start, 10)+"–"+strconv.FormatInt(*end, 10)+" ──")
	t.nl()
}

func (t *Transcript) user(m *message) {
	label := "user"
	if k := m.Source.Kind; k != "" && k != "user" {
		label += " (" + clean(k)
		if m.Source.Plugin != "" {
			label += " " + clean(m.Source.Plugin)
		}
		label += ")"
	}
	t.labelled(label, termui.Cyan, contentText(m.Content))
}

func (t *Transcript) assistant(e *seam.Event) {
	var d assistantPayload
	if !decode(e.Data, &d) {
		return
	}
	for _, b := range d.Message.Content {
		switch b.Type {
		case "text":
			if b.Text != "" {
				t.labelled("assistant", termui.Green, b.Text)
			}
		case "reasoning":
			t.styled(termui.Dim, t.line("  thinking: ", b.Text))
			t.nl()
		case "tool-call":
			t.names[b.ID], t.shown[b.ID] = b.Name, true
			t.call(b.Name, b.Arguments)
		}
	}
	if d.Interrupted {
		t.styled(termui.Dim, "  (interrupted)")
		t.nl()
	}
}

func (t *Transcript) call(name, args string) {
	t.styled(termui.Yellow, t.line("  → "+clean(name)+" ", args))
	t.nl()
}

func (t *Transcript) toolResult(e *seam.Event) {
	data := e.Data
	if t.width >= 0 {
		// Only the head of a result is shown (line): a long one is decoded
		// from a copy with its texts cut to that head.
		if small := shrinkTexts(data, 8*t.width); small != nil {
			data = small
		}
	}
	t.toolResultOf(data)
}

// toolResultOf renders the tool/result payload data.
func (t *Transcript) toolResultOf(data []byte) {
	var d toolResultPayload
	if !decode(data, &d) {
		return
	}
	m := &d.Message
	content, isErr := m.Content, m.IsError
	if m.Role != "tool" {
		// v0–v3: the result sits in a tool-result block.
		for _, b := range content {
			if b.Type == "tool-result" {
				content, isErr = b.Content, b.IsError
				break
			}
		}
	}
	name := t.names[m.callID()]
	if name == "" {
		name = "tool"
	}
	mark := "  ← "
	var style termui.Style // none
	if isErr || d.Error != nil {
		mark, style = "  ✗ ", termui.Red
	}
	s := mark + clean(name)
	if d.Error != nil && d.Error.Code != "" {
		s += " " + clean(d.Error.Code)
	}
	if text := contentText(content); strings.TrimSpace(text) != "" {
		s = t.line(s+": ", text)
	} else {
		s = t.cut(s + " (no output)")
	}
	t.styled(style, s)
	t.nl()
}

// other renders system and developer messages, whose payload is the message
// or holds it under "message".
func (t *Transcript) other(e *seam.Event) {
	var d struct {
		Message *message `json:"message"`
	}
	if !decode(e.Data, &d) {
		return
	}
	m := d.Message
	if m == nil {
		m = new(message)
		if !decode(e.Data, m) {
			return
		}
	}
	if text := contentText(m.Content); text != "" {
		t.labelled(strings.TrimSuffix(e.Type, "/message"), termui.Dim, text)
	}
}

// contentText joins the text of content blocks with newlines, naming the
// blocks that have no text.
func contentText(bs []block) string {
	var sb strings.Builder
	for _, b := range bs {
		var s string
		switch b.Type {
		case "text":
			s = b.Text
		case "image", "file":
			s = "[" + b.Type + "]"
		default:
			continue
		}
		if sb.Len() > 0 {
			sb.WriteByte('\n')
		}
		sb.WriteString(s)
	}
	return sb.String()
}

// labelled writes "label: text", indenting the text's later lines, and
// with Wrap wrapping every line at the width. Its cost is linear in the
// text, which a log does not bound: a long one is written out as it is
// rendered (see more), and the rendering stops when the context ends.
func (t *Transcript) labelled(label string, style termui.Style, text string) {
	t.styled(style, label+":")
	text = clean(strings.TrimRight(text, "\n"))
	col := runewidth.StringWidth(label) + 1
	for i := 0; text != "" || i == 0; i++ {
		line, rest, _ := strings.Cut(text, "\n")
		text = rest
		indent := " "
		if i > 0 {
			t.nl()
			indent, col = "  ", 0
		}
		if !t.more() {
			return
		}
		if line == "" {
			continue
		}
		if !t.o.Wrap || t.width < 0 {
			t.buf = append(t.buf, indent...)
			t.buf = append(t.buf, line...)
			continue
		}
		j := 0
		for part := range wrap(t.ctx, line, t.width-col-len(indent), t.width-2) {
			if j > 0 {
				t.nl()
				indent = "  "
			}
			j++
			t.buf = append(t.buf, indent...)
			t.buf = append(t.buf, part...)
			if !t.more() {
				return
			}
		}
	}
	t.nl()
}

// wrap yields the parts of line no wider than first columns for the first
// part and rest for the others, cut at spaces where it can, mid-word where
// a word is wider than a line; a rune wider than a line is a part of its
// own. Tabs become spaces, so that widths are known. Widths are summed
// rune by rune (runewidth.RuneWidth) in one pass per part, so the cost is
// linear in the line; a cluster of several visible runes (an emoji
// sequence) counts as their sum, a safe guess at its width. The end of ctx
// stops it, also inside a long part.
func wrap(ctx context.Context, line string, first, rest int) iter.Seq[string] {
	return func(yield func(string) bool) {
		line := strings.ReplaceAll(line, "\t", "    ")
		limit, yielded := max(first, 1), false
		for {
			// cut: the first rune past the limit (-1: the rest fits);
			// lastSpace: the last space before it.
			cut, lastSpace, w, n := -1, -1, 0, 0
			for i, r := range line {
				if n++; n%(1<<16) == 0 && ctx.Err() != nil {
					return
				}
				rw := runewidth.RuneWidth(r)
				if w+rw > limit {
					cut = i
					break
				}
				if r == ' ' {
					lastSpace = i
				}
				w += rw
			}
			if cut < 0 {
				break
			}
			if cut == 0 {
				_, cut = utf8.DecodeRuneInString(line)
			}
			part, next := line[:cut], line[cut:]
			if lastSpace > 0 && next[0] != ' ' {
				part, next = line[:lastSpace], line[lastSpace:]
			}
			yielded = true
			if !yield(strings.TrimRight(part, " ")) {
				return
			}
			line = strings.TrimLeft(next, " ")
			limit = max(rest, 1)
		}
		if line != "" || !yielded {
			yield(line)
		}
	}
}

// flushBytes is how much of one event's rendering is held before it is
// written out: an event is one Write unless its text is longer.
const flushBytes = 64 << 10

// more is called after each line of a long text: it reports whether
// rendering goes on (false once the context ended or a write failed, the
// error kept in t.err), and writes out what is rendered once there is
// flushBytes of it.
func (t *Transcript) more() bool {
	if t.err == nil {
		t.err = t.ctx.Err()
	}
	if t.err == nil && len(t.buf) >= flushBytes {
		_, t.err = t.w.Write(t.buf)
		t.buf = t.buf[:0]
	}
	return t.err == nil
}

func (t *Transcript) styled(style termui.Style, s string) {
	if t.o.Color && style != "" && s != "" {
		t.buf = termui.AppendStyled(t.buf, style, s)
		return
	}
	t.buf = append(t.buf, s...)
}

func (t *Transcript) nl() { t.buf = append(t.buf, '\n') }

// cut shortens s to the width, ending it with "…" when something is left out.
func (t *Transcript) cut(s string) string {
	if t.width < 0 || utf8.RuneCountInString(s) <= t.width {
		return s
	}
	return ellipsis(prefixRunes(s, t.width-1))
}

// line returns prefix and text on one line, cut to the width. Only the head
// of a long text is looked at, so a huge tool result costs no more than a
// short one.
func (t *Transcript) line(prefix, text string) string {
	if t.width < 0 {
		return prefix + oneLine(text)
	}
	head := prefixRunes(text, 8*t.width)
	s := t.cut(prefix + oneLine(head))
	if len(head) < len(text) && !strings.HasSuffix(s, "…") {
		s = ellipsis(prefixRunes(s, t.width-1))
	}
	return s
}

// headText returns the head of a text that is shown whole when short (a
// title, an error message): with a capped width, its first 8 lines' worth
// of runes, ended by "…" when that leaves something out.
func (t *Transcript) headText(s string) string {
	if t.width < 0 {
		return s
	}
	if head := prefixRunes(s, 8*t.width); len(head) < len(s) {
		return ellipsis(head)
	}
	return s
}

// head returns what line needs of b as text: all of it, or, when the width
// is capped, enough bytes to hold the runes line looks at and one more.
func (t *Transcript) head(b []byte) string {
	if n := 4 * (8*t.width + 1); t.width >= 0 && len(b) > n {
		b = b[:n]
	}
	return string(b)
}

// prefixRunes returns the first n runes of s.
func prefixRunes(s string, n int) string {
	for i := range s {
		if n == 0 {
			return s[:i]
		}
		n--
	}
	return s
}

func ellipsis(s string) string { return strings.TrimRight(s, " ") + "…" }

// oneLine collapses every run of white space in s to one space, after
// clean.
func oneLine(s string) string {
	return strings.Join(strings.Fields(clean(s)), " ")
}

// clean makes log text safe for a terminal: "\r\n" becomes "\n", and every
// other control character (escape sequences included) becomes U+FFFD, so a
// log cannot move the cursor or recolour the screen.
func clean(s string) string {
	if !hasControl(s) {
		return s
	}
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.Map(func(r rune) rune {
		if r != '\n' && r != '\t' && unicode.IsControl(r) {
			return utf8.RuneError
		}
		return r
	}, s)
}

// hasControl reports whether s holds a control character other than "\n"
// and "\t" (unicode.IsControl: C0, DEL and C1, which UTF-8 encodes as
// 0xC2 0x80–0x9F). It looks at bytes, not runes: several times faster on
// the megabytes of a long message.
func hasControl(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x20 && c != '\n' && c != '\t', c == 0x7f:
			return true
		case c == 0xc2 && i+1 < len(s) && s[i+1] >= 0x80 && s[i+1] <= 0x9f:
			return true
		}
	}
	return false
}
