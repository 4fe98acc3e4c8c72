package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/dshctl/dshctl/internal/buildinfo"
	"github.com/dshctl/dshctl/internal/export"
	"github.com/dshctl/dshctl/internal/inspect"
	"github.com/dshctl/dshctl/internal/seam"
	"github.com/dshctl/dshctl/internal/sessionview"
	"github.com/dshctl/dshctl/internal/store"
	"github.com/dshctl/dshctl/internal/termui"
	"github.com/dshctl/dshctl/internal/timespec"
	"github.com/spf13/cobra"
)

type exportOptions struct {
	out         string
	all         bool
	noSubagents bool
	force       bool
	jobs        int
	times       timeFlags
	active      timespec.Range
	// includeRaw makes a bug report (export.Bundle).
	includeRaw bool
}

func newExportCmd(e *env, g *globals) *cobra.Command {
	var o exportOptions
	var out *output
	cmd := &cobra.Command{
		Use:   "export [SESSION...]",
		Short: "Write a session and its subagents to a ZIP",
		Long:  help("export"),
		Example: `  dshctl export session-4f1c                     # ./dsh-session-session-4f1c2a9e-….zip
  dshctl export -O bug-1234.zip session-4f1c
  dshctl export --no-subagents session-4f1c
  dshctl export -O - session-4f1c | ssh host 'cat > session.zip'
  dshctl export --all -O backup/                 # one ZIP per session of the store
  dshctl export --all --since 7d -O week/        # the sessions active in the last 7 days
  dshctl export -O out/ session-4f1c session-7a2b
  dshctl export --include-raw -O bug-1234.zip session-4f1c   # a bug report, damaged or not`,
		ValidArgsFunction: completeSessions(e, g, manySessions),
		RunE: func(cmd *cobra.Command, args []string) error {
			format := out.format
			if err := o.check(cmd, args); err != nil {
				return err
			}
			var err error
			if o.active, err = o.times.parse(e); err != nil {
				return err
			}
			if o.active.IsSet() && !o.all {
				return termui.Usagef("--since and --until choose the sessions of --all: with sessions named, they choose nothing")
			}
			if o.includeRaw {
				return exportBundle(cmd.Context(), e, g, format, &o, args[0])
			}
			if o.all || len(args) > 1 {
				return exportMany(cmd.Context(), e, g, format, &o, args)
			}
			return exportOne(cmd.Context(), e, g, format, &o, args[0])
		},
	}
	out = addOutput(cmd, e, tableFormats...)
	f := cmd.Flags()
	f.StringVarP(&o.out, "out", "O", "", "write the ZIP to `FILE`, into a folder (one that exists, or ending in /), or to standard output (-)")
	f.BoolVarP(&o.all, "all", "a", false, "export every session of the store, one ZIP each")
	f.BoolVar(&o.noSubagents, "no-subagents", false, "leave out the sessions that descend from the exported one")
	f.BoolVar(&o.force, "force", false, "replace existing files (and with -O -, write to a terminal)")
	f.IntVarP(&o.jobs, "jobs", "j", 0, "export `N` sessions at a time (default: one per CPU)")
	o.times.add(f, "with --all: sessions updated (as list shows them)", "with --all: sessions created")
	f.BoolVar(&o.includeRaw, "include-raw", false, "for a bug report: also the stored bytes as they are and a manifest with stat and verify, whatever the damage (exit 3 when damaged)")
	return cmd
}

// check rejects flag combinations that mean nothing.
func (o *exportOptions) check(cmd *cobra.Command, args []string) error {
	many := o.all || len(args) > 1
	switch {
	case o.all && len(args) > 0:
		return termui.Usagef("--all exports every session: name none")
	case !o.all && len(args) == 0:
		return termui.Usagef("name the session to export, or --all")
	case o.jobs < 0:
		return termui.Usagef("--jobs must not be negative")
	case o.includeRaw && many:
		return termui.Usagef("--include-raw makes one bug-report ZIP: name one session")
	case o.out == "-" && many:
		return termui.Usagef("-O - writes one ZIP: with several sessions, -O names a folder")
	case o.out == "-" && len(changedFlags(cmd, "output", "jq")) > 0:
		return termui.Usagef("with -O - the ZIP is the output: %s has nothing to print", changedFlags(cmd, "output", "jq")[0])
	}
	if !many || o.out == "" {
		return nil
	}
	fi, err := os.Stat(o.out)
	switch {
	case err == nil && !fi.IsDir():
		return termui.Usagef("-O %s is a file: with several sessions, -O names a folder", o.out)
	case err != nil && !os.IsPathSeparator(o.out[len(o.out)-1]):
		// f.zip would become a folder: make the user say it is one.
		return termui.Usagef("-O %s: with several sessions, -O names a folder: one that exists, or ending in / (%s/)", o.out, o.out)
	}
	return nil
}

