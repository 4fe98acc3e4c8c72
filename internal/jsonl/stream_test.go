package jsonl

import (
	"bytes"
	"testing"

	"github.com/dshctl/dshctl/internal/seam"
)

// TestRecordParts: a record written in pieces is appendRecord's line, in
// every format, with and without a large payload.
func TestRecordParts(t *testing.T) {
	big := []byte(`{"t":"` + string(bytes.Repeat([]byte("a"), bigValue)) + `"}`)
	for _, e := range []seam.Event{
		{Type: "session/title", Seq: 1, Time: 2, Data: []byte(`{"title":"x"}`)},
		{Type: "session/title", Seq: 1, Time: 2, Data: big},
		{Type: "surface/x", Seq: 3, Time: 4, Data: big, Ignorable: true, SurfaceOp: big, SourceEventSeqs: []int64{0, 1, 2}},
		{Type: "surface/x", Seq: 3, Time: 4, Data: []byte(`{}`), SurfaceOp: big, SourceEventSeqs: []int64{}},
	} {
		for _, v := range []int{0, 2, 4} {
			_, parts := recordParts([]byte("junk"), &e, v)
			if got, want := bytes.Join(parts, nil), appendRecord(nil, &e, v); !bytes.Equal(got, want) {
				t.Errorf("v%d %s: parts give %.80q…, want %.80q…", v, e.Type, got, want)
			}
		}
	}
}
