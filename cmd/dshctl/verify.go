package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/dshctl/dshctl/internal/inspect"
	"github.com/dshctl/dshctl/internal/seam"
	"github.com/dshctl/dshctl/internal/sessionview"
	"github.com/dshctl/dshctl/internal/store"
	"github.com/dshctl/dshctl/internal/termui"
	"github.com/spf13/cobra"
)

type verifyOptions struct {
	mode                    string
	repair, salvage, dryRun bool
	jobs                    int
	backupDir               string
}

func newVerifyCmd(e *env, g *globals) *cobra.Command {
	var o verifyOptions
	cmd := &cobra.Command{
		Use:   "verify [SESSION...]",
		Short: "Check sessions for damage; repair torn and uncommitted tails",
		Long: `Check sessions (the whole store, layout included, when none is named):
every frame and checksum, every record, seq contiguity, the event rules of the
log's format, turn and step bracketing, tool-call/result pairing, and the tail.
Each finding is one line: session, severity, where (frame, byte, line, seq),
what is wrong, and its code; a summary line follows. Piped, a finding is a
row of tab-separated fields: session, severity, code, frame, byte, line, seq,
"repaired" (or empty) and the message; the rest goes to stderr.

Modes (after RocksDB's WAL recovery modes):
  tolerate-tail   a torn or uncommitted tail, and what dsh tolerates but never
                  writes, is a warning; damaged committed data is an error
  strict          every irregularity is an error
  point-in-time   report the longest sound prefix of each log and what lies
                  after it; the first problem in a log's body is a warning

--repair removes a torn or uncommitted tail, never committed data. It takes the
session's write lock (a session another process holds is not repaired), checks
the log again under the lock, copies every byte it removes to a backup file
outside the store (--backup-dir) and fsyncs it, truncates and fsyncs the log,
and checks it again. --salvage also re-appends the complete records of a torn
final zstd frame as a new frame, as dsh 0.1.0 did. --dry-run prints the plan.

Exit status: 0 when nothing (or only notes and warnings) was found, 3 when a
finding is an error in the chosen mode, 1 when a session could not be checked
or repaired.`,
		Example: `  dshctl verify                                 # the whole store
  dshctl verify session-4f1c
  dshctl verify --mode strict -o json
  dshctl verify --repair --dry-run session-4f1c
  dshctl verify --repair --salvage session-4f1c`,
		ValidArgsFunction: completeSessions(e, g, true),
		RunE: func(cmd *cobra.Command, args []string) error {
			format, err := g.outputFormat(formatTable, listFormats...)
			if err != nil {
				return err
			}
			mode, err := inspect.ParseMode(o.mode)
			if err != nil {
				return usageError{err}
			}
			switch {
			case o.salvage && !o.repair:
				return usagef("--salvage needs --repair")
			case o.dryRun && !o.repair:
				return usagef("--dry-run needs --repair")
			case o.jobs < 0:
				return usagef("--jobs must not be negative")
			}
			if cmd.Flags().Changed("backup-dir") && o.backupDir == "" {
				return usagef("--backup-dir must not be empty")
			}
			return runVerify(cmd.Context(), e, g, args, format, o.backupDir, inspect.Options{Mode: mode,
				Repair: o.repair, Salvage: o.salvage, DryRun: o.dryRun, Jobs: o.jobs})
		},
	}
	setFormats(cmd, listFormats...)
	f := cmd.Flags()
	f.StringVar(&o.mode, "mode", "tolerate-tail", "tolerate-tail, strict or point-in-time")
	f.BoolVar(&o.repair, "repair", false, "remove torn and uncommitted tails, saving the bytes to a backup first")
	f.BoolVar(&o.salvage, "salvage", false, "with --repair: re-append the complete records of a torn final zstd frame")
	f.BoolVar(&o.dryRun, "dry-run", false, "with --repair: print what would be removed, change nothing")
	f.StringVar(&o.backupDir, "backup-dir", "", "where repairs save removed bytes (default $XDG_STATE_HOME/dshctl/backups)")
	f.IntVarP(&o.jobs, "jobs", "j", 0, "check `N` sessions at a time (default: one per CPU, at most 8)")
	return cmd
}

// verifyGroup is the sessions of one store to check.
type verifyGroup struct {
	svc seam.Service
	ids []string // nil: the whole store
}

