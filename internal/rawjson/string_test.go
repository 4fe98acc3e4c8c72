package rawjson

import (
	"encoding/json"
	"testing"
)

func TestAppend(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{``, ``},
		{`plain ascii`, `plain ascii`},
		{`tab\tnew\nline\r\b\f`, "tab\tnew\nline\r\b\f"},
		{`\"\\\/`, `"\/`},
		{`\u00e9t\u00C9`, "étÉ"},
		{`é✓ valid utf-8`, "é✓ valid utf-8"},
		{`\ud83d\ude00 pair`, "😀 pair"},
		{`\ud83d lone high`, "\uFFFD lone high"},
		{`\ude00 lone low`, "\uFFFD lone low"},
		{`\ud83d\u0041 high then not low`, "\uFFFDA high then not low"},
		{`\ud83d\ud83d\ude00`, "\uFFFD😀"},
		{"bad \xff byte", "bad \uFFFD byte"},
		{"cut \xe2\x9c", "cut \uFFFD\uFFFD"},
	} {
		if got := string(AppendUnquoted(nil, []byte(tc.body))); got != tc.want {
			t.Errorf("AppendUnquoted(%q) = %q, want %q", tc.body, got, tc.want)
		}
	}
}

func TestDecodeRuneCutEscape(t *testing.T) {
	for _, body := range []string{`\`, `\u12`, `a\u00e`} {
		i := len(body) - 1
		for i > 0 && body[i] != '\\' {
			i--
		}
		if _, next, ok := DecodeRune([]byte(body), i); ok || next != i {
			t.Errorf("DecodeRune(%q, %d) = _, %d, %v; want a cut escape", body, i, next, ok)
		}
	}
}

// FuzzAppend checks Append against encoding/json on every valid string.
func FuzzAppend(f *testing.F) {
	for _, s := range []string{`a\u00e9\ud83d\ude00`, `\ud800x`, "\xff\\n", `\\\"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		quoted := append(append([]byte{'"'}, body...), '"')
		var want string
		if json.Unmarshal(quoted, &want) != nil {
			return
		}
		if got := string(AppendUnquoted(nil, body)); got != want {
			t.Fatalf("AppendUnquoted(%q) = %q, encoding/json gives %q", body, got, want)
		}
	})
}
