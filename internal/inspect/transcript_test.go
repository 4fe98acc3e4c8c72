package inspect

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/dshctl/dshctl/internal/cputime"
	"github.com/dshctl/dshctl/internal/fixture"
	"github.com/dshctl/dshctl/internal/seam"
	"github.com/mattn/go-runewidth"
)

var update = flag.Bool("update", false, "rewrite the golden transcripts in testdata/")

func render(t testing.TB, o TranscriptOptions, events []seam.Event) string {
	t.Helper()
	var b bytes.Buffer
	tr := NewTranscript(&b, o)
	for i := range events {
		if err := tr.Render(&events[i]); err != nil {
			t.Fatal(err)
		}
	}
	return b.String()
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "transcript", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs (go test -update rewrites it):\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

// TestTranscriptGolden renders real logs of every format version.
func TestTranscriptGolden(t *testing.T) {
	v2v4 := fixture.Path(t, "dsh-v2-v4")
	open := fixtureEvents(t, openTailID)
	cases := []struct {
		name   string
		o      TranscriptOptions
		events func() []seam.Event
	}{
		{"tools-aborted.txt", TranscriptOptions{Width: 80}, func() []seam.Event {
			return fixtureEvents(t, "session-4f1c2a9e-8b3d-4e6f-a1c2-7d9e0b1f2a3c")
		}},
		{"compaction.txt", TranscriptOptions{}, func() []seam.Event {
			return fixtureEvents(t, "session-2c3d4e5f-6071-4829-9abc-def012345678")
		}},
		{"fork.txt", TranscriptOptions{}, func() []seam.Event {
			return fixtureEvents(t, "session-6e7f8091-0213-4b4c-9d5e-6f7081920314")
		}},
		{"plugin-unicode.txt", TranscriptOptions{Width: 40}, func() []seam.Event {
			return append(fixtureEvents(t, "task_review_01___x"), fixtureEvents(t, "session-9e8d7c6b-5a49-4382-a716-05f4e3d2c1b0")...)
		}},
		{"subagent.txt", TranscriptOptions{}, func() []seam.Event {
			return fixtureEvents(t, "session-c3d4e5f6-a7b8-4c9d-8e0f-1a2b3c4d5e6f")
		}},
		{"interrupted-closers.txt", TranscriptOptions{Width: 72}, func() []seam.Event {
			return append(open, track(0, open).Closers()...)
		}},
		{"interrupted-closers-color.txt", TranscriptOptions{Width: 72, Color: true, Location: time.FixedZone("CEST", 2*3600)}, func() []seam.Event {
			return append(open, track(0, open).Closers()...)
		}},
		{"v3-showcase.txt", TranscriptOptions{Width: 100}, func() []seam.Event {
			_, es := readLines(t, filepath.Join(v2v4, "--dsh-workspace--", "preview-showcase", "session.v3.jsonl"), 3)
			return es
		}},
		{"v3-seeded-subagent-tail.txt", TranscriptOptions{}, func() []seam.Event {
			_, es := readLines(t, filepath.Join(v2v4, "--dsh-workspace--", "preview-architecture-review", "session.v3.jsonl"), 3)
			return es[len(es)-12:]
		}},
		{"v4-plugin-types.txt", TranscriptOptions{}, func() []seam.Event {
			_, es := readLines(t, filepath.Join(v2v4, "_no-cwd", "legacy-sdk-history", "session.v4.jsonl"), 4)
			return es
		}},
		{"v4-tool-messages.txt", TranscriptOptions{Width: 90}, func() []seam.Event { return v4Turn() }},
		{"errors.txt", TranscriptOptions{Width: 90}, func() []seam.Event { return errorTurns() }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := render(t, c.o, c.events())
			golden(t, c.name, got)
			if !c.o.Color && strings.Contains(got, "\x1b") {
				t.Error("escape sequence without Color")
			}
		})
	}
}