func runVerify(ctx context.Context, e *env, g *globals, args []string, format, backupDir string, o inspect.Options) error {
	groups, err := verifyGroups(ctx, e, g, args, store.Options{BackupDir: backupDir, Verify: true})
	defer func() {
		for _, gr := range groups {
			gr.svc.Close()
		}
	}()
	if err != nil {
		return err
	}
	// With a progress bar on the terminal, the reports wait in a large
	// buffer, so that they do not cut through the bar.
	out := bufio.NewWriter(e.stdout)
	if e.stderrTTY && e.stdoutTTY && format == formatTable {
		out = bufio.NewWriterSize(e.stdout, 1<<20)
	}
	defer out.Flush()
	p := &verifyPrinter{e: e, w: out, format: format, backupDir: backupDir, rows: e.newTable(out)}
	var bar *termui.Progress
	o.Total = func(n int) {
		bar = newProgress(e, format, "verify", n)
	}
	o.Progress = func() { bar.Add(1) }
	o.Report = p.report
	var sum inspect.Summary
	for _, gr := range groups {
		s, err := inspect.Verify(ctx, gr.svc, gr.ids, o)
		if bar != nil {
			bar.Finish()
		}
		sum.Add(s)
		if errors.Is(err, context.Canceled) {
			return errors.New("verify interrupted: the sessions reported above were checked (and repaired where they say so)")
		}
		if err != nil {
			return err
		}
	}
	if err := p.summary(o.Mode, sum); err != nil {
		return err
	}
	if err := out.Flush(); err != nil {
		return err
	}
	switch {
	case sum.Failed > 0:
		return fmt.Errorf("%s could not be checked or repaired (see above)", termui.Count(sum.Failed, "session"))
	case sum.Errors > 0:
		return findingsError{sum.String()}
	}
	return nil
}

// verifyGroups resolves the arguments: sessions of one or more stores (a
// path names its own), or the whole store.
func verifyGroups(ctx context.Context, e *env, g *globals, args []string, so store.Options) ([]verifyGroup, error) {
	if len(args) == 0 {
		svc, err := g.openStore(e, so)
		if err != nil {
			return nil, err
		}
		return []verifyGroup{{svc: svc}}, nil
	}
	var groups []verifyGroup
	byRoot := map[string]int{}
	for _, arg := range args {
		s, err := g.openSession(ctx, e, arg, so)
		if err != nil {
			return groups, err
		}
		// Sessions of one store are checked in one run, in parallel, each
		// once however often it is named.
		if r, ok := s.Service.(interface{ Root() string }); ok {
			if i, ok := byRoot[r.Root()]; ok {
				s.Close()
				if !slices.Contains(groups[i].ids, s.ID) {
					groups[i].ids = append(groups[i].ids, s.ID)
				}
				continue
			}
			byRoot[r.Root()] = len(groups)
		}
		groups = append(groups, verifyGroup{svc: s.Service, ids: []string{s.ID}})
	}
	return groups, nil
}

// verifyPrinter writes the reports as they come: for people, a line per
// finding, prefix and repair, then the summary; for scripts (stdout piped),
// a row per finding (sessionview.VerifyRow), the rest on stderr; or JSON.
type verifyPrinter struct {
	e         *env
	w         io.Writer
	format    string
	backupDir string
	rows      *termui.Table // the rows of findings for scripts
	reports   []sessionview.VerifyJSON
}

func (p *verifyPrinter) report(r *inspect.SessionReport) error {
	if r.Err != nil && !errors.Is(r.Err, context.Canceled) {
		fmt.Fprintf(p.e.stderr, "dshctl: verify %s: %s\n", r.ID, strings.ReplaceAll(r.Err.Error(), "\n", " "))
	}
	switch {
	case p.format == formatJSON:
		p.reports = append(p.reports, sessionview.NewVerifyJSON(r))
		return nil
	case p.format == formatJSONL:
		return writeJSON(p.w, formatJSONL, sessionview.NewVerifyJSON(r))
	}
	lines := r.Lines(inspect.TextOptions{Colour: p.e.colour(), BackupDir: p.backupFolder()})
	if !p.rows.TTY() {
		// Findings come first in Lines; the prefix and repair lines after
		// them are for people, on stderr.
		for i := range r.Findings {
			p.rows.Row(sessionview.VerifyRow(r, &r.Findings[i])...)
		}
		for _, line := range lines[len(r.Findings):] {
			fmt.Fprintln(p.e.stderr, "dshctl: "+line)
		}
		err := p.rows.Render()
		p.rows = p.e.newTable(p.w)
		return err
	}
	for _, line := range lines {
		if _, err := fmt.Fprintln(p.w, line); err != nil {
			return err
		}
	}
	return nil
}

// backupFolder is where repairs save what they remove.
func (p *verifyPrinter) backupFolder() string {
	if p.backupDir != "" {
		return p.backupDir
	}
	d, err := store.DefaultBackupDir(p.e.getenv)
	if err != nil {
		return "the backup folder"
	}
	return d
}

func (p *verifyPrinter) summary(mode inspect.Mode, s inspect.Summary) error {
	switch {
	case p.format == formatJSON:
		return writeJSON(p.w, formatJSON, struct {
			Mode     string                        `json:"mode"`
			Sessions []sessionview.VerifyJSON      `json:"sessions"`
			Summary  sessionview.VerifySummaryJSON `json:"summary"`
		}{mode.String(), append([]sessionview.VerifyJSON{}, p.reports...), sessionview.VerifySummaryJSON{
			Sessions: s.Sessions, Clean: s.Clean, Warnings: s.Warnings, Errors: s.Errors, Failed: s.Failed}})
	case p.format == formatJSONL:
		return nil
	case !p.e.stdoutTTY:
		_, err := fmt.Fprintln(p.e.stderr, "dshctl: "+s.String())
		return err
	}
	_, err := fmt.Fprintln(p.w, s.String())
	return err
}
