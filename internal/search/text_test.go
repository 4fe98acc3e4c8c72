package search

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestTextsWalk(t *testing.T) {
	raw := `{"turn":1,"content":[{"type":"text","text":"line one\nline \"two\""}],"source":{"kind":"user"},` +
		`"a b":{"x":["é\u00e9\ud83d\ude80",true,null,1.5e3,{"y":"\ud800 lone"}]},"":"empty key","k":"tab\there \/ slash"}`
	var tx texts
	type found struct{ Field, Text string }
	var got []found
	tx.walk([]byte(raw), func(s []byte) bool {
		got = append(got, found{tx.field(".data"), string(s)})
		return true
	})
	want := []found{
		{".data.content[0].type", "text"},
		{".data.content[0].text", "line one\nline \"two\""},
		{".data.source.kind", "user"},
		{`.data["a b"].x[0]`, "éé🚀"},
		{`.data["a b"].x[4].y`, "\uFFFD lone"},
		{`.data[""]`, "empty key"},
		{".data.k", "tab\there / slash"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("walk:\n got %q\nwant %q", got, want)
	}
	// A string value at the top, and a walk stopped early.
	got = nil
	tx.walk([]byte(`"top"`), func(s []byte) bool { got = append(got, found{tx.field(""), string(s)}); return true })
	if len(got) != 1 || got[0].Text != "top" || got[0].Field != "" {
		t.Errorf("top-level string: %q", got)
	}
	n := 0
	if tx.walk([]byte(`["a","b","c"]`), func([]byte) bool { n++; return false }) || n != 1 {
		t.Errorf("walk did not stop: %d calls", n)
	}
}

// FuzzTextsWalk compares the strings walk gives with encoding/json's
// decoding of every string value, on any valid JSON.
func FuzzTextsWalk(f *testing.F) {
	f.Add(`{"a":"x\ny","b":[1,"\u00e9",{"c":"\ud83d\ude80"}],"d":{"e":"\"\\\/"}}`)
	f.Add(`"\ud800\udc00\udc00\ud800"`)
	f.Add(`[[[["deep"]]]]`)
	f.Fuzz(func(t *testing.T, raw string) {
		if !json.Valid([]byte(raw)) {
			return
		}
		want := jsonStrings(t, raw)
		var got []string
		var tx texts
		tx.walk([]byte(raw), func(s []byte) bool {
			got = append(got, validUTF8(string(s)))
			return true
		})
		for i := range want {
			want[i] = validUTF8(want[i])
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("walk(%s):\n got %q\nwant %q", raw, got, want)
		}
	})
}

// validUTF8 is s with each byte that is not UTF-8 made U+FFFD, as
// encoding/json decodes it.
func validUTF8(s string) string {
	var b strings.Builder
	for _, r := range s {
		b.WriteRune(r)
	}
	return b.String()
}

// jsonStrings are the string values (not keys) of the valid JSON raw, in
// order, as encoding/json decodes them.
func jsonStrings(t *testing.T, raw string) []string {
	d := json.NewDecoder(strings.NewReader(raw))
	d.UseNumber() // any number, however large
	var out []string
	var value func()
	value = func() {
		tok, err := d.Token()
		if err != nil {
			t.Fatalf("decode %s: %v", raw, err)
		}
		switch v := tok.(type) {
		case json.Delim:
			for d.More() {
				if v == '{' {
					d.Token() // the key
				}
				value()
			}
			d.Token() // the closing delimiter
		case string:
			out = append(out, validUTF8(v))
		}
	}
	value()
	return out
}
