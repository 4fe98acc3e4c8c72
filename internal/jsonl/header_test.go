package jsonl

import (
	"encoding/json"
	"testing"
)

// TestHeaderVersion checks the cheap version read of a rejected header
// against a full decode of the line.
func TestHeaderVersion(t *testing.T) {
	full := func(line []byte) (int, bool) {
		var h struct {
			Version *int `json:"version"`
		}
		if json.Unmarshal(line, &h) != nil || h.Version == nil {
			return 0, false
		}
		return *h.Version, true
	}
	for _, line := range []string{
		`{"type":"session","version":3,"id":"x"}`,
		` { "type" : "session" , "version" : 2 } `,
		`{"a":{"version":9,"b":[1,{"c":"}"}]},"s":"x\"y\\","version":4}`,
		`{"version":1,"version":3}`,
		`{"versio\u006e":3}`,
		`{"version":-2}`,
		`{"version":null}`,
		`{"version":1.5}`,
		`{"version":1e1}`,
		`{"version":"3"}`,
		`{"version":[3]}`,
		`{"version":99999999999999999999999}`,
		`{"type":"session"}`,
		`{}`,
		`{"version":3`,
		`{"version":3}x`,
		`[{"version":3}]`,
		`null`,
		``,
		`{"version":3,"cwd":"a\\"}`,
		`{"x":"\\","version":5}`,
	} {
		v, ok := headerVersion([]byte(line))
		wv, wok := full([]byte(line))
		if v != wv || ok != wok {
			t.Errorf("headerVersion(%s) = %d, %v; want %d, %v", line, v, ok, wv, wok)
		}
	}
}

// TestHeaderVersionExactKey checks that, like seam.ParseHeader and unlike
// json.Unmarshal into a struct, headerVersion matches the key exactly.
func TestHeaderVersionExactKey(t *testing.T) {
	if v, ok := headerVersion([]byte(`{"Version":3}`)); ok {
		t.Fatalf("headerVersion read %d from key \"Version\"", v)
	}
}

func BenchmarkHeaderVersion(b *testing.B) {
	line := []byte(`{"type":"session","version":4,"id":"0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b","createdAt":1718000000000,"cwd":"/home/dev/projects/demo-app","isSeeded":false,"delegationDepth":0}`)
	for b.Loop() {
		headerVersion(line)
	}
}
