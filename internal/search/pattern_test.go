package search

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

func TestCompileRequired(t *testing.T) {
	for _, tc := range []struct {
		expr  string
		o     PatternOptions
		lit   string
		fold  bool
		slash bool
	}{
		{expr: "build.sh", o: PatternOptions{Fixed: true}, lit: "build.sh"},
		{expr: `build\.sh`, lit: "build.sh"},
		{expr: `build.sh`, lit: "build"},
		{expr: `TypeError: (\w+) is`, lit: "TypeError: "},
		{expr: `foo|bar`},
		{expr: `(abc)+d`, lit: "abc"},
		{expr: `x{2,}yz`, lit: "yz"},
		{expr: `a?bcd`, lit: "bcd"},
		{expr: `[0-9]+`},
		{expr: `npm ci`, o: PatternOptions{IgnoreCase: true}, lit: "npm ci", fold: true},
		{expr: `(?i)Error`, lit: "error", fold: true},
		{expr: `Err(?i:or)`, lit: "error", fold: true},
		// A quote or a backslash is escaped in JSON text: the longest part
		// without one is looked for.
		{expr: `"path":"build.sh"`, o: PatternOptions{Fixed: true}, lit: "build.sh"},
		{expr: `C:\Users\me`, o: PatternOptions{Fixed: true}, lit: "Users"},
		{expr: `src/main.go`, o: PatternOptions{Fixed: true}, lit: "src/main.go", slash: true},
		{expr: `café`, o: PatternOptions{Fixed: true}, lit: "café"},
		// Letters that fold outside ASCII cut the run: K also matches the
		// Kelvin sign, which bytes.EqualFold-like ASCII folding misses.
		// So do k and s, which fold to the Kelvin sign and the long s.
		{expr: `kék`, o: PatternOptions{IgnoreCase: true}},
		{expr: `(?i)tasks`, lit: "ta", fold: true},
		{expr: `Tasks`, lit: "Tasks"},
		// U+FFFD also matches a byte that is not UTF-8.
		{expr: "a�bc", lit: "bc"},
		{expr: ``},
	} {
		p, err := Compile(tc.expr, tc.o)
		if err != nil {
			t.Fatalf("Compile(%q): %v", tc.expr, err)
		}
		if string(p.lit) != tc.lit || p.fold != tc.fold || p.slash != tc.slash {
			t.Errorf("Compile(%q, %+v): literal %q fold %v slash %v, want %q %v %v", tc.expr, tc.o, p.lit, p.fold, p.slash, tc.lit, tc.fold, tc.slash)
		}
	}
}

func TestCompileLineBreaks(t *testing.T) {
	for _, expr := range []string{`a\nb`, `\n`, "a\nb", `[\n]`} {
		if _, err := Compile(expr, PatternOptions{}); !errors.Is(err, ErrLineBreak) {
			t.Errorf("Compile(%q): %v, want ErrLineBreak", expr, err)
		}
	}
	if _, err := Compile("a\nb", PatternOptions{Fixed: true}); !errors.Is(err, ErrLineBreak) {
		t.Errorf("Compile -F with a line break: %v, want ErrLineBreak", err)
	}
	var pe *PatternError
	if _, err := Compile(`a(`, PatternOptions{}); !errors.As(err, &pe) {
		t.Errorf("Compile(`a(`): %v, want a *PatternError", err)
	}
	// Nothing matches across a line: not `.`, not `\s`, not `[^x]`.
	for _, expr := range []string{`a.b`, `a\sb`, `a[^x]b`, `a\Wb`, `(?s)a.b`} {
		p, err := Compile(expr, PatternOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		p.Lines([]byte("a\nb\naxb a b"), func(line []byte, n int, spans [][]int) bool {
			got = append(got, string(line))
			return true
		})
		want := "a b" // the only line with a match, when the class allows a space
		if len(got) > 1 || (len(got) == 1 && got[0] != "axb a b") {
			t.Errorf("%q matched %q, want at most the last line (%s)", expr, got, want)
		}
	}
}

// TestLines compares Lines with a line-by-line regexp.FindAllIndex.
func TestLines(t *testing.T) {
	texts := []string{
		"", "\n", "one line", "first\nsecond\n", "a\n\nb\n\n", "crlf\r\nline\r\n",
		"Error: x\nno\nTypeError: y\nerror z", "ééé\nÉté\n", "x" + strings.Repeat("ab\n", 50) + "y",
	}
	for _, expr := range []string{`^$`, `e`, `Error`, `(?i)error`, `^[a-z]+$`, `b$`, `\bline\b`, `é+`, `a*`, `x|y`, `\r$`} {
		for _, fixed := range []bool{false, true} {
			p, err := Compile(expr, PatternOptions{Fixed: fixed})
			if err != nil {
				t.Fatal(err)
			}
			src := expr
			if fixed {
				src = regexp.QuoteMeta(expr)
			}
			re := regexp.MustCompile(src)
			for _, text := range texts {
				var got, want []string
				p.Lines([]byte(text), func(line []byte, n int, spans [][]int) bool {
					got = append(got, jsonOf(n, string(line), spans))
					return true
				})
				lines := strings.Split(text, "\n")
				if strings.HasSuffix(text, "\n") || text == "" {
					lines = lines[:len(lines)-1]
				}
				for n, line := range lines {
					if spans := re.FindAllStringIndex(line, -1); spans != nil {
						want = append(want, jsonOf(n, line, spans))
					}
				}
				if strings.Join(got, "\n") != strings.Join(want, "\n") {
					t.Errorf("%q (fixed %v) in %q:\n got %q\nwant %q", expr, fixed, text, got, want)
				}
			}
		}
	}
}

func jsonOf(v ...any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestIndexFold(t *testing.T) {
	for _, tc := range []struct {
		text, needle string
		want         int
	}{
		{"Hello World", "world", 6},
		{"HELLO", "hello", 0},
		{"xxHeLlOxx", "hello", 2},
		{"hell", "hello", -1},
		{"", "a", -1},
		{"a-b-A-B", "-b", 1},
		{"zzzzz9zz", "9z", 5},
		{"ERROR error", "error", 0},
		{"no match here", "xyz", -1},
	} {
		for rare := range tc.needle {
			if got := indexFold([]byte(tc.text), []byte(tc.needle), rare); got != tc.want {
				t.Errorf("indexFold(%q, %q, %d) = %d, want %d", tc.text, tc.needle, rare, got, tc.want)
			}
		}
	}
}

// TestIndexRandom compares index with bytes.Index (and, folding, with
// bytes.Index of lower-cased text) on texts whose bytes repeat, so that
// candidates are often false, for every choice of the rare byte.
func TestIndexRandom(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	const alphabet = "aAbB. "
	word := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[rnd.IntN(len(alphabet))]
		}
		return b
	}
	for range 20000 {
		text, needle := word(rnd.IntN(300)), word(1+rnd.IntN(4))
		for rare := range needle {
			if got, want := indexRare(text, needle, rare), bytes.Index(text, needle); got != want {
				t.Fatalf("indexRare(%q, %q, %d) = %d, want %d", text, needle, rare, got, want)
			}
			lower := bytes.ToLower(needle)
			if got, want := indexFold(text, lower, rare), bytes.Index(bytes.ToLower(text), lower); got != want {
				t.Fatalf("indexFold(%q, %q, %d) = %d, want %d", text, lower, rare, got, want)
			}
		}
	}
}

