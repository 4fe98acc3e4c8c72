//go:build goexperiment.jsonv2

package rawjson

import (
	"encoding/json/jsontext"
	"testing"
)

// BenchmarkScanJSONText is BenchmarkScan with encoding/json/jsontext's
// validation (Go 1.26 has it only with GOEXPERIMENT=jsonv2; it is the code
// of github.com/go-json-experiment/json): what the package doc compares.
//
//	GOEXPERIMENT=jsonv2 go test -run '^$' -bench 'Scan' ./internal/rawjson
func BenchmarkScanJSONText(b *testing.B) {
	lines, size := fixtureLines(b)
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		for _, l := range lines {
			if !jsontext.Value(l).IsValid(jsontext.AllowInvalidUTF8(true), jsontext.AllowDuplicateNames(true)) {
				b.Fatalf("invalid: %s", l)
			}
		}
	}
}
