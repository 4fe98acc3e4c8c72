// Package termui is how dshctl shows things: to people on a terminal
// (aligned tables fitted to its width, relative times, a pager, progress
// bars) and to scripts when output is piped (tab-separated machine values,
// RFC 3339 times, JSON). It decides nothing about what is shown, only how;
// it knows no command line library.
package termui

import (
	"os"
	"strconv"
	"strings"

	"golang.org/x/term"
)

// ForceTTYEnv makes dshctl print to stdout as to a terminal, as gh's
// GH_FORCE_TTY does: set to a number, the terminal is that many columns
// wide; to a percentage ("80%"), that share of the terminal's width (or
// of $COLUMNS, else DefaultWidth); to anything else, as wide as stdout's
// terminal, or $COLUMNS, else DefaultWidth.
const ForceTTYEnv = "DSHCTL_FORCE_TTY"

// TestTTYEnv makes dshctl treat the streams it names as terminals
// ("stdin,stdout,stderr", any subset, or "all"), so that tests can reach
// what only people see on each stream (a progress bar on stderr, append's
// closers from a terminal's stdin). Only tests set it; users have
// ForceTTYEnv.
const TestTTYEnv = "DSHCTL_TEST_TTY"

// DefaultWidth is the width of a terminal whose size cannot be read.
const DefaultWidth = 80

// Terminals says which of the process's standard streams are terminals,
// and how wide stdout is (0 when unknown).
type Terminals struct {
	Stdin, Stdout, Stderr bool
	Width                 int
}

// Detect reads which standard streams are terminals, and stdout's width,
// with ForceTTYEnv and TestTTYEnv (read through getenv) standing in for
// terminals.
func Detect(getenv func(string) string) Terminals {
	isTTY := func(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }
	t := Terminals{Stdin: isTTY(os.Stdin), Stdout: isTTY(os.Stdout), Stderr: isTTY(os.Stderr)}
	if t.Stdout {
		if w, _, err := term.GetSize(int(os.Stdout.Fd())); err == nil && w > 0 {
			t.Width = w
		}
	}
	if v := getenv(ForceTTYEnv); v != "" {
		t.Stdout, t.Width = true, forcedWidth(v, t.Width, getenv)
	}
	if v := getenv(TestTTYEnv); v != "" {
		for _, s := range strings.Split(v, ",") {
			all := s == "all"
			t.Stdin = t.Stdin || all || s == "stdin"
			t.Stdout = t.Stdout || all || s == "stdout"
			t.Stderr = t.Stderr || all || s == "stderr"
		}
	}
	return t
}

// forcedWidth is the width ForceTTYEnv's value v gives a terminal whose
// own width is width (0 when unknown): 0 means Columns decides.
func forcedWidth(v string, width int, getenv func(string) string) int {
	if n, err := strconv.Atoi(v); err == nil && n > 0 {
		return n
	}
	if p, ok := strings.CutSuffix(v, "%"); ok {
		if n, err := strconv.Atoi(p); err == nil && n > 0 {
			return max(1, Columns(width, getenv)*n/100)
		}
	}
	return width
}

// Columns is the width output for people fits: the terminal's (width),
// else $COLUMNS, else DefaultWidth.
func Columns(width int, getenv func(string) string) int {
	if width > 0 {
		return width
	}
	if getenv != nil {
		if n, err := strconv.Atoi(getenv("COLUMNS")); err == nil && n > 0 {
			return n
		}
	}
	return DefaultWidth
}

// Colour reports whether output to a terminal may be coloured: never when
// NO_COLOR is set or TERM is dumb.
func Colour(tty bool, getenv func(string) string) bool {
	return tty && getenv("NO_COLOR") == "" && getenv("TERM") != "dumb"
}
