package main

import (
	"context"
	"errors"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/dshctl/dshctl/internal/sessionview"
	"github.com/dshctl/dshctl/internal/store"
	"github.com/dshctl/dshctl/internal/termui"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
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
	// termui.Columns).
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
	// maxRecord and maxFrame are the JSONL reader limits (store.Request).
	maxRecord, maxFrame int64
}

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
	return termui.Report(e.stderr, sessionview.AddHint(err), helpCmd)
}

func newRootCmd(e *env, g *globals) *cobra.Command {
	var version bool
	root := &cobra.Command{
		Use:               "dshctl",
		Short:             "Inspect and repair DeepSeek Harness (dsh) session logs",
		Long:              help("dshctl"),
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
	pf.StringVarP(&g.output, "output", "o", "", "output format: table|json|jsonl; cat takes jsonl|json|text, replay and version also text")
	pf.Int64Var(&g.maxRecord, "max-record-bytes", store.DefaultMaxRecordBytes, "longest record of a JSONL log a command reads; a read holds up to twice this in memory")
	pf.Int64Var(&g.maxFrame, "max-frame-bytes", store.DefaultMaxFrameBytes, "most decoded content of one zstd frame a command reads")
	root.PersistentPreRunE = func(*cobra.Command, []string) error {
		if g.maxRecord <= 0 || g.maxFrame <= 0 {
			return termui.Usagef("--max-record-bytes and --max-frame-bytes must be positive")
		}
		return nil
	}
	root.Flags().BoolVar(&version, "version", false, "show dshctl's version, commit and Go version")

	root.AddCommand(
		newListCmd(e, g),
		newStatCmd(e, g),
		newCatCmd(e, g),
		newGrepCmd(e, g),
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
		err := termui.Usagef("unknown command %q for %q", args[0], cmd.CommandPath())
		if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
			return termui.WithHint(err, "did you mean "+strings.Join(s, " or ")+"?")
		}
		return err
	}
	root.RunE = func(cmd *cobra.Command, _ []string) error {
		if version {
			return printVersion(e, g)
		}
		return cmd.Help()
	}
	registerCompletions(root)
	return root
}

// flagError words the errors of parsing flags as usage errors: a value
// that is not a number says so, not strconv's message (termui.InvalidValue).
func flagError(cmd *cobra.Command, err error) error {
	var inv *pflag.InvalidValueError
	var nf *pflag.NotExistError
	switch {
	case errors.As(err, &inv):
		return termui.InvalidValue(inv.GetFlag().Name, inv.GetValue(), inv.GetFlag().Value.Type(), err)
	case errors.As(err, &nf) && nf.GetSpecifiedName() == "version" && cmd.Name() == "append":
		return termui.Usage(termui.WithHint(err, "--version is dshctl's own (dshctl --version); the log format of a new session is --format-version"))
	case errors.As(err, &nf) && nf.GetSpecifiedName() == "version" && cmd.HasParent():
		return termui.Usage(termui.WithHint(err, "--version is dshctl's own: dshctl --version, or dshctl version"))
	}
	return termui.Usage(err)
}

// wrapArgs turns a command's argument validation errors into usage errors.
func wrapArgs(c *cobra.Command) {
	if c.Args == nil {
		return
	}
	check := c.Args
	c.Args = func(cmd *cobra.Command, args []string) error {
		if err := check(cmd, args); err != nil {
			return termui.Usage(err)
		}
		return nil
	}
}
