package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestRelTime(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		ago  time.Duration
		want string
	}{
		{5 * time.Second, "5s ago"},
		{3 * time.Minute, "3m ago"},
		{3 * time.Hour, "3h ago"},
		{47 * time.Hour, "47h ago"},
		{3 * 24 * time.Hour, "3d ago"},
		{120 * 24 * time.Hour, "4mo ago"},
		{800 * 24 * time.Hour, "2y ago"},
		{-2 * time.Hour, "in 2h"},
	} {
		if got := relTime(now.Add(-tc.ago).UnixMilli(), now); got != tc.want {
			t.Errorf("relTime(-%v) = %q, want %q", tc.ago, got, tc.want)
		}
	}
}

func TestHumanBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 108464: "105.9 KiB", 12 << 20: "12.0 MiB", 3 << 30: "3.0 GiB"} {
		if got := humanBytes(n); got != want {
			t.Errorf("humanBytes(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestProgressAppearsOnlyOnATerminalAfterADelay(t *testing.T) {
	clock := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	var stderr bytes.Buffer
	e := &env{stderr: &stderr, stderrTTY: true, now: func() time.Time { return clock }}

	p := newProgress(e, formatTable, "reading", 10)
	p.add(3)
	if stderr.Len() != 0 {
		t.Fatalf("bar shown before the delay: %q", stderr.String())
	}
	clock = clock.Add(2 * progressDelay)
	p.add(1)
	p.finish()
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
		clock = clock.Add(2 * progressDelay)
		p.add(5)
		p.finish()
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