// v4Turn is a v4 turn with tool messages, an error result, reasoning, a
// system message and an interrupted closer.
func v4Turn() []seam.Event {
	events := []seam.Event{
		ev(0, 1790000000000, "turn/start", `{"turn":1}`),
		ev(1, 1790000000001, "system/message", `{"turn":1,"step":1,"message":{"id":"s","role":"system","content":[{"type":"text","text":"Be brief."}],"source":{"kind":"system"}}}`),
		ev(2, 1790000000002, "user/message", `{"id":"u","role":"user","content":[{"type":"text","text":"Look at this:"},{"type":"image","attachment":{"id":"a"}}],"source":{"kind":"user"}}`),
		ev(3, 1790000000003, "step/start", `{"turn":1,"step":1}`),
		ev(4, 1790000000004, "assistant/message", `{"turn":1,"step":1,"message":{"id":"m","role":"assistant","content":[`+
			`{"type":"reasoning","text":"The user shows an image.\nI should list the files and then read the biggest one, carefully, without guessing."},`+
			`{"type":"text","text":"Checking.\n\nTwo calls:"},`+
			`{"type":"tool-call","id":"c1","name":"ls","arguments":"{\"path\":\".\"}"},`+
			`{"type":"tool-call","id":"c2","name":"cat","arguments":"{\"path\":\"big.bin\"}"},`+
			`{"type":"tool-call","id":"c3","name":"rm","arguments":"{\"path\":\"tmp\"}"}]}}`),
		ev(5, 1790000000005, "tool/call", `{"turn":1,"step":1,"callId":"c1","name":"ls","arguments":"{\"path\":\".\"}"}`),
		ev(6, 1790000000006, "tool/result", `{"turn":1,"step":1,"message":{"id":"r1","role":"tool","toolCallId":"c1","source":{"kind":"tool","callId":"c1"},"content":[{"type":"text","text":"a.txt\nbig.bin\n\u001b[31mred\u001b[0m"}]}}`),
		ev(7, 1790000000007, "tool/call", `{"turn":1,"step":1,"callId":"c2","name":"cat","arguments":"{\"path\":\"big.bin\"}"}`),
		ev(8, 1790000000008, "tool/result", `{"turn":1,"step":1,"message":{"id":"r2","role":"tool","toolCallId":"c2","isError":true,"source":{"kind":"tool","callId":"c2"},"content":[{"type":"text","text":"binary file"}]}}`),
		ev(9, 1790000000009, "tool/call", `{"turn":1,"step":1,"callId":"c3","name":"rm","arguments":"{\"path\":\"tmp\"}"}`),
		ev(10, 1790000000010, "tool/call", `{"turn":1,"step":1,"callId":"late","name":"echo","arguments":"{}"}`),
		ev(11, 1790000000011, "developer/message", `{"id":"d","role":"developer","content":[{"type":"text","text":"note"}],"source":{"kind":"developer"}}`),
	}
	return append(events, track(4, events).Closers()...)
}

// errorTurns has failed turns, a result whose content is a plain string,
// a v3 replace and a resume marker.
func errorTurns() []seam.Event {
	events := []seam.Event{
		ev(0, 1787000000000, "turn/start", `{"turn":1}`),
		prompt(1, 1787000000001, "user"),
		ev(2, 1787000000002, "tool/call", `{"turn":1,"step":1,"callId":"c","name":"fetch","arguments":"{\"url\":\"https://example.com\"}"}`),
		ev(3, 1787000000003, "tool/result", `{"turn":1,"step":1,"message":{"id":"r","role":"user","source":{"kind":"tool","callId":"c"},"content":[{"type":"tool-result","toolCallId":"c","isError":true,"content":"HTTP 503\nretry later"}]}}`),
		ev(4, 1787000000004, "turn/end", `{"turn":1,"reason":{"kind":"error","error":{"message":"provider 500: boom","code":"SERVER","status":500}}}`),
		ev(5, 1787000000005, "session/end-seed", `{}`),
		ev(6, 1787000000006, "turn/start", `{"turn":2}`),
		ev(7, 1787000000007, "assistant/message", `{"turn":2,"step":1,"message":{"id":"a","role":"assistant","content":[{"type":"text","text":"Summary of turn 1."}]}}`),
		ev(8, 1787000000008, "turn/end", `{"turn":2,"reason":{"kind":"max-tokens"}}`),
	}
	events[7].SurfaceOp = json.RawMessage(`{"op":"replace","startSeq":1,"endSeq":3}`)
	return events
}

