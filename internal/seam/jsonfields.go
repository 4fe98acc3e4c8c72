package seam

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
)

// maxSafeInteger is JavaScript's Number.MAX_SAFE_INTEGER: dsh is a Node
// program, so every integer in a log must survive a float64.
const maxSafeInteger = 1<<53 - 1

// objectFields decodes a JSON object into its raw members.
func objectFields(raw []byte) (map[string]json.RawMessage, error) {
	if !isObject(raw) {
		return nil, errors.New("not an object")
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	return m, nil
}

// isObject reports whether raw starts, after white space, with '{'.
func isObject(raw []byte) bool {
	for _, c := range raw {
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		case '{':
			return true
		}
		return false
	}
	return false
}

// parseSafeInt parses a JSON number that must be a safe integer (JSON.parse
// accepts 3.0 and 1e3 as integers, so this does too).
func parseSafeInt(raw json.RawMessage) (int64, error) {
	s := string(raw)
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		if n > maxSafeInteger || n < -maxSafeInteger {
			return 0, fmt.Errorf("%s is not a safe integer", s)
		}
		return n, nil
	}
	if len(s) == 0 || !(s[0] == '-' || (s[0] >= '0' && s[0] <= '9')) {
		return 0, fmt.Errorf("%.40s is not a number", s)
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.Trunc(f) != f || math.Abs(f) > maxSafeInteger {
		return 0, fmt.Errorf("%.40s is not a safe integer", s)
	}
	return int64(f), nil
}

// isNegZero reports whether a JSON number is a negative zero.
func isNegZero(raw json.RawMessage) bool {
	f, err := strconv.ParseFloat(string(raw), 64)
	return err == nil && f == 0 && math.Signbit(f)
}

func intField(m map[string]json.RawMessage, key string, required bool) (int64, error) {
	raw, ok := m[key]
	if !ok {
		if required {
			return 0, fmt.Errorf("missing %s", key)
		}
		return 0, nil
	}
	n, err := parseSafeInt(raw)
	if err != nil {
		return 0, fmt.Errorf("%s: %v", key, err)
	}
	return n, nil
}

func stringField(m map[string]json.RawMessage, key string, required bool) (string, error) {
	raw, ok := m[key]
	if !ok {
		if required {
			return "", fmt.Errorf("missing %s", key)
		}
		return "", nil
	}
	var s string
	if len(raw) == 0 || raw[0] != '"' {
		return "", fmt.Errorf("%s must be a string", key)
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", fmt.Errorf("%s: %v", key, err)
	}
	return s, nil
}
