package seam

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/dshctl/dshctl/internal/rawjson"
)

// Record rules: what dsh's writer never leaves in a record although its
// reader accepts it. JSON.parse keeps the last of repeated member names
// and reads bytes that are not UTF-8 as U+FFFD, so such a record silently
// reads as something else than its text; and the payloads of the events
// that bracket turns and steps carry what the turn and step rules read.
// verify reports a record that breaks one as an irregularity (an error in
// strict mode), and append refuses it: one implementation, so that what
// append writes, verify accepts.

// ErrRecordRule is the cause of an error of CheckRecord and
// CheckStrictJSON.
var ErrRecordRule = errors.New("breaks a record rule")

// recordRuleError is an error of the record rules; it matches ErrRecordRule.
type recordRuleError struct{ msg string }

func (e *recordRuleError) Error() string        { return e.msg }
func (e *recordRuleError) Is(target error) bool { return target == ErrRecordRule }

func rulef(format string, args ...any) error { return &recordRuleError{fmt.Sprintf(format, args...)} }

// TurnEndKinds are the reasons a turn/end may give (store.md 3).
var TurnEndKinds = []string{"completed", "aborted", "blocked", "error", "max-tokens", "interrupted"}

// CheckRecord applies the record rules to a decoded record of a version-v
// log: no member name repeated in an object (the envelope's, which
// DecodeRecord notes, or any in data and surfaceOp), strings that are
// UTF-8, and the payloads of turn/start, turn/end, step/start, step/end and
// tool/call in the shape store.md gives them. Packed rows are dsh's own
// storage form and pass. The error matches ErrRecordRule.
func CheckRecord(r *Record, v int) error {
	if r.Packed != nil {
		return nil
	}
	if r.RepeatedKey != "" {
		return rulef("the member %q appears twice in the record (a reader keeps only the last)", r.RepeatedKey)
	}
	e := &r.Event
	if !utf8.ValidString(e.Type) {
		return rulef("the type holds bytes that are not UTF-8")
	}
	if err := CheckStrictJSON(e.Data); err != nil {
		return rulef("data: %v", err)
	}
	if e.SurfaceOp != nil {
		if err := CheckStrictJSON(e.SurfaceOp); err != nil {
			return rulef("surfaceOp: %v", err)
		}
	}
	return checkPayload(e)
}

// checkPayload checks the members store.md gives the payloads that turn
// and step bracketing and tool-call pairing read.
func checkPayload(e *Event) error {
	var turn, step bool
	switch e.Type {
	case "turn/start", "turn/end":
		turn = true
	case "step/start", "step/end":
		turn, step = true, true
	case "tool/call":
	default:
		return nil
	}
	var data fieldList
	if _, err := data.parse(e.Data); err != nil {
		return rulef("%s: data: %v", e.Type, err)
	}
	need := func(key string) error {
		v, ok := data.get(key)
		if !ok || string(v) == "null" {
			return rulef("%s: data has no %s", e.Type, key)
		}
		if _, err := rawjson.SafeInt(v); err != nil {
			return rulef("%s: data.%s must be an integer, not %s", e.Type, key, clip(v))
		}
		return nil
	}
	if turn {
		if err := need("turn"); err != nil {
			return err
		}
	}
	if step {
		if err := need("step"); err != nil {
			return err
		}
	}
	switch e.Type {
	case "turn/end":
		reason, ok := data.get("reason")
		if !ok || !rawjson.IsObject(reason) {
			return rulef("turn/end: data.reason must be an object {kind}")
		}
		var rf fieldList
		if _, err := rf.parse(reason); err != nil {
			return rulef("turn/end: data.reason: %v", err)
		}
		kind, err := rf.string("kind", true)
		if err != nil {
			return rulef("turn/end: data.reason: %v", err)
		}
		if !slices.Contains(TurnEndKinds, kind) {
			return rulef("turn/end: data.reason.kind %q is not one of %s", kind, strings.Join(TurnEndKinds, ", "))
		}
	case "tool/call":
		id, err := data.string("callId", true)
		if err == nil && id == "" {
			err = errors.New("callId is empty")
		}
		if err == nil {
			_, err = data.string("name", true)
		}
		if err != nil {
			return rulef("tool/call: data: %v", err)
		}
	}
	return nil
}

// clip is v for a message, cut short when long.
func clip(v []byte) string {
	if len(v) > 40 {
		return string(v[:40]) + "…"
	}
	return string(v)
}

// CheckStrictJSON reports what JSON.parse would silently change in raw, a
// valid JSON value (it must be: the scan trusts its syntax): a member name repeated in one object (names compared
// unescaped; the last one wins) or string bytes that are not UTF-8 (read
// as U+FFFD). It reads raw once; memory grows with the names of the open
// objects only.
func CheckStrictJSON(raw []byte) error {
	var c strictChecker
	return c.check(raw)
}

// strictChecker holds, for each open container, the member names seen
// (objects of up to smallNames members are searched, larger ones hashed).
type strictChecker struct {
	stack []strictFrame
}

type strictFrame struct {
	object bool
	names  [][]byte
	set    map[string]struct{}
}

const smallNames = 16

func (c *strictChecker) check(raw []byte) error {
	key := false // the next string is a member name
	for i := 0; i < len(raw); {
		switch raw[i] {
		case '{', '[':
			n := len(c.stack)
			c.stack = slices.Grow(c.stack, 1)[:n+1]
			f := &c.stack[n]
			f.object, f.names, f.set = raw[i] == '{', f.names[:0], nil
			key = f.object
			i++
		case '}', ']':
			c.stack = c.stack[:len(c.stack)-1]
			key = false
			i++
		case ',':
			key = len(c.stack) > 0 && c.stack[len(c.stack)-1].object
			i++
		case '"':
			end := rawjson.StringEnd(raw, i)
			body := raw[i+1 : end-1]
			if !utf8.Valid(body) {
				off := i + 1
				for len(body) > 0 {
					r, size := utf8.DecodeRune(body)
					if r == utf8.RuneError && size == 1 {
						break
					}
					body, off = body[size:], off+size
				}
				return rulef("a string holds bytes that are not UTF-8 (byte %d; a reader turns them into U+FFFD)", off)
			}
			if key {
				if err := c.name(raw[i:end]); err != nil {
					return err
				}
				key = false
			}
			i = end
		default:
			i++
		}
	}
	return nil
}

// name records the member name quoted (a JSON string) in the innermost
// object, failing when it is there already.
func (c *strictChecker) name(quoted []byte) error {
	f := &c.stack[len(c.stack)-1]
	body := quoted[1 : len(quoted)-1]
	if bytes.IndexByte(body, '\\') >= 0 {
		body = []byte(stringValue(quoted))
	}
	if f.set == nil {
		for _, n := range f.names {
			if bytes.Equal(n, body) {
				return repeatedName(body)
			}
		}
		if len(f.names) < smallNames {
			f.names = append(f.names, body)
			return nil
		}
		f.set = make(map[string]struct{}, 2*smallNames)
		for _, n := range f.names {
			f.set[string(n)] = struct{}{}
		}
	}
	if _, ok := f.set[string(body)]; ok {
		return repeatedName(body)
	}
	f.set[string(body)] = struct{}{}
	return nil
}

func repeatedName(name []byte) error {
	return rulef("the member %q appears twice in one object (a reader keeps only the last)", name)
}
