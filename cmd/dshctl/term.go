package main

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/term"
)

// testTTYEnv makes dshctl treat the streams it names as terminals
// ("stdin,stdout,stderr", any subset, or "all"), so that tests can reach
// what only people see: tables, wrapping and the pager. Only tests set it.
const testTTYEnv = "DSHCTL_TEST_TTY"

// defaultWidth is the width of a terminal whose size cannot be read.
const defaultWidth = 80

// detectTerminals fills in which of e's streams are terminals, and how wide
// stdout is, from the process's own file descriptors.
func (e *env) detectTerminals() {
	isTTY := func(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }
	e.stdinTTY, e.stdoutTTY, e.stderrTTY = isTTY(os.Stdin), isTTY(os.Stdout), isTTY(os.Stderr)
	if e.stdoutTTY {
		if w, _, err := term.GetSize(int(os.Stdout.Fd())); err == nil && w > 0 {
			e.width = w
		}
	}
	if v := e.getenv(testTTYEnv); v != "" {
		for _, s := range strings.Split(v, ",") {
			all := s == "all"
			e.stdinTTY = e.stdinTTY || all || s == "stdin"
			e.stdoutTTY = e.stdoutTTY || all || s == "stdout"
			e.stderrTTY = e.stderrTTY || all || s == "stderr"
		}
	}
}

// termWidth is the width in columns that output for people fits: the
// terminal's, else $COLUMNS, else 80.
func (e *env) termWidth() int {
	if e.width > 0 {
		return e.width
	}
	if e.getenv != nil {
		if n, err := strconv.Atoi(e.getenv("COLUMNS")); err == nil && n > 0 {
			return n
		}
	}
	return defaultWidth
}

// defaultPager is the pager when neither DSHCTL_PAGER nor PAGER names one:
// less quits when the text fits one screen (-F), passes colours (-R) and
// leaves the text on the screen (-X), as git does.
const defaultPager = "less -FRX"

// pager is long output for people on its way through $PAGER.
type pager struct {
	w    io.WriteCloser
	cmd  *exec.Cmd
	done bool
}

// startPager returns the writer long output for people goes to: a pager
// ($DSHCTL_PAGER, else $PAGER, else less -FRX; "" or "cat" means none) when
// stdout is a terminal and off is not set, else stdout itself. The caller
// must call the returned function once the output is written: it waits for
// the pager. A pager that cannot be started is passed over, like git does.
func (e *env) startPager(off bool) (io.Writer, func() error) {
	none := func() error { return nil }
	if off || !e.stdoutTTY {
		return e.stdout, none
	}
	cmdline, set := e.lookupEnv("DSHCTL_PAGER")
	if !set {
		cmdline, set = e.lookupEnv("PAGER")
	}
	if !set {
		cmdline = defaultPager
	}
	cmdline = strings.TrimSpace(cmdline)
	if cmdline == "" || cmdline == "cat" {
		return e.stdout, none
	}
	var cmd *exec.Cmd
	if runtime.GOOS == "windows" {
		f := strings.Fields(cmdline)
		cmd = exec.Command(f[0], f[1:]...)
	} else {
		cmd = exec.Command("/bin/sh", "-c", cmdline)
	}
	cmd.Stdout, cmd.Stderr = e.stdout, e.stderr
	cmd.Env = os.Environ()
	if e.getenv("LESS") == "" {
		cmd.Env = append(cmd.Env, "LESS=FRX")
	}
	in, err := cmd.StdinPipe()
	if err != nil {
		return e.stdout, none
	}
	if err := cmd.Start(); err != nil {
		return e.stdout, none
	}
	p := &pager{w: in, cmd: cmd}
	return p, p.wait
}

func (p *pager) Write(b []byte) (int, error) {
	n, err := p.w.Write(b)
	if isBrokenPipe(err) {
		// The reader quit the pager: the rest is not wanted. Writers stop
		// at the error; wait makes it a success.
		p.done = true
	}
	return n, err
}

// wait closes the pager's input and waits for it to exit.
func (p *pager) wait() error {
	p.w.Close()
	err := p.cmd.Wait()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return nil // the pager's own failure is on the screen already
	}
	return err
}

// quitEarly reports whether err is only the reader having quit the pager.
func quitEarly(w io.Writer, err error) bool {
	p, ok := w.(*pager)
	return ok && p.done && isBrokenPipe(err)
}

func isBrokenPipe(err error) bool {
	return err != nil && (errors.Is(err, syscall.EPIPE) || errors.Is(err, os.ErrClosed))
}

// lookupEnv is os.LookupEnv through e: set when the variable is set, even
// to "". e.getenv cannot tell unset from empty, so a lookup function is
// used when e has one.
func (e *env) lookupEnv(key string) (string, bool) {
	if e.lookup != nil {
		return e.lookup(key)
	}
	v := e.getenv(key)
	return v, v != ""
}
