package inspect

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"testing"

	"github.com/dshctl/dshctl/internal/fixture"
	"github.com/dshctl/dshctl/internal/seam"
	"github.com/dshctl/dshctl/internal/seam/seamtest"
)

// expectedPath is a file of what dsh's reader returned for the plain store.
func expectedPath(t testing.TB, name string) string {
	return fixture.Path(t, "dsh-0.1.0", "expected", "jsonl-none", name)
}

// readLines decodes a file of event lines of format version v. A header
// line, when present, is returned too.
func readLines(t testing.TB, path string, v int) (*seam.Header, []seam.Event) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var h *seam.Header
	var events []seam.Event
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if h == nil && len(events) == 0 && bytes.Contains(line, []byte(`"type":"session"`)) {
			hd, err := seam.ParseHeader(line)
			if err != nil {
				t.Fatalf("%s: header: %v", path, err)
			}
			h, v = &hd, hd.Version
			continue
		}
		r, err := seam.DecodeRecord(line, v)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		events = append(events, r.Events()...)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return h, events
}

// fixtureEvents returns the logical events of a dsh-0.1.0 expected session.
func fixtureEvents(t testing.TB, id string) []seam.Event {
	t.Helper()
	_, events := readLines(t, expectedPath(t, id+".events.jsonl"), 0)
	return events
}

// jsonValue decodes JSON into a generic value, for comparisons that ignore
// key order.
func jsonValue(t testing.TB, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	return v
}

// The fake handle and event builders are seamtest's.
type fakeHandle = seamtest.Fake

var (
	newFake  = seamtest.NewFake
	ev       = seamtest.Event
	renumber = seamtest.Renumber
)
