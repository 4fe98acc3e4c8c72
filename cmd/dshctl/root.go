package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/dshctl/dshctl/internal/sessionview"
	"github.com/dshctl/dshctl/internal/store"
	"github.com/dshctl/dshctl/internal/suggest"
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
	store string
	// noPager is --no-pager: long output for people is never paged.
	noPager bool
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
		Long:              rootHelp(),
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
	pf.BoolVar(&g.noPager, "no-pager", false, "do not page long output (cat -o text) on a terminal")
	bytesFlag(pf, &g.maxRecord, "max-record-bytes", store.DefaultMaxRecordBytes, "longest record of a JSONL log a command reads (bytes, or with KiB, MiB, GiB); a read holds up to twice this in memory")
	bytesFlag(pf, &g.maxFrame, "max-frame-bytes", store.DefaultMaxFrameBytes, "most decoded content of one zstd frame a command reads (bytes, or with KiB, MiB, GiB)")
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
	// -o and --jq here are --version's.
	var out *output
	root.RunE = func(cmd *cobra.Command, _ []string) error {
		if version {
			return printVersion(e, out.format)
		}
		return cmd.Help()
	}
	out = addOutput(root, e, textFormats...)
	// Shown in version's help: on the root they would read as every
	// command's.
	root.Flags().MarkHidden("output")
	root.Flags().MarkHidden("jq")
	registerCompletions(root)
	return root
}

// flagError words the errors of parsing flags as usage errors: a value
// that is not a number says so, not strconv's message (termui.InvalidValue).
func flagError(cmd *cobra.Command, err error) error {
	var inv *pflag.InvalidValueError
	var nf *pflag.NotExistError
	var enumErr *EnumError
	var sizeErr *SizeError
	var typeErr *UnknownTypeError
	switch {
	case errors.As(err, &typeErr):
		return termui.Usage(termui.WithHint(fmt.Errorf("invalid --type %q: %w", typeErr.Type, typeErr), typeErr.Hint()))
	case errors.As(err, &inv) && (errors.As(err, &enumErr) || errors.As(err, &sizeErr) || inv.GetFlag().Name == "type"):
		return termui.Usagef("invalid --%s %q: %v", inv.GetFlag().Name, inv.GetValue(), errors.Unwrap(inv))
	case errors.As(err, &inv):
		return termui.InvalidValue(inv.GetFlag().Name, inv.GetValue(), inv.GetFlag().Value.Type(), err)
	case errors.As(err, &nf) && nf.GetSpecifiedName() == "version" && cmd.Name() == "append":
		return termui.Usage(termui.WithHint(err, "--version is dshctl's own (dshctl --version); the log format of a new session is --format-version"))
	case errors.As(err, &nf) && nf.GetSpecifiedName() == "version" && cmd.HasParent():
		return termui.Usage(termui.WithHint(err, "--version is dshctl's own: dshctl --version, or dshctl version"))
	case errors.As(err, &nf) && nf.GetSpecifiedShortnames() == "":
		if near := suggest.Nearest("--"+nf.GetSpecifiedName(), flagNames(cmd), false); len(near) > 0 {
			return termui.Usage(termui.WithHint(err, "did you mean "+strings.Join(near, " or ")+"?"))
		}
	}
	return termui.Usage(err)
}

// flagNames are the long flags cmd takes, its own and inherited, with
// their dashes, but for hidden ones.
func flagNames(cmd *cobra.Command) []string {
	var names []string
	add := func(f *pflag.Flag) {
		if !f.Hidden {
			names = append(names, "--"+f.Name)
		}
	}
	cmd.Flags().VisitAll(add)
	cmd.InheritedFlags().VisitAll(add)
	return names
}

// wrapArgs checks a command's arguments against its usage line first
// (argsOfUse), saying what is missing or extra, then by its own check;
// both fail as usage errors.
func wrapArgs(c *cobra.Command) {
	if c.Args == nil {
		return
	}
	check := c.Args
	c.Args = func(cmd *cobra.Command, args []string) error {
		if err := argsOfUse(cmd, args); err != nil {
			return err
		}
		if err := check(cmd, args); err != nil {
			return termui.Usage(err)
		}
		return nil
	}
}

// argsOfUse checks the number of args against cmd's usage line, whose
// words after the command's name are its arguments: NAME required,
// [NAME] optional, NAME... or [NAME...] repeatable.
func argsOfUse(cmd *cobra.Command, args []string) error {
	words := strings.Fields(cmd.Use)[1:]
	required, most := 0, len(words)
	for _, w := range words {
		if strings.HasSuffix(w, "...") || strings.HasSuffix(w, "...]") {
			most = -1
		}
		if !strings.HasPrefix(w, "[") {
			required++
		}
	}
	usage := "usage: " + cmd.CommandPath()
	if len(words) > 0 {
		usage += " " + strings.Join(words, " ")
	}
	switch {
	case len(args) < required:
		return termui.Usagef("missing %s (%s)", strings.Trim(words[len(args)], "[]."), usage)
	case most >= 0 && len(args) > most && most == 0:
		return termui.Usagef("%s takes no arguments, but was given %q (%s)", cmd.Name(), args[0], usage)
	case most >= 0 && len(args) > most:
		return termui.Usagef("unexpected argument %q after %s (%s)", args[most], strings.Join(words, " "), usage)
	}
	return nil
}
