package rawjson

import (
	"encoding/json"
	"strconv"
	"testing"
)

func TestSafeInt(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"0", 0, true},
		{"-0", 0, true},
		{"42", 42, true},
		{"-42", -42, true},
		{"9007199254740991", 1<<53 - 1, true},
		{"-9007199254740991", -(1<<53 - 1), true},
		{"9007199254740992", 0, false},
		{"-9007199254740992", 0, false},
		{"9223372036854775808", 0, false}, // past int64
		{"1e3", 1000, true},               // JSON.parse reads these as integers
		{"1E3", 1000, true},
		{"2.0", 2, true},
		{"1.5e1", 15, true},
		{"9.007199254740991e15", 1<<53 - 1, true},
		{"1e16", 0, false},
		{"1.5", 0, false},
		{"1e-1", 0, false},
		{"1e400", 0, false},
		{"NaN", 0, false},
		{"-Infinity", 0, false},
		{"Infinity", 0, false},
		{`"1"`, 0, false},
		{"true", 0, false},
		{"null", 0, false},
		{"", 0, false},
	} {
		got, err := SafeInt([]byte(c.in))
		if c.ok != (err == nil) || got != c.want {
			t.Errorf("SafeInt(%q) = %d, %v; want %d, ok=%v", c.in, got, err, c.want, c.ok)
		}
	}
}

func TestIsNegZero(t *testing.T) {
	for in, want := range map[string]bool{"-0": true, "-0.0": true, "-0e5": true, "0": false, "0.0": false, "-1": false, "x": false} {
		if got := IsNegZero([]byte(in)); got != want {
			t.Errorf("IsNegZero(%q) = %v", in, got)
		}
	}
}

// FuzzSmallInt checks SafeInt's allocation-free path against the
// strconv one.
func FuzzSmallInt(f *testing.F) {
	for _, s := range []string{"0", "-0", "12", "-999999999999999", "1000000000000000", "+5", "", "-", "1e3", "007"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		n, ok := smallInt(raw)
		if !ok {
			return
		}
		want, err := strconv.ParseInt(string(raw), 10, 64)
		if err != nil || want != n || want > MaxSafeInteger || want < -MaxSafeInteger {
			t.Fatalf("smallInt(%q) = %d; ParseInt %d, %v", raw, n, want, err)
		}
	})
}

func TestMember(t *testing.T) {
	for _, c := range []struct {
		raw, key, want string
		ok             bool
	}{
		{`{"a":1,"b":{"c":[2]}}`, "b", `{"c":[2]}`, true},
		{` { "a" : "x" } `, "a", `"x"`, true},
		{`{"a":1,"a":2}`, "a", `2`, true},
		{`{"\u0061":1}`, "a", `1`, true},
		{`{"A":1}`, "a", ``, false},
		{`{"a":1}`, "b", ``, false},
		{`[1]`, "a", ``, false},
		{`{"a":1`, "a", ``, false},
		{`{"a":1}x`, "a", ``, false},
		{``, "a", ``, false},
		{`{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9}`, "k9", `9`, true},
	} {
		got, ok := Member([]byte(c.raw), c.key)
		if ok != c.ok || string(got) != c.want {
			t.Errorf("Member(%s, %q) = %s, %v; want %s, %v", c.raw, c.key, got, ok, c.want, c.ok)
		}
	}
}

// FuzzLookup checks Lookup, which walks without validating, against
// encoding/json's reading of valid objects (keys decoded, the last of
// repeated keys winning, the value's bytes as they are), and that it never
// panics on anything else.
func FuzzLookup(f *testing.F) {
	for _, s := range []string{`{"a":1,"b":"x\"y\\\\","a":[1,{"a":2}]}`, `{"k\u0065y":"v"}`, `{"a":"\\\\\\"","b":{}}`, `{"a":`, `"x`, `{"a":"\\`} {
		f.Add([]byte(s), "a")
	}
	f.Fuzz(func(t *testing.T, raw []byte, key string) {
		got, gok := Lookup(raw, key)
		var m map[string]json.RawMessage
		if !IsObject(raw) || json.Unmarshal(raw, &m) != nil {
			return
		}
		want, wok := m[key]
		if gok != wok || string(got) != string(want) {
			t.Fatalf("Lookup(%s, %q) = %s, %v; encoding/json: %s, %v", raw, key, got, gok, want, wok)
		}
		if mv, mok := Member(raw, key); mok != wok || string(mv) != string(want) {
			t.Fatalf("Member(%s, %q) = %s, %v; encoding/json: %s, %v", raw, key, mv, mok, want, wok)
		}
	})
}
