package reconcile

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/dshctl/dshctl/internal/rawjson"
)

var scanSeeds = []string{
	`{"k":"ws","ev":{"type":"text-delta","delta":"a\"b\\c\/d\n\u00e9\ud83d\ude00"}}`,
	`"\ud800"`, `"\udc00\ud800x"`, `"\ud83d\u0041"`, "\"\xff\xfe\"", `[1,-0.5e+3,true,false,null,{}]`,
	`{"a":[{"b":[]}],"c":"\u0000"}`, `01`, `{"a" 1}`, `[1,]`, `"\x"`, `1e`, `-`, `{"a":1}x`, ` {"a" : [ 1 , 2 ] } `,
}

// FuzzScanner: the scanner accepts exactly what encoding/json accepts, and
// decodes strings to the same text.
func FuzzScanner(f *testing.F) {
	for _, s := range scanSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		err := rawjson.Check(b)
		if valid := json.Valid(b); valid != (err == nil) {
			t.Fatalf("rawjson.Check(%q) = %v, json.Valid = %t", b, err, valid)
		}
		if err != nil {
			return
		}
		want, err := useNumber(b)
		if err != nil {
			t.Fatalf("encoding/json rejects %q: %v", b, err)
		}
		if got := decodeAny(skipSpaceTrim(b)); !jsonEqual(got, want) {
			t.Fatalf("%q: decoded %#v, encoding/json %#v", b, got, want)
		}
	})
}

func skipSpaceTrim(b []byte) []byte {
	i := rawjson.SkipSpace(b, 0)
	return b[i:rawjson.End(b, i)]
}

// useNumber decodes b with encoding/json, numbers as their text.
func useNumber(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}

// decodeAny decodes a valid value with the scanner's readers, numbers as
// their text.
func decodeAny(v []byte) any {
	switch kindOf(v) {
	case "object":
		m := map[string]any{}
		members(v, func(key, val []byte) { m[string(fieldName(key))] = decodeAny(val) })
		return m
	case "array":
		a := []any{}
		elements(v, func(el []byte) { a = append(a, decodeAny(el)) })
		return a
	case "string":
		return stringOf(v)
	case "bool":
		return v[0] == 't'
	case "null":
		return nil
	}
	return json.Number(v)
}

func jsonEqual(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(x) == string(y)
}

func TestScannerSeeds(t *testing.T) {
	for _, s := range scanSeeds {
		b := []byte(s)
		err := rawjson.Check(b)
		if json.Valid(b) != (err == nil) {
			t.Errorf("%q: checkValue %v, json.Valid %t", s, err, json.Valid(b))
			continue
		}
		if err == nil {
			want, _ := useNumber(b)
			if got := decodeAny(skipSpaceTrim(b)); !jsonEqual(got, want) {
				t.Errorf("%q: %#v vs %#v", s, got, want)
			}
		}
	}
}

// FuzzAppendJSONString: what the backend model writes is valid JSON that
// reads back as the text (invalid UTF-8 as U+FFFD, as encoding/json does).
func FuzzAppendJSONString(f *testing.F) {
	for _, s := range []string{"", "plain", "a\"b\\c\n\t\r\x00\x1f", "é😀\u2028\u2029", "\xff\xfe<&>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b := appendJSONString(nil, s)
		var back string
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("%q encodes to invalid JSON %s: %v", s, b, err)
		}
		want, _ := json.Marshal(s)
		var w string
		_ = json.Unmarshal(want, &w)
		if back != w {
			t.Fatalf("%q reads back as %q, want %q", s, back, w)
		}
	})
}

// FuzzKnownRows: a line after one whose rows the decoder keeps (so that
// rows equal to them are neither checked nor decoded again) decodes as
// encoding/json reads it.
func FuzzKnownRows(f *testing.F) {
	row := `{"id":"r0","tabId":"t1","seq":0,"turnId":"a","role":"user","type":"text","data":{"text":"hi"}}`
	f.Add([]byte(`{"k":"fetch","req":2,"rows":[` + row + `,` + row + `]}`))
	f.Add([]byte(`{"k":"fetch","rows":[` + row + `x]}`))
	f.Add([]byte(`{"k":"fetch","rows":[` + row))
	f.Add([]byte(`{"rows":{"rows":[` + row + `]}}`))
	f.Add([]byte(`{"k":"fetch","req":2,"rows":[` + row + `],"rows":[1]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		if bytes.ContainsAny(b, "\n") {
			return
		}
		data := append([]byte(`{"k":"fetch","req":1,"rows":[`+row+`]}`+"\n"), b...)
		if err := sameDecoding(data); err != nil {
			t.Fatal(err)
		}
	})
}

// FuzzScanFrame: a line scanFrame reads is valid JSON, and it gathers the
// members scan gathers.
func FuzzScanFrame(f *testing.F) {
	for _, s := range []string{
		`{"k":"ws","ev":{"type":"text-delta","tabId":"t1","delta":"hi "}}`,
		`{"k":"ws","ev":{"type":"status","status":"idle","status":"running"}}`,
		`{"k":"ws","ev":{"type":"notice","message":"é\xff"}}`,
		`{"k":"ws","ev":{"type":"error","error":"boom"}}`,
		`{"k":"ws","ev":{"type":"x","delta":"a\"b"}}`,
		`{"k":"ws","ev":{"type":"x"},"k":"send"}`,
		`{"k":"ws","ev":{"type":"x"}}}`,
		`{"k":"ws","ev":{"type":"x","n":1}}`,
		`{"k":"ws","ev":{}}`,
		`{"k":"ws","ev":{"type":"x",}}`,
		`{"k":"ws","ev":{"ty\u0070e":"x"}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var fast wireFields
		if !scanFrame(b, &fast) {
			return
		}
		if !json.Valid(b) {
			t.Fatalf("scanFrame reads %q, which is not valid JSON", b)
		}
		var slow wireFields
		d := &decoder{in: interner{}, seenAt: map[uint64]int{}}
		if err := d.scan(b, &slow); err != nil {
			t.Fatalf("scanFrame reads %q, scan: %v", b, err)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("%q: scanFrame gathers %+v, scan %+v", b, fast, slow)
		}
		// The spans are where scan's are: the frame is moved by offset.
		if cap(fast.ev) != cap(slow.ev) || cap(fast.evf.delta) != cap(slow.evf.delta) || cap(fast.evf.typ) != cap(slow.evf.typ) {
			t.Fatalf("%q: scanFrame's spans are not scan's", b)
		}
	})
}

// TestScanFrameReads: the lines recorders write take the fast path.
func TestScanFrameReads(t *testing.T) {
	for _, s := range []string{
		`{"k":"ws","ev":{"type":"text-delta","tabId":"tab-1","delta":"keeps "}}`,
		`{"k":"ws","ev":{"type":"status","tabId":"tab-1","status":"idle"}}`,
	} {
		var w wireFields
		if !scanFrame([]byte(s), &w) {
			t.Errorf("%s: not read by scanFrame", s)
		}
	}
}
