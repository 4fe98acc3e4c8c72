package rawjson

import (
	"encoding/json"
	"testing"
)

func TestLookup(t *testing.T) {
	obj := []byte(` {"a":1, "turn" : 3 ,"message":{"source":{"callId":"c\"1"},"content":[{"type":"tool-call","id":"x"},"s",[1,2]]},"tu\u0072n":4, "neg":-2.0, "big":1e300, "s":"a\\"}`)
	if v, ok := Lookup(obj, "turn"); !ok || string(v) != "4" {
		t.Errorf("turn: %s %v (the last of repeated keys, escapes decoded)", v, ok)
	}
	if n, ok := LookupInt(obj, "neg"); !ok || n != -2 {
		t.Errorf("neg: %d %v", n, ok)
	}
	if _, ok := LookupInt(obj, "big"); ok {
		t.Error("1e300 is not a safe integer")
	}
	if s, ok := LookupString(obj, "s"); !ok || s != `a\` {
		t.Errorf("s: %q %v", s, ok)
	}
	msg, _ := Lookup(obj, "message")
	src, _ := Lookup(msg, "source")
	if id, ok := LookupString(src, "callId"); !ok || id != `c"1` {
		t.Errorf("callId: %q %v", id, ok)
	}
	content, _ := Lookup(msg, "content")
	var items []string
	if !Elements(content, func(it []byte) bool { items = append(items, string(it)); return true }) || len(items) != 3 || items[2] != "[1,2]" {
		t.Errorf("content items: %q", items)
	}
	if _, ok := Lookup(obj, "missing"); ok {
		t.Error("missing member found")
	}
	for _, notObj := range []string{``, `[]`, `"x"`, `3`, `{}`} {
		if _, ok := Lookup([]byte(notObj), "a"); ok {
			t.Errorf("Lookup(%s) found a member", notObj)
		}
	}
	if Elements([]byte(`{}`), func([]byte) bool { return true }) {
		t.Error("Elements of an object")
	}
	// The same answers as JSON.parse's reading through encoding/json for
	// the payloads verify looks into.
	for _, raw := range []string{`{"turn":1}`, `{"turn":1.0}`, `{"turn":"1"}`, `{"step":2,"turn":-0}`} {
		var m map[string]any
		if err := json.Unmarshal([]byte(raw), &m); err != nil {
			t.Fatal(err)
		}
		n, ok := LookupInt([]byte(raw), "turn")
		f, isNum := m["turn"].(float64)
		if ok != isNum || ok && float64(n) != f {
			t.Errorf("%s: LookupInt = %d %v, JSON says %v", raw, n, ok, m["turn"])
		}
	}
}
