package main

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"

	"github.com/dshctl/dshctl/internal/export"
	"github.com/dshctl/dshctl/internal/sessionview"
	"github.com/dshctl/dshctl/internal/store"
	"github.com/dshctl/dshctl/internal/termui"
	"github.com/spf13/cobra"
)

type exportOptions struct {
	out         string
	all         bool
	noSubagents bool
	force       bool
	jobs        int
}

func newExportCmd(e *env, g *globals) *cobra.Command {
	var o exportOptions
	cmd := &cobra.Command{
		Use:   "export [SESSION...]",
		Short: "Write a session and its subagents to a ZIP",
		Long: `Write a ZIP of a session: its log as canonical JSONL (session.jsonl for a
format v0 log, session.v<N>.jsonl for later formats), then the log of every
session descending from it (sessions whose parentSession is this one, and
theirs, recursively: subagents and forks) as subagents/<id>/session….jsonl,
unless --no-subagents.

The ZIP is made from the events the store serves, not from its files, so
every backend gives the same bytes, and the same session always gives the same
bytes: fixed entry order, each entry dated at its session's creation, DEFLATE
level 6. The log is streamed: memory stays small however large it is. Entry
names are relative and safe whatever the ids hold: every character of an id
outside A-Za-z0-9_- becomes _.

The ZIP goes to dsh-session-<id>.zip in the current folder (with the same
rule for the id), to -O FILE, into -O FOLDER/, or to standard output with
-O -. An existing file is kept unless --force. The ZIP is written to a
temporary file and renamed when complete, so a failed export, or one stopped
by Ctrl-C, leaves nothing behind. New files are readable by their owner only
(0600), like dsh's logs; --force keeps the mode of a file it replaces.

With several sessions, or --all, each session gets its own ZIP in the folder
-O names (default: the current folder), several at a time. A session that
fails is reported and the others are still exported.`,
		Example: `  dshctl export session-4f1c                     # ./dsh-session-session-4f1c2a9e-….zip
  dshctl export -O bug-1234.zip session-4f1c
  dshctl export --no-subagents session-4f1c
  dshctl export -O - session-4f1c | ssh host 'cat > session.zip'
  dshctl export --all -O backup/                 # one ZIP per session of the store
  dshctl export -O out/ session-4f1c session-7a2b`,
		ValidArgsFunction: completeSessions(e, g, true),
		RunE: func(cmd *cobra.Command, args []string) error {
			format, err := g.outputFormat(formatTable, listFormats...)
			if err != nil {
				return err
			}
			if err := o.check(g, args); err != nil {
				return err
			}
			if o.all || len(args) > 1 {
				return exportMany(cmd.Context(), e, g, format, &o, args)
			}
			return exportOne(cmd.Context(), e, g, format, &o, args[0])
		},
	}
	setFormats(cmd, listFormats...)
	f := cmd.Flags()
	f.StringVarP(&o.out, "out", "O", "", "write the ZIP to `FILE`, into a folder (one that exists, or ending in /), or to standard output (-)")
	f.BoolVarP(&o.all, "all", "a", false, "export every session of the store, one ZIP each")
	f.BoolVar(&o.noSubagents, "no-subagents", false, "leave out the sessions that descend from the exported one")
	f.BoolVar(&o.force, "force", false, "replace existing files (and with -O -, write to a terminal)")
	f.IntVarP(&o.jobs, "jobs", "j", 0, "export `N` sessions at a time (default: one per CPU)")
	return cmd
}

// check rejects flag combinations that mean nothing.
func (o *exportOptions) check(g *globals, args []string) error {
	many := o.all || len(args) > 1
	switch {
	case o.all && len(args) > 0:
		return termui.Usagef("--all exports every session: name none")
	case !o.all && len(args) == 0:
		return termui.Usagef("name the session to export, or --all")
	case o.jobs < 0:
		return termui.Usagef("--jobs must not be negative")
	case o.out == "-" && many:
		return termui.Usagef("-O - writes one ZIP: with several sessions, -O names a folder")
	case o.out == "-" && g.output != "":
		return termui.Usagef("with -O - the ZIP is the output: -o has nothing to print")
	}
	if dir := cmp.Or(o.out, "."); many {
		if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
			return termui.Usagef("-O %s is a file: with several sessions, -O names a folder", dir)
		}
	}
	return nil
}

