package seam

import (
	"encoding/json"
	"errors"
	"maps"
	"reflect"
	"slices"
	"testing"

	"github.com/dshctl/dshctl/internal/rawjson"
)

// sameFieldsAsUnmarshal checks objectFields, the readers' hand-rolled
// splitter, against json.Unmarshal into a map.
func sameFieldsAsUnmarshal(t *testing.T, line []byte) {
	got, err := objectFields(line)
	var want map[string]json.RawMessage
	wantErr := json.Unmarshal(line, &want)
	if !rawjson.IsObject(line) {
		want, wantErr = nil, errors.ErrUnsupported // any error
	}
	if (err == nil) != (wantErr == nil) {
		t.Fatalf("objectFields(%q): %v; json.Unmarshal: %v", line, err, wantErr)
	}
	if err == nil && !maps.EqualFunc(got, want, func(a, b json.RawMessage) bool { return string(a) == string(b) }) {
		t.Fatalf("objectFields(%q) = %q, json.Unmarshal %q", line, slices.Collect(maps.Keys(got)), slices.Collect(maps.Keys(want)))
	}
}

func FuzzDecodeRecord(f *testing.F) {
	for _, s := range []string{
		`{"type":"turn/start","seq":0,"time":1785331618512,"data":{"turn":1}}`,
		`{"type":"tool/result","seq":7,"time":1,"data":{},"sourceEventSeqs":[[2,4],6],"surfaceOp":{"op":"replace","startSeq":1,"endSeq":3}}`,
		`{"type":"user/message","seq":42,"time":1,"data":{},"sourceEventSeqs":[40,41,1,18,22,37],"surfaceOp":{"op":"replace","start":1,"end":37}}`,
		`{"type":"x/y","seq":1,"time":1,"data":{"a":"\u00e9\ud83d\ude80"},"ignorable":true}`,
		`{"type":"text-chunks","seq0":12,"time0":100,"data":{"turn":1,"step":2,"index":0,"dt":[3,-1],"texts":["Hel","lo","!"]}}`,
		`{"type":"tool-call-chunks","seq0":3,"time0":9,"data":{"turn":2,"step":1,"index":0,"dt":[1],"id":"c1","name":"bash","args":["{","}"]}}`,
	} {
		for _, v := range []int{0, 2, 3, 4} {
			f.Add([]byte(s), v)
		}
	}
	f.Fuzz(func(t *testing.T, line []byte, v int) {
		v &= 7 // versions 0 to 7; past MaxVersion no type is known
		sameFieldsAsUnmarshal(t, line)
		r, err := DecodeRecord(line, v)
		view, verr := DecodeRecordAlias(line, v)
		if (err == nil) != (verr == nil) || err == nil && !reflect.DeepEqual(r, view) {
			t.Fatalf("DecodeRecordAlias: %+v, %v; DecodeRecord: %+v, %v", view, verr, r, err)
		}
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("DecodeRecord: %v is not ErrCorrupt", err)
			}
			return
		}
		events := r.Events()
		if int64(len(events)) != r.NextSeq()-r.FirstSeq() {
			t.Fatalf("%d events for seqs %d to %d", len(events), r.FirstSeq(), r.NextSeq())
		}
		for i, e := range events {
			for _, enc := range [][]byte{e.AppendJSON(nil), e.AppendRecordJSON(nil, v)} {
				again, err := DecodeRecord(enc, v)
				if err != nil {
					t.Fatalf("event %d re-encoded as %s: %v", i, enc, err)
				}
				if !reflect.DeepEqual(again.Event, e) {
					t.Fatalf("event %d changed on a round trip through %s:\n got %+v\nwant %+v", i, enc, again.Event, e)
				}
			}
		}
	})
}

// objectFields is fieldList as a map, for comparing with json.Unmarshal.
func objectFields(raw []byte) (map[string]json.RawMessage, error) {
	var f fieldList
	if _, err := f.parse(raw); err != nil {
		return nil, err
	}
	return f.toMap(), nil
}