// exportOne writes one session's ZIP (export.ToFile), or streams it to
// standard output (export.Session), with a bar of the events written.
func exportOne(ctx context.Context, e *env, g *globals, format string, o *exportOptions, arg string) error {
	s, err := g.openSession(ctx, e, arg, store.Options{AllowUnknownTypes: true}) // a plugin's events too, as cat
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
		return sessionview.WriteZIP(e.out(format), o.force, func(w io.Writer) ([]export.Entry, error) {
			defer bar.Finish()
			return export.Session(ctx, s.Service, s.ID, w, opts)
		})
	}
	r, err := export.ToFile(ctx, s.Service, s.ID, o.out, o.force, opts)
	bar.Finish()
	if err != nil {
		return sessionview.ExplainExport(err)
	}
	sessionview.WarnUnsupported(e.stderr, r.Entries)
	return sessionview.PrintExports(e.out(format), []export.Result{r})
}

// exportBundle writes the bug-report ZIP of one session (export.Bundle,
// to a file or standard output), and exits 3 when it found the session
// damaged: the ZIP then holds what could be read, and says the rest.
func exportBundle(ctx context.Context, e *env, g *globals, format string, o *exportOptions, arg string) error {
	s, err := g.openSession(ctx, e, arg, store.Options{AllowUnknownTypes: true})
	if err != nil {
		return err
	}
	defer s.Close()
	bar := e.out(format).NewBar("exporting events")
	opts := export.BundleOptions{Options: export.Options{NoSubagents: o.noSubagents}, Describe: sessionview.DescribeSession, Build: buildinfo.Read()}
	if e.stderrTTY {
		opts.Progress = bar.Track
	}
	var damaged bool
	if o.out == "-" {
		err = sessionview.WriteZIP(e.out(format), o.force, func(w io.Writer) ([]export.Entry, error) {
			defer bar.Finish()
			b, err := export.Bundle(ctx, s.Service, s.ID, w, opts)
			damaged = b.Damaged
			return b.Entries, err
		})
	} else {
		var r export.Result
		r, damaged, err = export.BundleToFile(ctx, s.Service, s.ID, o.out, o.force, opts)
		bar.Finish()
		if err == nil {
			sessionview.WarnUnsupported(e.stderr, r.Entries)
			err = sessionview.PrintExports(e.out(format), []export.Result{r})
		}
	}
	if err != nil {
		return sessionview.ExplainExport(err)
	}
	if damaged {
		fmt.Fprintln(e.stderr, "dshctl: the session is damaged: the ZIP holds what could be read, the stored bytes and what stat and verify say ("+export.ManifestName+")")
		return termui.Findings("damaged")
	}
	return nil
}

// exportMany writes a ZIP per session into a folder, several at a time
// (export.ToDir), with a bar of the sessions done. A session that fails is
// reported and the others go on.
func exportMany(ctx context.Context, e *env, g *globals, format string, o *exportOptions, args []string) error {
	dir := cmp.Or(o.out, ".")
	// A session that cannot be found is reported with the others that fail.
	// A --store that is not the store of a session path is a usage error,
	// as with one session.
	var unopened []export.Result
	var misuse error
	ss, err := store.OpenEachSession(ctx, g.request(e), args, store.Options{AllowUnknownTypes: true}, func(arg string, err error) {
		var oth *store.OtherStoreError
		if errors.As(err, &oth) {
			misuse = cmp.Or(misuse, err)
		}
		unopened = append(unopened, export.Result{ID: arg, Err: err})
	}) // --all: no arguments, every session of the store
	defer ss.Close()
	if err = cmp.Or(err, misuse); err != nil {
		return sessionview.ExplainExport(err)
	}
	var sources []export.Source // each named once (store.OpenSessions)
	for _, s := range ss.Sessions {
		sources = append(sources, export.Source{Service: s.Service, ID: s.ID})
	}
	if o.active.IsSet() {
		if sources, err = activeSources(ctx, ss.Whole, sources, o.active); err != nil {
			return err
		}
	}
	if o.all && len(sources) == 0 && len(unopened) == 0 {
		if o.active.IsSet() {
			fmt.Fprintln(e.stderr, "no sessions active between --since and --until to export")
			return nil
		}
		fmt.Fprintln(e.stderr, "no sessions to export")
		return nil
	}
	var results []export.Result
	if len(sources) > 0 { // no folder is made when every session failed to open
		if err := export.CheckDir(dir, sources); err != nil { // before the folder is made
			return sessionview.ExplainExport(err)
		}
		if err := export.MakeDir(dir); err != nil {
			return err
		}
		bar := e.out(format).NewProgress("exporting sessions", len(sources))
		results = export.ToDir(ctx, sources, dir, export.DirOptions{
			Options: export.Options{NoSubagents: o.noSubagents},
			Force:   o.force,
			Jobs:    o.jobs,
			Done:    func(export.Result) { bar.Add(1) },
		})
		bar.Finish()
	}
	return sessionview.ReportExports(ctx, e.out(format), append(results, unopened...))
}

// activeSources keeps the sources of svc that may have been active in
// span, as list --since/--until selects them (inspect.Session.ActiveIn).
func activeSources(ctx context.Context, svc seam.Service, sources []export.Source, span timespec.Range) ([]export.Source, error) {
	rows, err := inspect.List(ctx, svc, inspect.ListOptions{MaxBytes: inspect.DefaultScanBudget})
	if err != nil {
		return nil, err
	}
	out := make(map[string]bool, len(rows))
	for i := range rows {
		if !rows[i].ActiveIn(span) {
			out[rows[i].ID()] = true
		}
	}
	return slices.DeleteFunc(sources, func(s export.Source) bool { return out[s.ID] }), nil
}