// TestMayHold checks the prefilter never drops an event whose text holds
// a match, whatever escapes its writer used.
func TestMayHold(t *testing.T) {
	for _, tc := range []struct {
		expr string
		o    PatternOptions
		raw  string
		want bool
	}{
		{"build.sh", PatternOptions{Fixed: true}, `{"a":"run build.sh now"}`, true},
		{"build.sh", PatternOptions{Fixed: true}, `{"a":"run make"}`, false},
		{"build.sh", PatternOptions{Fixed: true}, `{"a":"run \u0062uild.sh"}`, true},
		{"src/a.go", PatternOptions{Fixed: true}, `{"a":"src\/a.go"}`, true},
		{"src/a.go", PatternOptions{Fixed: true}, `{"a":"src-a.go"}`, false},
		{"BUILD", PatternOptions{IgnoreCase: true}, `{"a":"build"}`, true},
		{`say "hi"`, PatternOptions{Fixed: true}, `{"a":"say \"hi\""}`, true},
		{`say "hi"`, PatternOptions{Fixed: true}, `{"a":"said hello"}`, false},
		{`[0-9]+`, PatternOptions{}, `{"a":"none"}`, true}, // no literal: every event is walked
	} {
		p, err := Compile(tc.expr, tc.o)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.MayHold([]byte(tc.raw)); got != tc.want {
			t.Errorf("%q MayHold(%s) = %v, want %v", tc.expr, tc.raw, got, tc.want)
		}
	}
}

// FuzzMayHold: MayHold is false only when no decoded string of the JSON
// holds a match.
func FuzzMayHold(f *testing.F) {
	f.Add("build.sh", `{"a":"run build.sh","b":["x\u0062uild.sh"]}`, false, false)
	f.Add("Err", `{"a":"ERR \/ err"}`, true, false)
	f.Add("a/b", `["a\/b"]`, false, true)
	f.Add(`q"t`, `{"k":"q\"t"}`, false, true)
	f.Fuzz(func(t *testing.T, expr, raw string, fold, fixed bool) {
		if !json.Valid([]byte(raw)) {
			return
		}
		p, err := Compile(expr, PatternOptions{Fixed: fixed, IgnoreCase: fold})
		if err != nil {
			return
		}
		if p.MayHold([]byte(raw)) {
			return
		}
		var tx texts
		tx.walk([]byte(raw), func(s []byte) bool {
			p.Lines(s, func(line []byte, _ int, _ [][]int) bool {
				t.Fatalf("MayHold(%s) is false, yet %q matches %q", raw, expr, line)
				return false
			})
			return true
		})
	})
}

func TestLinesStops(t *testing.T) {
	p, _ := Compile("a", PatternOptions{})
	n := 0
	if p.Lines([]byte("a\na\na"), func([]byte, int, [][]int) bool { n++; return n < 2 }) {
		t.Error("Lines reported no stop")
	}
	if n != 2 {
		t.Errorf("Lines went on after false: %d calls", n)
	}
	if !bytes.Equal(p.lit, []byte("a")) {
		t.Errorf("lit %q", p.lit)
	}
}
