package termui

import (
	"bytes"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestProgressOnlyOnATerminalAfterADelay: a bar shows on a terminal after
// a second, never when stderr is piped or in JSON mode.
func TestProgressOnlyOnATerminalAfterADelay(t *testing.T) {
	clock := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	var stderr bytes.Buffer
	o := Out{Stderr: &stderr, ErrTTY: true, Now: func() time.Time { return clock }, Format: FormatTable}

	p := o.NewProgress("reading", 10)
	p.Add(3)
	if stderr.Len() != 0 {
		t.Fatalf("bar shown before the delay: %q", stderr.String())
	}
	clock = clock.Add(2 * time.Second)
	p.Add(1)
	p.Finish()
	if !strings.Contains(stderr.String(), "reading") {
		t.Fatalf("no bar after the delay: %q", stderr.String())
	}

	for _, tc := range []struct {
		tty    bool
		format string
	}{{false, FormatTable}, {true, FormatJSON}, {true, FormatJSONL}} {
		stderr.Reset()
		o := Out{Stderr: &stderr, ErrTTY: tc.tty, Now: func() time.Time { return clock }, Format: tc.format}
		p := o.NewProgress("reading", 10)
		clock = clock.Add(2 * time.Second)
		p.Add(5)
		p.Finish()
		if stderr.Len() != 0 {
			t.Errorf("tty=%v format=%s: bar shown: %q", tc.tty, tc.format, stderr.String())
		}
	}
}

// TestColour: only on a terminal, without NO_COLOR, TERM not dumb.
func TestColour(t *testing.T) {
	for _, tc := range []struct {
		tty           bool
		noColor, term string
		want          bool
	}{
		{true, "", "xterm", true},
		{false, "", "xterm", false},
		{true, "1", "xterm", false},
		{true, "", "dumb", false},
	} {
		getenv := func(k string) string { return map[string]string{"NO_COLOR": tc.noColor, "TERM": tc.term}[k] }
		if got := Colour(tc.tty, getenv); got != tc.want {
			t.Errorf("tty=%v NO_COLOR=%q TERM=%q: colour %v, want %v", tc.tty, tc.noColor, tc.term, got, tc.want)
		}
	}
}

func TestPagerProgram(t *testing.T) {
	for in, want := range map[string]string{
		"less -FRX":          "less",
		"  most  ":           "most",
		"LESS=R LV=-c less":  "less",
		"LESS=R":             "",
		"/usr/bin/less -R":   "/usr/bin/less",
		"nosuchpager --flag": "nosuchpager",
	} {
		if runtime.GOOS == "windows" && strings.Contains(in, "=") {
			continue
		}
		if got := pagerProgram(in); got != want {
			t.Errorf("pagerProgram(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestForcedWidth: DSHCTL_FORCE_TTY's columns, as a number or a share.
func TestForcedWidth(t *testing.T) {
	env := func(cols string) func(string) string {
		return func(k string) string { return map[string]string{"COLUMNS": cols}[k] }
	}
	for _, tc := range []struct {
		v     string
		width int
		cols  string
		want  int
	}{
		{"1", 0, "", 1}, // a number is the width, however narrow
		{"120", 0, "", 120},
		{"50%", 200, "", 100},
		{"50%", 0, "90", 45}, // a share of $COLUMNS when the width is unknown
		{"50%", 0, "", DefaultWidth / 2},
		{"true", 0, "", 0}, // anything else: the terminal's own width (Columns decides)
		{"true", 132, "", 132},
		{"-5", 0, "", 0},
		{"0%", 100, "", 100},
	} {
		if got := forcedWidth(tc.v, tc.width, env(tc.cols)); got != tc.want {
			t.Errorf("forcedWidth(%q, %d, COLUMNS=%q) = %d, want %d", tc.v, tc.width, tc.cols, got, tc.want)
		}
	}
}
