package search

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

// dfaPatterns are expressions the dfa must answer as regexp does: classes,
// counted repetitions, alternations, empty matches, every empty-width
// assertion, case folding, runes of several bytes.
var dfaPatterns = []string{
	`[0-9a-f]{8}-[0-9a-f]{4}`, `a`, `ab|cd`, `a*`, `^$`, `^`, `$`, `^a`, `a$`, `^a.*b$`,
	`\bfoo\b`, `\Bo`, `o\B`, `\b`, `\B`, `\Afoo`, `foo\z`, `\A\z`, `x+y?z*`, `(?i)straße`,
	`(?i)k`, `é+`, `[^a-z]`, `.`, `..`, `[\s\S]x`, `\d{3,}`, `\w+@\w+`, `(a|b)*c`,
	`(?i)[a-f0-9]{4}`, `日本`, `\pL{2}`, `[^\x00-\x7f]`, "\ufffd", `(?:)`, `a{0}`,
	`(?U)a+?b`, `[[:upper:]][[:lower:]]+`, `(foo|foobar)baz`, `\.\.\.`,
}

// dfaTexts builds random texts of lines from an alphabet that meets the
// patterns: letters, digits, '-', spaces, runes of 2 to 4 bytes and bytes
// that are not UTF-8.
func dfaText(r *rand.Rand) []byte {
	alphabet := []string{"a", "b", "c", "d", "e", "f", "0", "9", "x", "y", "z", "o", "foo", "bar", "baz", "-", " ", "\n", "\n",
		"_", "A", "K", "\u212a", "é", "ß", "SS", "日本", "\xff", "\xe6\x97", "straße", "...", "@", "\r", "\t", "\ufffd"}
	var b []byte
	for range r.IntN(40) {
		b = append(b, alphabet[r.IntN(len(alphabet))]...)
	}
	return b
}

// linesByRegexp returns the lines of text that regexp finds a match in,
// each line taken alone.
func linesByRegexp(re *regexp.Regexp, text []byte) []string {
	var got []string
	if len(text) == 0 {
		return nil
	}
	lines := bytes.Split(text, []byte("\n"))
	if text[len(text)-1] == '\n' {
		lines = lines[:len(lines)-1]
	}
	for _, l := range lines {
		if re.Match(l) {
			got = append(got, string(l))
		}
	}
	return got
}

func linesByDFA(d *dfa, text []byte) []string {
	var got []string
	for pos := 0; pos < len(text); {
		start, end := d.line(text, pos)
		if start < 0 {
			break
		}
		got = append(got, string(text[start:end]))
		pos = end + 1
	}
	return got
}

func TestDFALines(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, expr := range dfaPatterns {
		p, err := Compile(expr, PatternOptions{})
		if err != nil {
			t.Fatalf("Compile(%q): %v", expr, err)
		}
		dp := newDFAProg(p.re.String())
		if dp == nil {
			t.Fatalf("%q: no dfa", expr)
		}
		d := dp.get()
		for range 2000 {
			text := dfaText(r)
			got, want := linesByDFA(d, text), linesByRegexp(p.re, text)
			if strings.Join(got, "\n") != strings.Join(want, "\n") || len(got) != len(want) {
				t.Fatalf("%q in %q: dfa lines %q, regexp %q", expr, text, got, want)
			}
		}
	}
}

// TestDFAReset checks that a dfa whose table fills up starts it again and
// still answers right.
func TestDFAReset(t *testing.T) {
	// The dfa of "an a 12 letters before the end" has 2^13 states.
	p, err := Compile(`a[ab]{12}$`, PatternOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d := newDFAProg(p.re.String()).get()
	r := rand.New(rand.NewPCG(3, 4))
	resets := d.resets
	for range 3000 {
		text := make([]byte, 200)
		for i := range text {
			text[i] = "ab"[r.IntN(2)]
		}
		for i := 0; i < len(text); i += 1 + r.IntN(40) {
			text[i] = '\n'
		}
		got, want := linesByDFA(d, text), linesByRegexp(p.re, text)
		if strings.Join(got, "\n") != strings.Join(want, "\n") || len(got) != len(want) {
			t.Fatalf("in %q: dfa lines %q, regexp %q", text, got, want)
		}
	}
	if d.resets == resets {
		t.Error("the table never filled up: the test does not test resets")
	}
}

func FuzzDFA(f *testing.F) {
	for _, e := range dfaPatterns {
		f.Add(e, "foo bar\n0123abcd-ef01\nstraße é\n")
	}
	f.Fuzz(func(t *testing.T, expr, text string) {
		p, err := Compile(expr, PatternOptions{})
		if err != nil || p.dfa == nil {
			return
		}
		d := p.dfa.get()
		got, want := linesByDFA(d, []byte(text)), linesByRegexp(p.re, []byte(text))
		if strings.Join(got, "\n") != strings.Join(want, "\n") || len(got) != len(want) {
			t.Fatalf("%q in %q: dfa lines %q, regexp %q", expr, text, got, want)
		}
	})
}

// TestLinesAsRegexp checks Lines, whichever way it finds the lines (the
// dfa alone, the required string then the dfa, the required string then
// regexp), against regexp on each line alone: the same lines, numbers and
// spans; and that without spans it gives the same lines.
func TestLinesAsRegexp(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	exprs := append([]string{`foo`, `foo|bar`, `fo+`, `x-y`, `-\d`, `(?i)foo`, `ba[rz]`}, dfaPatterns...)
	for _, expr := range exprs {
		for _, o := range []PatternOptions{{}, {IgnoreCase: true}} {
			p, err := Compile(expr, o)
			if err != nil {
				t.Fatalf("Compile(%q): %v", expr, err)
			}
			for range 500 {
				text := dfaText(r)
				var want []string
				lines := bytes.Split(text, []byte("\n"))
				if len(text) > 0 && text[len(text)-1] == '\n' {
					lines = lines[:len(lines)-1]
				}
				for n, l := range lines {
					if len(text) == 0 {
						break
					}
					if sp := p.re.FindAllIndex(l, -1); sp != nil {
						want = append(want, fmt.Sprintf("%d %q %v", n, l, sp))
					}
				}
				var got, bare []string
				p.Lines(text, func(line []byte, n int, spans [][]int) bool {
					got = append(got, fmt.Sprintf("%d %q %v", n, line, spans))
					return true
				})
				m := p.matcher()
				m.lines(text, false, func(line []byte, n int, spans [][]int) bool {
					bare = append(bare, fmt.Sprintf("%d %q %v", n, line, spans))
					return true
				})
				m.close()
				if strings.Join(got, "\n") != strings.Join(want, "\n") {
					t.Fatalf("%q %+v in %q:\n got %q\nwant %q", expr, o, text, got, want)
				}
				if len(bare) != len(want) {
					t.Fatalf("%q %+v in %q without spans: %q, want the lines of %q", expr, o, text, bare, want)
				}
			}
		}
	}
}
