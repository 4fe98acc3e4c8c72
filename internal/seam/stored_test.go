package seam

import (
	"bytes"
	"errors"
	"testing"
)

// TestDecodeStoredEventMatchesDecodeRecord checks that an event stored field
// by field decodes to what the same event as a JSONL line decodes to, and
// that a field cannot spill into its neighbours.
func TestDecodeStoredEventMatchesDecodeRecord(t *testing.T) {
	for _, c := range []struct {
		name      string
		typ       string
		seq, time int64
		data, sop string
		ignorable bool
		seqs      []int64
		v         int
		wantErr   bool
		wantLine  string // the JSONL line of the same event, when valid
	}{
		{name: "plain", typ: "turn/start", seq: 0, time: 5, data: `{"turn":1}`, wantLine: `{"type":"turn/start","seq":0,"time":5,"data":{"turn":1}}`},
		{name: "compacted", typ: "turn/start", seq: 0, time: 5, data: " {\"turn\" : 1 }\n", wantLine: `{"type":"turn/start","seq":0,"time":5,"data":{"turn":1}}`},
		{name: "surface", typ: "user/message", seq: 3, time: 5, data: `{"content":[]}`, sop: `{"op":"replace","start":1,"end":2}`, seqs: []int64{2, 1}, wantLine: `{"type":"user/message","seq":3,"time":5,"data":{"content":[]},"sourceEventSeqs":[2,1],"surfaceOp":{"op":"replace","start":1,"end":2}}`},
		{name: "ignorable", typ: "x/y", seq: 1, time: 5, data: `{}`, ignorable: true, v: 4, wantLine: `{"type":"x/y","seq":1,"time":5,"data":{},"ignorable":true}`},
		{name: "data_spill", typ: "turn/start", seq: 0, time: 5, data: `{"turn":1},"seq":99,"data":{"turn":2}`, wantErr: true},
		{name: "data_not_object", typ: "turn/start", seq: 0, time: 5, data: `[1]`, wantErr: true},
		{name: "data_empty", typ: "turn/start", seq: 0, time: 5, data: ``, wantErr: true},
		{name: "surface_spill", typ: "user/message", seq: 0, time: 5, data: `{}`, sop: `"append","seq":7`, wantErr: true},
		{name: "surface_missing", typ: "user/message", seq: 0, time: 5, data: `{}`, wantErr: true},
		{name: "seq_cites_self", typ: "tool/result", seq: 2, time: 5, data: `{}`, sop: `"append"`, seqs: []int64{2}, wantErr: true},
		{name: "packed_kind", typ: "text-chunks", seq: 2, time: 5, data: `{}`, wantErr: true},
		{name: "negative_seq", typ: "turn/start", seq: -1, time: 5, data: `{}`, wantErr: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			var sop []byte
			if c.sop != "" {
				sop = []byte(c.sop)
			}
			e, err := DecodeStoredEvent(c.typ, c.seq, c.time, []byte(c.data), sop, c.ignorable, c.seqs, c.v)
			if c.wantErr {
				if !errors.Is(err, ErrCorrupt) {
					t.Fatalf("err %v, want ErrCorrupt", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			rec, err := DecodeRecord([]byte(c.wantLine), c.v)
			if err != nil {
				t.Fatal(err)
			}
			if g, w := e.AppendJSON(nil), rec.Event.AppendJSON(nil); !bytes.Equal(g, w) {
				t.Fatalf("got %s, DecodeRecord %s", g, w)
			}
		})
	}
}

func TestDecodeSourceSeqs(t *testing.T) {
	for _, c := range []struct {
		raw  string
		v    int
		want []int64
		bad  bool
	}{
		{raw: `[40,41,1,18]`, want: []int64{40, 41, 1, 18}},
		{raw: `[[3,6],9]`, v: 2, want: []int64{3, 4, 5, 6, 9}},
		{raw: `[]`, want: []int64{}},
		{raw: `[[3,6],9]`, v: 0, bad: true},
		{raw: `[1,`, bad: true},
		{raw: `{"a":1}`, bad: true},
		{raw: `[1.5]`, bad: true},
	} {
		got, err := DecodeSourceSeqs([]byte(c.raw), c.v)
		if c.bad {
			if !errors.Is(err, ErrCorrupt) {
				t.Errorf("%s v%d: err %v, want ErrCorrupt", c.raw, c.v, err)
			}
			continue
		}
		if err != nil || len(got) != len(c.want) || got == nil {
			t.Errorf("%s v%d: %v %v, want %v", c.raw, c.v, got, err, c.want)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%s v%d: %v, want %v", c.raw, c.v, got, c.want)
			}
		}
	}
}
