package termui

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
)

// defaultPager is the pager when neither DSHCTL_PAGER nor PAGER names one:
// less quits when the text fits one screen (-F), passes colours (-R) and
// leaves the text on the screen (-X), as git does.
const defaultPager = "less -FRX"

// pager is long output for people on its way through a pager.
type pager struct {
	w    io.WriteCloser
	cmd  *exec.Cmd
	done bool
}

// PagerCommand is the pager the environment names: $DSHCTL_PAGER, else
// $PAGER, else less -FRX; "" or "cat" means none. lookup is os.LookupEnv
// or a stand-in: a variable set to "" turns paging off.
func PagerCommand(lookup func(string) (string, bool)) string {
	cmdline, set := lookup("DSHCTL_PAGER")
	if !set {
		cmdline, set = lookup("PAGER")
	}
	if !set {
		cmdline = defaultPager
	}
	if cmdline = strings.TrimSpace(cmdline); cmdline == "cat" {
		return ""
	}
	return cmdline
}

// StartPager returns the writer long output for people goes to: the pager
// cmdline (see PagerCommand) writing to stdout, or stdout itself when
// cmdline is empty. Callers page only when stdout is a terminal. They must
// call the returned function once the output is written: it waits for the
// pager. A pager that cannot be found or started is passed over with a
// warning on stderr, and the output goes to stdout, as git does.
func StartPager(cmdline string, stdout, stderr io.Writer) (io.Writer, func() error) {
	none := func() error { return nil }
	if cmdline == "" {
		return stdout, none
	}
	skip := func(err error) (io.Writer, func() error) {
		fmt.Fprintf(stderr, "dshctl: warning: cannot run the pager %q (%v); writing to the terminal\n", cmdline, err)
		return stdout, none
	}
	// The shell would start whatever the command is, and a pager it cannot
	// find would fail only once the output had gone into the shell.
	name := pagerProgram(cmdline)
	if name == "" {
		return stdout, none
	}
	if _, err := exec.LookPath(name); err != nil {
		return skip(err)
	}
	var cmd *exec.Cmd
	if runtime.GOOS == "windows" {
		f := strings.Fields(cmdline)
		cmd = exec.Command(f[0], f[1:]...)
	} else {
		cmd = exec.Command("/bin/sh", "-c", cmdline)
	}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if f, ok := stdout.(interface{ File() *os.File }); ok && f.File() != nil {
		cmd.Stdout = f.File() // the terminal itself, which the pager must see
	}
	cmd.Env = os.Environ()
	if os.Getenv("LESS") == "" {
		cmd.Env = append(cmd.Env, "LESS=FRX")
	}
	in, err := cmd.StdinPipe()
	if err != nil {
		return skip(err)
	}
	if err := cmd.Start(); err != nil {
		return skip(err)
	}
	p := &pager{w: in, cmd: cmd}
	return p, p.wait
}

// pagerProgram is the program a pager command line runs: its first word
// after any VAR=value assignments; "" when it has none.
func pagerProgram(cmdline string) string {
	for _, w := range strings.Fields(cmdline) {
		if runtime.GOOS == "windows" || !strings.Contains(w, "=") {
			return w
		}
	}
	return ""
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

// QuitEarly reports whether err, from writing to w, is only the reader
// having quit the pager.
func QuitEarly(w io.Writer, err error) bool {
	p, ok := w.(*pager)
	return ok && p.done && isBrokenPipe(err)
}

func isBrokenPipe(err error) bool {
	return err != nil && (errors.Is(err, syscall.EPIPE) || errors.Is(err, os.ErrClosed))
}

// Page runs print on o.Stdout through a buffer and, when page is set and
// Stdout is a terminal, through the pager lookup names (PagerCommand). A
// reader who quits the pager early is no error.
func (o Out) Page(page bool, lookup func(string) (string, bool), print func(w *bufio.Writer) error) error {
	out, wait := o.Stdout, func() error { return nil }
	if page && o.TTY {
		out, wait = StartPager(PagerCommand(lookup), o.Stdout, o.Stderr)
	}
	w := bufio.NewWriterSize(out, 64<<10)
	err := print(w)
	if ferr := w.Flush(); err == nil {
		err = ferr
	}
	if werr := wait(); err == nil {
		err = werr
	}
	if QuitEarly(out, err) {
		return nil
	}
	return err
}
