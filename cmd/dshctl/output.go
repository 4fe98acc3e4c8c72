package main

import (
	"embed"
	"strings"

	"github.com/dshctl/dshctl/internal/termui"
	"github.com/spf13/cobra"
)

// The -o values of the commands, the first its default: tableFormats for
// those whose output for people is a table or aligned fields (list, stat,
// append, verify, export), textFormats for those that print prose
// (replay, version), catFormats for cat.
var (
	tableFormats = []string{termui.FormatTable, termui.FormatJSON, termui.FormatJSONL}
	textFormats  = []string{termui.FormatText, termui.FormatJSON, termui.FormatJSONL}
	catFormats   = []string{termui.FormatJSONL, termui.FormatJSON, termui.FormatText}
)

// output is a command's -o and --jq.
type output struct {
	format string
	jq     string
}

// addOutput gives cmd its -o, taking formats (the first is the default),
// and --jq. Every command takes both "table" and "text" as the name of its
// output for people, whichever of them it offers. With --jq, which needs
// JSON, -o defaults to the command's JSON (cat's JSONL, otherwise json),
// and what the command prints goes through the expression (termui.JQ).
func addOutput(cmd *cobra.Command, e *env, formats ...string) *output {
	o := &output{}
	en := oneOf(formats...)
	for _, f := range formats {
		switch f {
		case termui.FormatTable:
			en.also = map[string]string{termui.FormatText: f}
		case termui.FormatText:
			en.also = map[string]string{termui.FormatTable: f}
		}
	}
	enumFlag(cmd, &o.format, "output", "o", formats[0], en, "output format")
	usage := "filter the JSON output with a jq `EXPRESSION` (implies -o json; strings print raw)"
	if formats[0] == termui.FormatJSONL { // cat: its output is JSON already
		usage = "filter each JSON line with a jq `EXPRESSION` (-o json: the one document; strings print raw)"
	}
	cmd.Flags().StringVar(&o.jq, "jq", "", usage)
	run := cmd.RunE
	cmd.RunE = func(c *cobra.Command, args []string) error {
		if o.jq == "" {
			return run(c, args)
		}
		json := o.format == termui.FormatJSON || o.format == termui.FormatJSONL
		switch {
		case c.Flags().Changed("output") && !json:
			return termui.Usagef("--jq filters JSON: it does not go with -o %s", o.format)
		case !json:
			o.format = termui.FormatJSON
		}
		q, err := termui.CompileJQ(o.jq)
		if err != nil {
			return termui.Usage(err)
		}
		jw := q.Writer(c.Context(), e.stdout, e.stdoutTTY)
		stdout, tty := e.stdout, e.stdoutTTY
		e.stdout, e.stdoutTTY = jw, false
		err = run(c, args)
		e.stdout, e.stdoutTTY = stdout, tty
		// When the expression failed, the command's writes failed with it:
		// the expression's error says what happened.
		if ferr := jw.Close(); ferr != nil {
			return ferr
		}
		return err
	}
	return o
}

// out is where a command prints its results in format, for the packages
// that print them (termui.Out).
func (e *env) out(format string) termui.Out {
	return termui.Out{Stdout: e.stdout, Stderr: e.stderr, TTY: e.stdoutTTY, ErrTTY: e.stderrTTY,
		Width: termui.Columns(e.width, e.getenv), Colour: termui.Colour(e.stdoutTTY, e.getenv), Now: e.now, Format: format}
}

// lookupEnv is e.lookup, or getenv's answer (unset when empty) without it.
func (e *env) lookupEnv(k string) (string, bool) {
	if e.lookup != nil {
		return e.lookup(k)
	}
	v := e.getenv(k)
	return v, v != ""
}

// changedFlags are the flags among names given on cmd's command line.
func changedFlags(cmd *cobra.Command, names ...string) []string {
	var set []string
	for _, name := range names {
		if cmd.Flags().Changed(name) {
			set = append(set, "--"+name)
		}
	}
	return set
}

// helpTexts are the commands' long help texts, help/<command>.txt: prose
// reads and diffs better as text than as Go strings.
//
//go:embed help/*.txt
var helpTexts embed.FS

// rootHelp is dshctl's own long help: its text, then the exit statuses
// and the environment variables it reads (as the man pages give them).
func rootHelp() string {
	return help("dshctl") + "\n\nExit status:\n" + indent(help("exit-status")) +
		"\n\nEnvironment:\n" + indent(help("environment"))
}

// indent indents every line of s by two spaces.
func indent(s string) string { return "  " + strings.ReplaceAll(s, "\n", "\n  ") }

// help is the long help text of the command name (its file without the
// final newline).
func help(name string) string {
	b, err := helpTexts.ReadFile("help/" + name + ".txt")
	if err != nil {
		panic("no help text for " + name) // a build mistake, caught by every test
	}
	return strings.TrimSuffix(string(b), "\n")
}
