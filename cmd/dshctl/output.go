package main

import (
	"embed"
	"slices"
	"strings"

	"github.com/dshctl/dshctl/internal/termui"
	"github.com/spf13/cobra"
)

// Formats of the commands, for -o and its completion (setFormats):
// listFormats for those whose default is a table (list, stat, append,
// verify, export), catFormats for cat.
var (
	listFormats = []string{termui.FormatTable, termui.FormatJSON, termui.FormatJSONL}
	catFormats  = []string{termui.FormatJSONL, termui.FormatJSON, termui.FormatText}
)

// outputFormat returns the -o value, defaulting to def, or a usage error
// when the command does not support it.
func (g *globals) outputFormat(def string, allowed ...string) (string, error) {
	f := g.output
	if f == "" {
		return def, nil
	}
	if !slices.Contains(allowed, f) {
		return "", termui.Usagef("unsupported output format %q (want %s)", f, strings.Join(allowed, "|"))
	}
	return f, nil
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

// help is the long help text of the command name (its file without the
// final newline).
func help(name string) string {
	b, err := helpTexts.ReadFile("help/" + name + ".txt")
	if err != nil {
		panic("no help text for " + name) // a build mistake, caught by every test
	}
	return strings.TrimSuffix(string(b), "\n")
}
