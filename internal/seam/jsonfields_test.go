package seam

import (
	"encoding/json"
	"maps"
	"testing"
)

// FuzzFields checks fieldList, which splits a record in the pass that
// validates it, against encoding/json's reading of an object: the same
// objects accepted, the same keys (decoded, the last of repeated keys
// winning) and each value's bytes as they are, past the members it holds
// without a map too.
func FuzzFields(f *testing.F) {
	for _, s := range []string{`{"a":1,"b":"x\"y\\\\","a":[1,{"a":2}]}`, `{"k\u0065y":"v"}`, `{"a":"\\\\\\"","b":{}}`, `{"a":`, `"x`,
		` { "a" : "x" } `, `[1]`, `{"a":1}x`, `{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k0":10}`, "{\"\xff\":1}"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var fl fieldList
		_, err := fl.parse(raw)
		var want map[string]json.RawMessage
		werr := json.Unmarshal(raw, &want)
		if werr == nil && want == nil {
			werr = json.Unmarshal([]byte("x"), &want) // null is no object
		}
		if (err == nil) != (werr == nil) {
			t.Fatalf("parse(%q): %v; encoding/json: %v", raw, err, werr)
		}
		if err != nil {
			return
		}
		if got := fl.toMap(); !maps.EqualFunc(got, want, func(a, b json.RawMessage) bool { return string(a) == string(b) }) {
			t.Fatalf("parse(%q) = %q; encoding/json: %q", raw, got, want)
		}
	})
}