func TestTranscriptWidth(t *testing.T) {
	long := strings.Repeat("é", 50)
	events := []seam.Event{
		ev(0, 0, "tool/call", `{"turn":1,"step":1,"callId":"c","name":"t","arguments":"`+long+`"}`),
	}
	// Only the head of a long text is read, and what is left out is marked.
	spaced := []seam.Event{
		ev(0, 0, "tool/call", `{"turn":1,"step":1,"callId":"c","name":"t","arguments":"a`+strings.Repeat(" ", 2000)+`b"}`),
	}
	if got := render(t, TranscriptOptions{Width: 20}, spaced); got != "  → t a…\n" {
		t.Errorf("spaced: %q", got)
	}
	for _, c := range []struct {
		width int
		want  string
	}{
		{10, "  → t ééé…\n"},
		{-1, "  → t " + long + "\n"},
		{0, "  → t " + long + "\n"},
	} {
		if got := render(t, TranscriptOptions{Width: c.width}, events); got != c.want {
			t.Errorf("width %d: %q, want %q", c.width, got, c.want)
		}
	}
}

// TestTranscriptSafe: text from a log never reaches the terminal as control
// sequences, and undecodable payloads are passed over.
func TestTranscriptSafe(t *testing.T) {
	events := []seam.Event{
		prompt(0, 0, "user"),
		ev(1, 0, "user/message", `{"content":[{"type":"text","text":"a\u001b]0;pwned\u0007b\r\nc"}],"source":{"kind":"user"}}`),
		ev(2, 0, "assistant/message", `{"turn":"x"}`),
		ev(3, 0, "tool/result", `[]`),
		ev(4, 0, "turn/start", `{}`),
	}
	got := render(t, TranscriptOptions{}, events)
	want := "user: hi\nuser: a\uFFFD]0;pwned\uFFFDb\n  c\n\n── turn 0 · 1970-01-01 00:00:00 UTC " + strings.Repeat("─", 44) + "\n"
	if got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, os.ErrClosed }

func TestTranscriptWriteError(t *testing.T) {
	tr := NewTranscript(failWriter{}, TranscriptOptions{})
	skip := ev(0, 0, "step/start", `{"turn":1,"step":1}`)
	if err := tr.Render(&skip); err != nil {
		t.Errorf("silent event: %v", err)
	}
	e := prompt(1, 0, "user")
	if err := tr.Render(&e); err == nil {
		t.Error("write error not returned")
	}
}

func TestWrap(t *testing.T) {
	for _, c := range []struct {
		line        string
		first, rest int
		want        []string
	}{
		{"short", 10, 10, []string{"short"}},
		{"the quick brown fox jumps", 10, 10, []string{"the quick", "brown fox", "jumps"}},
		{"the quick brown", 4, 20, []string{"the", "quick brown"}},
		{"abcdefghijklmnop", 5, 5, []string{"abcde", "fghij", "klmno", "p"}},
		{"日本語の文章です", 6, 6, []string{"日本語", "の文章", "です"}},
		{"a\tb", 3, 3, []string{"a", "b"}},
		{"", 5, 5, []string{""}},
		{"   ", 5, 5, []string{"   "}},
		{"ab      ", 2, 2, []string{"ab"}},
		// A rune wider than the line is a part of its own (it was the
		// whole rest of the line).
		{"日本語", 1, 1, []string{"日", "本", "語"}},
		{"a 日本", 1, 3, []string{"a", "日", "本"}},
	} {
		if got := slices.Collect(wrap(context.Background(), c.line, c.first, c.rest)); !slices.Equal(got, c.want) {
			t.Errorf("wrap(%q, %d, %d) = %q, want %q", c.line, c.first, c.rest, got, c.want)
		}
	}
}

func TestTranscriptWraps(t *testing.T) {
	var b bytes.Buffer
	tr := NewTranscript(&b, TranscriptOptions{Width: 20, Wrap: true})
	e := seam.Event{Type: "user/message", Data: []byte(`{"role":"user","content":[{"type":"text","text":"please summarize what the build script does\nthanks"}],"source":{"kind":"user"}}`)}
	if err := tr.Render(&e); err != nil {
		t.Fatal(err)
	}
	want := "user: please\n  summarize what the\n  build script does\n  thanks\n"
	if b.String() != want {
		t.Errorf("wrapped prompt:\n%s\nwant\n%s", b.String(), want)
	}
	for _, line := range strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n") {
		if len(line) > 20 {
			t.Errorf("line %q is wider than 20 columns", line)
		}
	}
}

