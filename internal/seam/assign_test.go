package seam

import (
	"bytes"
	"testing"
)

func TestAssignSeq(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"type":"a","data":{}}`, `{"seq":7,"time":99,"type":"a","data":{}}`},
		{`{"type":"a","seq":123456,"time":5,"data":{}}`, `{"type":"a","seq":7,"time":5,"data":{}}`},
		{`{"type":"a","seq":1,"data":{"seq":0}}`, `{"time":99,"type":"a","seq":7,"data":{"seq":0}}`},
		{`{"seq":null}`, `{"time":99,"seq":7}`},
		{`{}`, `{"seq":7,"time":99}`},
		{` { "time" : 1 , "s\u0065q" : 2 } `, ` { "time" : 1 , "s\u0065q" : 7 } `},
		// Not spliced: a repeated name, more members than an event has.
		{`{"seq":1,"seq":2,"type":"a"}`, `{"seq":7,"time":99,"type":"a"}`},
		{`{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9}`, `{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9,"seq":7,"time":99}`},
	} {
		// In place when the line has room, in a new line when it has not.
		for _, room := range []int{0, 64} {
			line := append(make([]byte, 0, len(tc.in)+room), tc.in...)
			got, err := AssignSeq(line, 7, 99)
			if err != nil || string(got) != tc.want {
				t.Errorf("AssignSeq(%s) with room %d = %s, %v; want %s", tc.in, room, got, err, tc.want)
			}
		}
	}
	for _, in := range []string{`[1]`, `{"a":`, `"x"`} {
		if got, err := AssignSeq([]byte(in), 7, 99); err == nil {
			t.Errorf("AssignSeq(%s) = %s, want an error", in, got)
		}
	}
}

func TestAppendJSONParts(t *testing.T) {
	for _, e := range []Event{
		{Type: "a", Seq: 1, Time: 2, Data: []byte(`{"x":1}`)},
		{Type: "a\"b", Seq: 1, Time: 2},
		{Type: "surface/x", Seq: 3, Time: 4, Data: []byte(`{}`), Ignorable: true, SurfaceOp: []byte(`{"op":1}`), SourceEventSeqs: []int64{0, 1, 2}},
	} {
		_, parts := e.AppendJSONParts([]byte("prefix"))
		if got, want := bytes.Join(parts[:], nil), e.AppendJSON(nil); !bytes.Equal(got, want) {
			t.Errorf("AppendJSONParts(%+v) = %s, want %s", e, got, want)
		}
	}
}

// FuzzAssignSeq: numbering a line in place gives the members a rebuild
// gives (the splice keeps their text and order; a reader sees the same
// object), and fails where it fails.
func FuzzAssignSeq(f *testing.F) {
	for _, s := range []string{`{"type":"a","data":{}}`, `{"seq":1,"time":2}`, ` {} `, `{"seq":1,"seq":2}`, `{"s\u0065q":"x","data":{"seq":1}}`, `[]`} {
		f.Add([]byte(s), 64)
	}
	f.Fuzz(func(t *testing.T, line []byte, room int) {
		want, werr := rebuildSeq(bytes.Clone(line), 42, 7)
		buf := append(make([]byte, 0, len(line)+int(uint(room)%128)), line...)
		got, err := AssignSeq(buf, 42, 7)
		if (err == nil) != (werr == nil) {
			t.Fatalf("AssignSeq(%q): %v, rebuild: %v", line, err, werr)
		}
		if err != nil {
			return
		}
		var g, w fieldList
		if _, err := g.parse(got); err != nil {
			t.Fatalf("AssignSeq(%q) = %q, not an object: %v", line, got, err)
		}
		w.parse(want)
		gm, wm := g.toMap(), w.toMap()
		if len(gm) != len(wm) {
			t.Fatalf("AssignSeq(%q) = %q, rebuild %q", line, got, want)
		}
		for k, v := range wm {
			if !bytes.Equal(gm[k], v) {
				t.Fatalf("AssignSeq(%q) = %q, rebuild %q: member %q", line, got, want, k)
			}
		}
	})
}
