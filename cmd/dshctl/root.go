package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/dshctl/dshctl/internal/termui"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Exit codes, as cli.md defines them.
const (
	exitOK       = 0
	exitError    = 1 // operational: not found, I/O, lock busy, corrupt store
	exitUsage    = 2 // unknown flag, bad argument
	exitFindings = 3 // the check ran and found problems
)

// env is what a command may use of the outside world; tests replace it.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
	// lookup tells a variable set to "" from an unset one; nil means
	// getenv's answer, unset when empty.
	lookup func(string) (string, bool)
	now    func() time.Time
	// stdinTTY, stdoutTTY and stderrTTY say whether the streams are
	// terminals: tables, colour, wrapping, the pager and progress bars are
	// for people only (see termui.Detect).
	stdinTTY, stdoutTTY, stderrTTY bool
	// width is the terminal's width in columns, 0 when unknown (see
	// termWidth).
	width int
}

func newEnv() *env {
	t := termui.Detect(os.Getenv)
	return &env{
		stdin:    os.Stdin,
		stdout:   os.Stdout,
		stderr:   os.Stderr,
		getenv:   os.Getenv,
		lookup:   os.LookupEnv,
		now:      time.Now,
		stdinTTY: t.Stdin, stdoutTTY: t.Stdout, stderrTTY: t.Stderr,
		width: t.Width,
	}
}

// globals are the flags every command shares.
type globals struct {
	store  string
	output string
}

// usageError marks an error as the user's misuse of the command line.
type usageError struct{ err error }

func (u usageError) Error() string { return u.err.Error() }
func (u usageError) Unwrap() error { return u.err }

func usagef(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

// findingsError says the check ran and found problems (exit 3). Its message
// has been printed already as part of the report.
type findingsError struct{ summary string }

func (f findingsError) Error() string { return f.summary }

// hintError adds a second line telling the user what to do next.
type hintError struct {
	err  error
	hint string
}

func (h hintError) Error() string { return h.err.Error() }
func (h hintError) Unwrap() error { return h.err }

func withHint(err error, hint string) error { return hintError{err, hint} }

// run executes one dshctl invocation and returns its exit code.
func run(args []string, e *env) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	g := &globals{}
	root := newRootCmd(e, g)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	helpCmd := "dshctl"
	if c, _, ferr := root.Find(args); ferr == nil {
		helpCmd = c.CommandPath()
	}
	return report(e, err, helpCmd)
}

// report prints err the way cli.md asks (one line, plus a hint line) and
// maps it to an exit code. helpCmd is the command whose --help a usage error
// points to.
func report(e *env, err error, helpCmd string) int {
	if err == nil {
		return exitOK
	}
	var f findingsError
	if errors.As(err, &f) {
		return exitFindings
	}
	msg := strings.ReplaceAll(err.Error(), "\n", " ")
	if errors.Is(err, context.Canceled) {
		// Ctrl-C or SIGTERM: reads stop where they are, and a write has
		// either finished or not started.
		msg = "interrupted"
	}
	fmt.Fprintf(e.stderr, "dshctl: %s\n", msg)
	var h hintError
	var hinted interface{ Hint() string } // an error that knows its fix
	switch {
	case errors.As(err, &h) && h.hint != "":
		fmt.Fprintf(e.stderr, "hint: %s\n", h.hint)
	case errors.As(err, &hinted) && hinted.Hint() != "":
		fmt.Fprintf(e.stderr, "hint: %s\n", hinted.Hint())
	}
	var u usageError
	if errors.As(err, &u) {
		fmt.Fprintf(e.stderr, "hint: run '%s --help' for usage\n", helpCmd)
		return exitUsage
	}
	return exitError
}

func newRootCmd(e *env, g *globals) *cobra.Command {
	var version bool
	root := &cobra.Command{
		Use:   "dshctl",
		Short: "Inspect and repair DeepSeek Harness (dsh) session logs",
		Long: `dshctl inspects and repairs the session logs of the DeepSeek Harness (dsh).

The store is $DSH_HOME/sessions (or ~/.dsh/sessions) unless --store or
DSHCTL_STORE names another. A session is named by its id, a unique id prefix,
or the path of its folder or log file.

On a terminal, lists are tables and times are relative; piped, every command
prints tab-separated machine values (full ids, RFC 3339 times, bytes as
integers), one line per row. -o json and -o jsonl give every field.`,
		SilenceUsage:      true,
		SilenceErrors:     true,
		DisableAutoGenTag: true,
		// Mistyped commands get "did you mean" hints (see root.Args).
		SuggestionsMinimumDistance: 2,
		CompletionOptions:          cobra.CompletionOptions{DisableDefaultCmd: true},
	}
	root.SetOut(e.stdout)
	root.SetErr(e.stderr)
	root.SetIn(e.stdin)
	root.SetFlagErrorFunc(flagError)
	pf := root.PersistentFlags()
	pf.StringVar(&g.store, "store", "", "session store: a JSONL root directory, a SQLite database (sqlite:PATH) or a dsh home (default $DSHCTL_STORE, $DSH_HOME/sessions, ~/.dsh/sessions)")
	pf.StringVarP(&g.output, "output", "o", "", "output format: table|json|jsonl (cat also: text)")
	root.Flags().BoolVar(&version, "version", false, "show dshctl's version, commit and Go version")

	root.AddCommand(
		newListCmd(e, g),
		newStatCmd(e, g),
		newCatCmd(e, g),
		newAppendCmd(e, g),
		newVerifyCmd(e, g),
		newExportCmd(e, g),
		newReplayCmd(e, g),
		newVersionCmd(e, g),
	)
	root.AddCommand(newCompletionCmd(root), newManCmd(root))
	// Unknown subcommands and bad positional arguments are usage errors.
	for _, c := range root.Commands() {
		wrapArgs(c)
	}
	root.Args = func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return nil
		}
		err := usagef("unknown command %q for %q", args[0], cmd.CommandPath())
		if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
			return withHint(err, "did you mean "+strings.Join(s, " or ")+"?")
		}
		return err
	}
	root.RunE = func(cmd *cobra.Command, _ []string) error {
		if version {
			return printVersion(e.stdout)
		}
		return cmd.Help()
	}
	registerCompletions(root)
	return root
}

// flagError words the errors of parsing flags as usage errors: a value
// that is not a number says so, not strconv's message.
func flagError(cmd *cobra.Command, err error) error {
	var inv *pflag.InvalidValueError
	var nf *pflag.NotExistError
	switch {
	case errors.As(err, &inv):
		f := inv.GetFlag()
		why := "not a valid value"
		var ne *strconv.NumError
		switch {
		case errors.As(err, &ne) && errors.Is(ne.Err, strconv.ErrRange):
			why = "out of range"
		case errors.As(err, &ne) && strings.HasPrefix(f.Value.Type(), "bool"):
			why = "not true or false"
		case errors.As(err, &ne):
			why = "not a number"
		}
		return usageError{fmt.Errorf("invalid --%s %q: %s", f.Name, inv.GetValue(), why)}
	case errors.As(err, &nf) && nf.GetSpecifiedName() == "version" && cmd.HasParent():
		return usageError{withHint(err, "--version is dshctl's own (dshctl --version); the log format of a new session is --format-version")}
	}
	return usageError{err}
}

// wrapArgs turns a command's argument validation errors into usage errors.
func wrapArgs(c *cobra.Command) {
	if c.Args == nil {
		return
	}
	check := c.Args
	c.Args = func(cmd *cobra.Command, args []string) error {
		if err := check(cmd, args); err != nil {
			return usageError{err}
		}
		return nil
	}
}