// wrapBefore is wrap as it was before it was made linear: it measured the
// rest of the line (runewidth.StringWidth, by grapheme cluster) once per
// part, quadratic in the line. It is the reference wrap must match.
func wrapBefore(line string, first, rest int) []string {
	line = strings.ReplaceAll(line, "\t", "    ")
	var parts []string
	limit := max(first, 1)
	for runewidth.StringWidth(line) > limit {
		cut, lastSpace, w := 0, -1, 0
		for i, r := range line {
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
		if cut == 0 {
			cut = len(line)
		}
		part, next := line[:cut], line[cut:]
		if lastSpace > 0 && !strings.HasPrefix(next, " ") {
			part, next = line[:lastSpace], line[lastSpace:]
		}
		parts = append(parts, strings.TrimRight(part, " "))
		line = strings.TrimLeft(next, " ")
		limit = max(rest, 1)
	}
	if line != "" || len(parts) == 0 {
		parts = append(parts, line)
	}
	return parts
}

// wrapAlphabet is what the random lines are made of: ASCII words and runs
// of spaces, tabs, wide CJK and Hangul, an emoji, combining marks (alone
// and after a space), a control character as a log may hold it and
// U+FFFD, as clean leaves one.
var wrapAlphabet = []string{"a", "bc", "defgh", "ijklmnopqrstuvwxyz", " ", "  ", "\t", "日", "本語", "한국어", "😀",
	"e\u0301", "\u0308", " \u0301", "\x1b", "\ufffd", "é", "Ω", "-", "."}

// TestWrapAsBefore: wrap cuts every line as the quadratic wrap did, for
// widths of 2 columns and more (at 1, a wide rune now is a part of its own
// instead of leaving the line unwrapped).
func TestWrapAsBefore(t *testing.T) {
	rng := rand.New(rand.NewPCG(16, 433))
	for n := range 20000 {
		var b strings.Builder
		for range rng.IntN(60) {
			b.WriteString(wrapAlphabet[rng.IntN(len(wrapAlphabet))])
		}
		line := b.String()
		first, rest := 2+rng.IntN(30), 2+rng.IntN(30)
		if n%4 == 0 {
			first = rng.IntN(5) - 2 // a label as wide as the line
		}
		if first < 2 && strings.ContainsAny(line, "日本語한국어😀") {
			first = 2
		}
		want := wrapBefore(line, first, rest)
		if got := slices.Collect(wrap(context.Background(), line, first, rest)); !slices.Equal(got, want) {
			t.Fatalf("wrap(%q, %d, %d) = %q, want %q", line, first, rest, got, want)
		}
	}
}

// TestTranscriptWrapsAsBefore renders the golden logs wrapped at several
// widths with the quadratic wrap and with wrap: the same bytes.
func TestTranscriptWrapsAsBefore(t *testing.T) {
	events := append(append(fixtureEvents(t, "session-4f1c2a9e-8b3d-4e6f-a1c2-7d9e0b1f2a3c"),
		fixtureEvents(t, "task_review_01___x")...), v4Turn()...)
	events = append(events, errorTurns()...)
	for _, width := range []int{12, 20, 33, 40, 80, 100} {
		o := TranscriptOptions{Width: width, Wrap: true}
		got := render(t, o, events)
		// The same rendering, wrapping with wrapBefore.
		var want strings.Builder
		for _, line := range strings.Split(render(t, TranscriptOptions{Width: width}, events), "\n") {
			want.WriteString(rewrapBefore(line, width))
		}
		if got+"\n" != want.String() {
			t.Errorf("width %d: wrapped transcript differs from the one wrapped before:\n%s\n---\n%s", width, got, want.String())
		}
	}
}

// rewrapBefore wraps one line of an unwrapped transcript as labelled did
// with wrapBefore: a "label: " line or an indented later line.
func rewrapBefore(line string, width int) string {
	label, text, ok := strings.Cut(line, ": ")
	indent, col := " ", runewidth.StringWidth(label)+1
	switch {
	case strings.HasPrefix(line, "  ") && !strings.HasPrefix(line, "  →") && !strings.HasPrefix(line, "  ←") &&
		!strings.HasPrefix(line, "  ✗") && !strings.HasPrefix(line, "  thinking: ") && !strings.HasPrefix(line, "  (interrupted)"):
		indent, col, text = "  ", 0, line[2:]
	case !ok || !slices.Contains([]string{"user", "assistant", "title", "system", "developer"}, strings.SplitN(label, " ", 2)[0]):
		return line + "\n"
	default:
		label += ":"
	}
	var b strings.Builder
	if indent == " " {
		b.WriteString(label)
	}
	for j, part := range wrapBefore(text, width-col-len(indent), width-2) {
		if j > 0 {
			b.WriteString("\n")
			indent = "  "
		}
		b.WriteString(indent + part)
	}
	return b.String() + "\n"
}

// hugeText is n bytes of prose-like text: words of mixed lengths, some
// wide runes, no newline.
func hugeText(n int) string {
	words := []string{"the", "session", "log", "holds", "日本語の", "events,", "a", "reasonably", "long", "line", "über"}
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		b.WriteString(words[(i*7+i/3)%len(words)])
		b.WriteByte(' ')
	}
	return b.String()
}