// exportStore is how export opens stores: it shows a plugin's events, as
// cat does.
var exportStore = store.Options{AllowUnknownTypes: true}

// exportOne writes one session's ZIP (export.ToFile), or streams it to
// standard output (export.Session), with a bar of the events written.
func exportOne(ctx context.Context, e *env, g *globals, format string, o *exportOptions, arg string) error {
	s, err := g.openSession(ctx, e, arg, exportStore)
	if err != nil {
		return err
	}
	defer s.Close()
	bar := e.out(format).NewBar("exporting events")
	opts := export.Options{NoSubagents: o.noSubagents}
	if e.stderrTTY { // the bar is for people only
		opts.Progress = bar.Track
	}
	if o.out == "-" {
		if e.stdoutTTY && !o.force {
			return termui.WithHint(errors.New("refusing to write a ZIP to a terminal"), "redirect standard output, or use -O FILE")
		}
		w := bufio.NewWriterSize(e.stdout, 256<<10)
		entries, err := export.Session(ctx, s.Service, s.ID, w, opts)
		if err == nil {
			err = w.Flush()
		}
		bar.Finish()
		sessionview.WarnUnsupported(e.stderr, entries)
		return explainExport(err)
	}
	r, err := export.ToFile(ctx, s.Service, s.ID, o.out, o.force, opts)
	bar.Finish()
	if err != nil {
		return explainExport(err)
	}
	sessionview.WarnUnsupported(e.stderr, r.Entries)
	return sessionview.PrintExports(e.out(format), []export.Result{r})
}

// exportMany writes a ZIP per session into a folder, several at a time
// (export.ToDir), with a bar of the sessions done. A session that fails is
// reported and the others go on.
func exportMany(ctx context.Context, e *env, g *globals, format string, o *exportOptions, args []string) error {
	dir := cmp.Or(o.out, ".")
	ss, err := g.openSessions(ctx, e, args, exportStore) // --all: no arguments, the whole store
	defer ss.Close()
	if err != nil {
		return err
	}
	var sources []export.Source
	seen := map[string]bool{}
	for _, s := range ss.Sessions {
		if !seen[s.ID] {
			seen[s.ID] = true
			sources = append(sources, export.Source{Service: s.Service, ID: s.ID})
		}
	}
	if o.all {
		if sources, err = export.StoreSources(ctx, ss.Whole); err != nil {
			return explainExport(err)
		}
		if len(sources) == 0 {
			fmt.Fprintln(e.stderr, "no sessions to export")
			return nil
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	bar := newProgress(e, format, "exporting sessions", len(sources))
	results := export.ToDir(ctx, sources, dir, export.DirOptions{
		Options: export.Options{NoSubagents: o.noSubagents},
		Force:   o.force,
		Jobs:    o.jobs,
		Done:    func(export.Result) { bar.Add(1) },
	})
	bar.Finish()
	var ok []export.Result
	for _, r := range results {
		switch {
		case r.Err == nil:
			sessionview.WarnUnsupported(e.stderr, r.Entries)
			ok = append(ok, r)
		case ctx.Err() == nil || !errors.Is(r.Err, context.Canceled): // an interruption is said once, below
			fmt.Fprintf(e.stderr, "dshctl: export %q: %s\n", r.ID, termui.OneLineError(sessionview.Explain(r.Err)))
		}
	}
	if err := sessionview.PrintExports(e.out(format), ok); err != nil {
		return err
	}
	failed := fmt.Sprintf("%d of %s not exported", len(results)-len(ok), termui.Count(len(results), "session"))
	switch {
	case ctx.Err() != nil:
		return errors.New("export interrupted: " + failed)
	case len(ok) == len(results):
		return nil
	case slices.ContainsFunc(results, func(r export.Result) bool { return errors.Is(r.Err, export.ErrExists) }):
		return termui.WithHint(errors.New(failed), "use --force to replace existing files")
	}
	return errors.New(failed)
}

// explainExport words an export's failure for the command line.
func explainExport(err error) error {
	switch {
	case errors.Is(err, context.Canceled):
		return errors.New("export interrupted")
	case errors.Is(err, export.ErrExists):
		return termui.WithHint(err, "use --force to replace it, or -O to write elsewhere")
	case errors.As(err, new(*export.SubagentError)):
		return termui.WithHint(err, "--no-subagents exports the session without its subagents")
	}
	return sessionview.Explain(err)
}
