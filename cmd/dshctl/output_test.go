package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestProgressAppearsOnlyOnATerminalAfterADelay(t *testing.T) {
	clock := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	var stderr bytes.Buffer
	e := &env{stderr: &stderr, stderrTTY: true, now: func() time.Time { return clock }}

	p := newProgress(e, formatTable, "reading", 10)
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
	}{{false, formatTable}, {true, formatJSON}, {true, formatJSONL}} {
		stderr.Reset()
		e := &env{stderr: &stderr, stderrTTY: tc.tty, now: func() time.Time { return clock }}
		p := newProgress(e, tc.format, "reading", 10)
		clock = clock.Add(2 * time.Second)
		p.Add(5)
		p.Finish()
		if stderr.Len() != 0 {
			t.Errorf("tty=%v format=%s: bar shown: %q", tc.tty, tc.format, stderr.String())
		}
	}
}

func TestColourOnlyOnATerminalWithoutNoColor(t *testing.T) {
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
		e := &env{stdoutTTY: tc.tty, getenv: func(k string) string {
			return map[string]string{"NO_COLOR": tc.noColor, "TERM": tc.term}[k]
		}}
		if got := e.colour(); got != tc.want {
			t.Errorf("tty=%v NO_COLOR=%q TERM=%q: colour %v, want %v", tc.tty, tc.noColor, tc.term, got, tc.want)
		}
	}
}