// TestTranscriptLongText: a multi-megabyte prompt is wrapped in time
// linear in it (it was quadratic: minutes), written out as it is rendered,
// and a long title is cut to 8 lines' worth.
func TestTranscriptLongText(t *testing.T) {
	text := hugeText(4 << 20)
	data, _ := json.Marshal(map[string]any{"role": "user", "content": []map[string]string{{"type": "text", "text": text}}, "source": map[string]string{"kind": "user"}})
	title, _ := json.Marshal(map[string]string{"title": text})
	events := []seam.Event{{Type: "user/message", Data: data}, {Type: "session/title", Data: title}}
	var w countWriter
	tr := NewTranscript(&w, TranscriptOptions{Width: 80, Wrap: true})
	// CPU time, which a loaded machine does not inflate; quadratic took
	// minutes, linear well under a second (ten times that under -race).
	limit := 5 * time.Second
	if raceEnabled {
		limit *= 10
	}
	start := cputime.Now()
	for i := range events {
		if err := tr.Render(&events[i]); err != nil {
			t.Fatal(err)
		}
	}
	if d := cputime.Now() - start; d > limit {
		t.Errorf("rendering 4 MiB took %v of CPU", d)
	}
	if w.writes < 2 || w.max > 2*flushBytes {
		t.Errorf("%d writes, the largest %d bytes: the long prompt was not written out as rendered", w.writes, w.max)
	}
	got := render(t, TranscriptOptions{Width: 80, Wrap: true}, events[1:])
	if n := strings.Count(got, "\n"); n < 8 || n > 10 || !strings.HasSuffix(got, "…\n") {
		t.Errorf("long title: %d lines, ends %q", n, got[max(0, len(got)-20):])
	}
	got = render(t, TranscriptOptions{Width: 80}, events[1:])
	if n := utf8.RuneCountInString(got); n != len("title: ")+8*80+2 {
		t.Errorf("long title piped: %d runes", n)
	}
}

type countWriter struct{ writes, max, n int }

func (w *countWriter) Write(p []byte) (int, error) {
	w.writes++
	w.max = max(w.max, len(p))
	w.n += len(p)
	return len(p), nil
}

// cancelWriter cancels the context once n bytes were written.
type cancelWriter struct {
	n      int
	cancel context.CancelFunc
}

func (w *cancelWriter) Write(p []byte) (int, error) {
	if w.n -= len(p); w.n <= 0 {
		w.cancel()
	}
	return len(p), nil
}

