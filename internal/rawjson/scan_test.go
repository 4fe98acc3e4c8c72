package rawjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// sameAsEncodingJSON checks Scan and AppendCompact against json.Valid
// and json.Compact.
func sameAsEncodingJSON(t *testing.T, raw []byte) {
	t.Helper()
	valid, compact := Scan(raw)
	if want := json.Valid(raw); valid != want {
		t.Fatalf("Scan(%q) valid = %v, json.Valid %v", raw, valid, want)
	}
	if err := Check(raw); (err == nil) != valid {
		t.Fatalf("Check(%q) = %v, Scan valid = %v", raw, err, valid)
	}
	if err := Check(raw); err != nil && !errors.Is(err, ErrDepth) && !errors.As(err, new(*SyntaxError)) {
		t.Fatalf("Check(%q) = %T %v, want a *SyntaxError or ErrDepth", raw, err, err)
	}
	if !valid {
		return
	}
	var want bytes.Buffer
	if err := json.Compact(&want, raw); err != nil {
		t.Fatalf("json.Compact(%q): %v", raw, err)
	}
	if got := AppendCompact(nil, raw); !bytes.Equal(got, want.Bytes()) {
		t.Fatalf("AppendCompact(%q) = %q, json.Compact %q", raw, got, want.Bytes())
	}
	if compact != bytes.Equal(raw, want.Bytes()) {
		t.Fatalf("Scan(%q) compact = %v, json.Compact gives %q", raw, compact, want.Bytes())
	}
}

var jsonScanCases = []string{
	``, ` `, `{}`, ` {} `, `[]`, `[ ]`, `{ }`, `"`, `""`, `"a"`, `"\u00e9\ud83d\ude80"`, `"\u00g0"`, `"\x"`,
	`"\"\\\/\b\f\n\r\t"`, "\"\x1f\"", "\"\x7f\xff\xfe\"", "\"abc\tdef\"", `"abcdefghijklmnopq\"rstu"`,
	`0`, `-0`, `01`, `-`, `1.`, `1.5`, `1e`, `1e+`, `1E-7`, `-12.5e3`, `.5`, `+1`, `1 2`,
	`true`, `tru`, `false`, `null`, `nul`, `nulll`, `[1,]`, `[,1]`, `{"a":1,}`, `{"a" : [1, {"b":null}] }`,
	`{"a":1 "b":2}`, `{a:1}`, `{"a"}`, `{"a":}`, `[1]]`, `[[1]`, `{"a":1}}`, "\n[\r1\t]\n",
	`{"type":"tool/result","seq":26,"time":1785331619104,"data":{"turn":1,"message":{"content":"#!/usr/bin/env bash\nset -e\n"}}}`,
	strings.Repeat("[", 10000) + strings.Repeat("]", 10000),
	strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
	strings.Repeat(`{"a":`, 200) + `1` + strings.Repeat("}", 200),
	strings.Repeat(`[{"a":`, 100) + `[1]` + strings.Repeat("}]", 100),
}

func TestScanJSON(t *testing.T) {
	for _, c := range jsonScanCases {
		sameAsEncodingJSON(t, []byte(c))
	}
}

func FuzzScanJSON(f *testing.F) {
	for _, c := range jsonScanCases {
		if len(c) < 1000 { // the fuzzer mutates long seeds slowly
			f.Add([]byte(c))
		}
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		sameAsEncodingJSON(t, raw)
	})
}
