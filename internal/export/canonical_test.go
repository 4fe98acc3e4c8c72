package export

import (
	"bytes"
	"testing"

	"github.com/dshctl/dshctl/internal/seam"
)

var (
	testHeader = seam.Header{Version: 0, ID: "s", CreatedAt: 7, Cwd: "/w"}
	testEvents = []seam.Event{
		{Type: "turn/start", Seq: 0, Time: 8, Data: []byte(`{"turn":1}`)},
		{Type: "session/title", Seq: 1, Time: 9, Data: []byte(`{"title":"t"}`), SourceEventSeqs: []int64{0, 1}},
	}
)

// write gives s the header, the events, and with closers the first event
// again as a closer.
func write(t *testing.T, s interface {
	Header(*seam.Header) error
	Event(*seam.Event) error
	Closers(int) error
	End() error
}, closers bool) {
	t.Helper()
	if err := s.Header(&testHeader); err != nil {
		t.Fatal(err)
	}
	for i := range testEvents {
		if err := s.Event(&testEvents[i]); err != nil {
			t.Fatal(err)
		}
	}
	if closers {
		if err := s.Closers(1); err != nil {
			t.Fatal(err)
		}
		if err := s.Event(&testEvents[0]); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.End(); err != nil {
		t.Fatal(err)
	}
}

func TestCanonical(t *testing.T) {
	var b bytes.Buffer
	write(t, NewCanonical(&b), true)
	want := `{"type":"session","version":0,"id":"s","createdAt":7,"cwd":"/w","delegationDepth":0}
{"type":"turn/start","seq":0,"time":8,"data":{"turn":1}}
{"type":"session/title","seq":1,"time":9,"data":{"title":"t"},"sourceEventSeqs":[0,1]}
{"type":"turn/start","seq":0,"time":8,"data":{"turn":1}}
`
	if b.String() != want {
		t.Errorf("canonical log\n%s\nwant\n%s", b.String(), want)
	}
}

func TestDocument(t *testing.T) {
	for _, c := range []struct {
		closers bool
		want    string
	}{
		{false, `{"header":{"type":"session","version":0,"id":"s","createdAt":7,"cwd":"/w","delegationDepth":0},
"events":[
  {"type":"turn/start","seq":0,"time":8,"data":{"turn":1}},
  {"type":"session/title","seq":1,"time":9,"data":{"title":"t"},"sourceEventSeqs":[0,1]}
]}
`},
		{true, `{"header":{"type":"session","version":0,"id":"s","createdAt":7,"cwd":"/w","delegationDepth":0},
"events":[
  {"type":"turn/start","seq":0,"time":8,"data":{"turn":1}},
  {"type":"session/title","seq":1,"time":9,"data":{"title":"t"},"sourceEventSeqs":[0,1]}
],
"closers":[
  {"type":"turn/start","seq":0,"time":8,"data":{"turn":1}}
]}
`},
	} {
		var b bytes.Buffer
		write(t, NewDocument(&b), c.closers)
		if b.String() != c.want {
			t.Errorf("document (closers %v)\n%s\nwant\n%s", c.closers, b.String(), c.want)
		}
	}
}