// TestTranscriptCancel: the end of the context stops a transcript between
// events and inside a long one, wrapped or not.
func TestTranscriptCancel(t *testing.T) {
	// Lines of 1,000 bytes, which are not wrapped when piped.
	text := strings.Repeat(hugeText(1000)+"\n", 8<<10)
	data, _ := json.Marshal(map[string]any{"role": "user", "content": []map[string]string{{"type": "text", "text": text}}, "source": map[string]string{"kind": "user"}})
	e := seam.Event{Type: "user/message", Data: data}
	for _, wrapped := range []bool{false, true} {
		ctx, cancel := context.WithCancel(context.Background())
		w := &cancelWriter{n: 1 << 20, cancel: cancel}
		tr := NewTranscript(w, TranscriptOptions{Width: 80, Wrap: wrapped, Context: ctx})
		if err := tr.Render(&e); !errors.Is(err, context.Canceled) {
			t.Errorf("wrapped %v: %v, want context.Canceled", wrapped, err)
		}
		if written := 1<<20 - w.n; written > 1<<20+2*flushBytes {
			t.Errorf("wrapped %v: %d bytes written after the end", wrapped, written)
		}
		small := prompt(1, 0, "user")
		if err := tr.Render(&small); !errors.Is(err, context.Canceled) {
			t.Errorf("next event: %v", err)
		}
	}
	// A line of zero-width runes is one part, whose scan stops too.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if got := slices.Collect(wrap(ctx, strings.Repeat("\u0301", 1<<17)+strings.Repeat("x", 100), 10, 10)); len(got) != 0 {
		t.Errorf("wrap after the end yielded %d parts", len(got))
	}
}

// BenchmarkWrap wraps a 1 MB line of prose at 80 columns.
func BenchmarkWrap(b *testing.B) {
	line := hugeText(1 << 20)
	b.SetBytes(int64(len(line)))
	for b.Loop() {
		for range wrap(context.Background(), line, 70, 78) {
		}
	}
}

// BenchmarkWrapBefore is BenchmarkWrap with the quadratic wrap, to compare
// (minutes a run: go test -run - -bench WrapBefore -benchtime 1x).
func BenchmarkWrapBefore(b *testing.B) {
	if testing.Short() {
		b.Skip("minutes")
	}
	line := hugeText(1 << 20)
	b.SetBytes(int64(len(line)))
	for b.Loop() {
		wrapBefore(line, 70, 78)
	}
}

// TestHasControl: the byte scan agrees with unicode.IsControl on every
// rune, and on bytes that are not UTF-8.
func TestHasControl(t *testing.T) {
	for r := rune(0); r <= 0x10ffff; r++ {
		if r >= 0xd800 && r <= 0xdfff {
			continue
		}
		s := "a" + string(r) + "b"
		if want := r != '\n' && r != '\t' && unicode.IsControl(r); hasControl(s) != want {
			t.Errorf("hasControl(%q) = %v", s, !want)
		}
	}
	for _, s := range []string{"\xc2", "a\xc2", "\xc2\xa0", "\x80\x9f", "\xe2\x80\x8b"} {
		if hasControl(s) {
			t.Errorf("hasControl(%q) = true", s)
		}
	}
}

// TestTranscriptOpenTurn: with MarkOpenTurn, End says that the last turn
// has no turn/end; a closed turn, or no MarkOpenTurn, adds nothing.
func TestTranscriptOpenTurn(t *testing.T) {
	start := func(seq, turn int64) seam.Event {
		return seam.Event{Type: "turn/start", Seq: seq, Data: json.RawMessage(`{"turn":` + strconv.FormatInt(turn, 10) + `}`)}
	}
	end := func(seq, turn int64) seam.Event {
		return seam.Event{Type: "turn/end", Seq: seq, Data: json.RawMessage(`{"turn":` + strconv.FormatInt(turn, 10) + `,"reason":{"kind":"completed"}}`)}
	}
	for _, tc := range []struct {
		events []seam.Event
		mark   bool
		open   bool
	}{
		{[]seam.Event{start(0, 1), end(1, 1), start(2, 2)}, true, true},
		{[]seam.Event{start(0, 1), end(1, 1)}, true, false},
		{[]seam.Event{start(0, 2)}, false, false},
		{nil, true, false},
	} {
		var b bytes.Buffer
		tr := NewTranscript(&b, TranscriptOptions{})
		if tc.mark {
			tr.MarkOpenTurn()
		}
		for i := range tc.events {
			if err := tr.Event(&tc.events[i]); err != nil {
				t.Fatal(err)
			}
		}
		if err := tr.End(); err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(b.String(), "is open"); got != tc.open {
			t.Errorf("events %d, mark %v: open turn marked %v, want %v:\n%s", len(tc.events), tc.mark, got, tc.open, b.String())
		}
		if tc.open && !strings.HasSuffix(b.String(), "── turn 2 is open: no turn/end yet; dsh closes it on resume (dshctl append --close-interrupted) ──\n") {
			t.Errorf("the mark is not the last line:\n%s", b.String())
		}
	}
}
