package rawjson

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/dshctl/dshctl/internal/fixture"
)

// fixtureLines returns the lines of every plain log of the dsh 0.1.0
// fixtures: real records, tool results of several KiB among them.
func fixtureLines(b *testing.B) (lines [][]byte, size int64) {
	paths, err := filepath.Glob(fixture.Path(b, "dsh-0.1.0", "jsonl-none", "*", "*", "session.jsonl"))
	if err != nil || len(paths) == 0 {
		b.Fatalf("no fixture logs: %v", err)
	}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		for l := range bytes.Lines(data) {
			l = bytes.TrimSuffix(l, []byte("\n"))
			lines = append(lines, l)
			size += int64(len(l))
		}
	}
	return lines, size
}

// BenchmarkScan validates every record of the fixtures as a reader does.
func BenchmarkScan(b *testing.B) {
	lines, size := fixtureLines(b)
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		for _, l := range lines {
			if valid, _ := Scan(l); !valid {
				b.Fatalf("invalid: %s", l)
			}
		}
	}
}

// BenchmarkLookupAll reads the members verify's turn rules read of every
// record's data, as inspect.ReadFacts does.
func BenchmarkLookupAll(b *testing.B) {
	lines, size := fixtureLines(b)
	keys := []string{"turn", "step", "message", "callId", "name", "arguments"}
	vals := make([]json.RawMessage, len(keys))
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		for _, l := range lines {
			data, _ := Lookup(l, "data")
			LookupAll(data, keys, vals)
		}
	}
}
