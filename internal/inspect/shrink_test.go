package inspect

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode"

	"github.com/dshctl/dshctl/internal/seam"
)

// FuzzUnquotePrefix checks unquotePrefix against encoding/json decoding the
// whole string.
func FuzzUnquotePrefix(f *testing.F) {
	for _, s := range []string{`"abc"`, `"a\u00e9\ud83d\ude80b"`, `"\ud800x\udc00"`, "\"\xff\xfe a\"", `"  \n\t x"`, `"\u2028\u00a0"`} {
		f.Add([]byte(s), 2)
	}
	f.Fuzz(func(t *testing.T, raw []byte, n int) {
		var full string
		raw = bytes.TrimSpace(raw)
		if n < 0 || n > 1000 || !json.Valid(raw) || json.Unmarshal(raw, &full) != nil {
			return
		}
		got, blank := unquotePrefix(raw[1:len(raw)-1], n)
		want := prefixRunes(full, n)
		if string(got) != want {
			t.Fatalf("unquotePrefix(%s, %d) = %q, want %q", raw, n, got, want)
		}
		if blank != (strings.TrimLeftFunc(want, unicode.IsSpace) == "") {
			t.Fatalf("unquotePrefix(%s, %d): blank %v", raw, n, blank)
		}
	})
}

// FuzzShrinkToolResult checks that a tool result renders the same from its
// payload with the long texts cut as from the whole payload.
func FuzzShrinkToolResult(f *testing.F) {
	long := strings.Repeat("line of output ", 200)
	for _, s := range []string{
		`{"turn":1,"step":1,"message":{"source":{"kind":"tool","callId":"c"},"content":[{"type":"tool-result","toolCallId":"c","content":[{"type":"text","text":"` + long + `"}]}]}}`,
		`{"message":{"role":"tool","toolCallId":"c","content":"` + strings.Repeat(" ", 3000) + `x"}}`,
		`{"message":{"role":"tool","content":[{"type":"text","text":"short"},{"type":"image"},{"type":"text","text":"` + long + `"}]},"error":{"code":"E"}}`,
		`{"message":{"content":[{"type":"tool-result","content":"` + long + `","isError":true}]}}`,
		`{"message":{"content":[{"type":"text","text":"` + long + `"}],"text":5}}`,
	} {
		f.Add([]byte(s), 3)
	}
	f.Fuzz(func(t *testing.T, data []byte, width int) {
		if width < 1 || width > 200 {
			return
		}
		shrunk := NewTranscript(nil, TranscriptOptions{Width: width})
		whole := NewTranscript(nil, TranscriptOptions{Width: width})
		shrunk.toolResult(&seam.Event{Type: typeToolResult, Data: data})
		whole.toolResultOf(data)
		if string(shrunk.buf) != string(whole.buf) {
			t.Fatalf("width %d, %s:\nshrunk %q\nwhole  %q", width, data, shrunk.buf, whole.buf)
		}
	})
}
