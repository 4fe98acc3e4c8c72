package main

import (
	"bufio"
	"io"
	"slices"
	"strings"

	"github.com/dshctl/dshctl/internal/termui"
	"github.com/spf13/cobra"
)

// Output formats.
const (
	formatTable = termui.FormatTable
	formatJSON  = termui.FormatJSON
	formatJSONL = termui.FormatJSONL
	formatText  = termui.FormatText
)

// Formats of the commands, for -o and its completion (setFormats).
var (
	listFormats = []string{formatTable, formatJSON, formatJSONL}
	catFormats  = []string{formatJSONL, formatJSON, formatText}
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
		Width: termui.Columns(e.width, e.getenv), Colour: e.colour(), Now: e.now, Format: format}
}

// newProgress is a progress bar on e's stderr, never in JSON mode.
func newProgress(e *env, format, what string, total int) *termui.Progress {
	return e.out(format).NewProgress(what, total)
}

// colour reports whether output to a terminal may use colour.
func (e *env) colour() bool { return termui.Colour(e.stdoutTTY, e.getenv) }

// paged runs print on stdout through a buffer and, when page is set, for
// people (stdout a terminal) and not off, through the pager (see
// termui.StartPager). A reader who quits the pager early is no error.
func (e *env) paged(page, off bool, print func(w *bufio.Writer) error) error {
	out, wait := io.Writer(e.stdout), func() error { return nil }
	if page && !off && e.stdoutTTY {
		lookup := e.lookup
		if lookup == nil {
			lookup = func(k string) (string, bool) { v := e.getenv(k); return v, v != "" }
		}
		out, wait = termui.StartPager(termui.PagerCommand(lookup), e.stdout, e.stderr)
	}
	w := bufio.NewWriterSize(out, 64<<10)
	err := print(w)
	if ferr := w.Flush(); err == nil {
		err = ferr
	}
	if werr := wait(); err == nil {
		err = werr
	}
	if termui.QuitEarly(out, err) {
		return nil
	}
	return err
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
