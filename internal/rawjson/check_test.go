package rawjson

import (
	"errors"
	"strings"
	"testing"
)

// TestCheckErrors pins Check's words and offsets: a trace's "malformed
// JSON" error quotes them.
func TestCheckErrors(t *testing.T) {
	for in, want := range map[string]string{
		`01`:               `invalid character '1' after top-level value (offset 1)`,
		`{"a" 1}`:          `invalid character '1' after object key (offset 5)`,
		`[1,]`:             `invalid character ']' looking for beginning of value (offset 3)`,
		`"\x"`:             `invalid character 'x' in string escape code (offset 2)`,
		`1e`:               `unexpected end of JSON input (offset 2)`,
		`-x`:               `invalid character 'x' in numeric literal (offset 1)`,
		`nulx`:             `invalid character 'x' in literal null (offset 3)`,
		"\"a\x01\"":        `invalid character '\x01' in string literal (offset 2)`,
		`"\u12g4"`:         `invalid character 'g' in \u hexadecimal character escape (offset 5)`,
		`{"a":1,}`:         `invalid character '}' looking for beginning of object key string (offset 7)`,
		`[1 2]`:            `invalid character '2' after array element (offset 3)`,
		`{"a":1 "b":2}`:    `invalid character '"' after object key:value pair (offset 7)`,
		`1.x`:              `invalid character 'x' after decimal point in numeric literal (offset 2)`,
		`   `:              `unexpected end of JSON input (offset 3)`,
		`{"a":[1,{"b":}]}`: `invalid character '}' looking for beginning of value (offset 13)`,
	} {
		if err := Check([]byte(in)); err == nil || err.Error() != want {
			t.Errorf("Check(%q) = %v, want %s", in, err, want)
		}
	}
	if err := Check([]byte(strings.Repeat("[", MaxDepth+1))); !errors.Is(err, ErrDepth) {
		t.Errorf("too deep: %v", err)
	}
	if _, err := Value([]byte(`[[1]]`), 0, MaxDepth-1); !errors.Is(err, ErrDepth) {
		t.Errorf("Value two levels deep at MaxDepth-1: %v", err)
	}
	if end, err := Value([]byte(`[1] x`), 0, MaxDepth-1); err != nil || end != 3 {
		t.Errorf("Value one level deep at MaxDepth-1: %d, %v", end, err)
	}
}
