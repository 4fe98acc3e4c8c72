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
	"github.com/dshctl/dshctl/internal/store"
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
what is wrong, and its code; a summary line follows.

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
		RunE: func(cmd *cobra.Command, args []string) error {
			format, err := g.outputFormat(formatTable, formatTable, formatJSON, formatJSONL)
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
	groups, err := verifyGroups(ctx, e, g, args, store.Options{BackupDir: backupDir})
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
	p := &verifyPrinter{e: e, w: out, format: format, backupDir: backupDir}
	var bar *progress
	o.Total = func(n int) {
		bar = newProgress(e, format, "verify", n)
	}
	o.Progress = func() { bar.add(1) }
	o.Report = p.report
	var sum inspect.Summary
	for _, gr := range groups {
		s, err := inspect.Verify(ctx, gr.svc, gr.ids, o)
		if bar != nil {
			bar.finish()
		}
		sum.Add(s)
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
		return fmt.Errorf("%s could not be checked or repaired (see above)", count(sum.Failed, "session"))
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

// verifyPrinter writes the reports as they come.
type verifyPrinter struct {
	e         *env
	w         io.Writer
	format    string
	backupDir string
	reports   []verifyJSON
}

func (p *verifyPrinter) report(r *inspect.SessionReport) error {
	if r.Err != nil && !errors.Is(r.Err, context.Canceled) {
		fmt.Fprintf(p.e.stderr, "dshctl: verify %s: %s\n", r.ID, strings.ReplaceAll(r.Err.Error(), "\n", " "))
	}
	switch p.format {
	case formatJSON:
		p.reports = append(p.reports, toVerifyJSON(r))
		return nil
	case formatJSONL:
		return writeJSON(p.w, formatJSONL, toVerifyJSON(r))
	}
	for _, line := range r.Lines(inspect.TextOptions{Colour: p.e.colour(), BackupDir: p.backupFolder()}) {
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
	switch p.format {
	case formatJSON:
		return writeJSON(p.w, formatJSON, struct {
			Mode     string       `json:"mode"`
			Sessions []verifyJSON `json:"sessions"`
			Summary  summaryJSON  `json:"summary"`
		}{mode.String(), nonNil(p.reports), summaryJSON{s.Sessions, s.Clean, s.Warnings, s.Errors, s.Failed}})
	case formatJSONL:
		return nil
	}
	_, err := fmt.Fprintln(p.w, s.String())
	return err
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// The stable JSON shape of verify's reports.
type (
	summaryJSON struct {
		Sessions int `json:"sessions"`
		Clean    int `json:"clean"`
		Warnings int `json:"warnings"`
		Errors   int `json:"errors"`
		Failed   int `json:"failed"`
	}
	verifyJSON struct {
		ID       string        `json:"id"`
		Stray    bool          `json:"stray,omitempty"`
		Location locationJSON  `json:"location"`
		Status   string        `json:"status"`
		Events   int64         `json:"events"`
		LastSeq  *int64        `json:"lastSeq"`
		Bytes    int64         `json:"bytes"`
		Frames   int64         `json:"frames"`
		Lines    int64         `json:"lines"`
		Findings []findingJSON `json:"findings"`
		Prefix   *prefixJSON   `json:"prefix,omitempty"`
		Repair   *repairJSON   `json:"repair,omitempty"`
		Error    string        `json:"error,omitempty"`
	}
	locationJSON struct {
		Backend          string `json:"backend,omitempty"`
		Path             string `json:"path"`
		Encoding         string `json:"encoding,omitempty"`
		Generation       *int   `json:"generation,omitempty"`
		OlderGenerations []int  `json:"olderGenerations,omitempty"`
	}
	findingJSON struct {
		Severity string       `json:"severity"`
		Code     string       `json:"code"`
		Message  string       `json:"message"`
		Repaired bool         `json:"repaired,omitempty"`
		Location positionJSON `json:"location"`
	}
	positionJSON struct {
		Path   string `json:"path,omitempty"`
		Frame  *int   `json:"frame,omitempty"`
		Offset *int64 `json:"offset,omitempty"`
		Line   *int   `json:"line,omitempty"`
		Seq    *int64 `json:"seq,omitempty"`
	}
	prefixJSON struct {
		Events int64  `json:"events"`
		Bytes  *int64 `json:"bytes"`
		After  *int64 `json:"afterBytes"`
		Hidden int    `json:"hiddenFindings"`
	}
	repairJSON struct {
		DryRun       bool          `json:"dryRun"`
		Skipped      string        `json:"skipped,omitempty"`
		Removed      []seam.Repair `json:"removed"`
		Rewrite      int           `json:"rewrittenRecords"`
		Salvaged     int64         `json:"salvaged"`
		SalvagedFrom *int64        `json:"salvagedFrom,omitempty"`
		Before       *stateJSON    `json:"before,omitempty"`
		After        *stateJSON    `json:"after,omitempty"`
	}
	stateJSON struct {
		Frames  int64  `json:"frames"`
		Lines   int64  `json:"lines"`
		Bytes   int64  `json:"bytes"`
		Events  int64  `json:"events"`
		LastSeq *int64 `json:"lastSeq"`
	}
)

func toVerifyJSON(r *inspect.SessionReport) verifyJSON {
	loc := r.Location
	v := verifyJSON{ID: r.ID, Stray: r.Stray, Status: string(r.Status), Events: r.State.Events,
		LastSeq: seqPtr(r.State.LastSeq), Bytes: r.State.Bytes, Frames: r.State.Frames, Lines: r.State.Lines, Findings: []findingJSON{},
		Location: locationJSON{Backend: loc.Backend, Path: loc.Path, Encoding: loc.Encoding, OlderGenerations: loc.OlderGenerations}}
	if loc.Backend != "" {
		v.Location.Generation = &loc.Generation
	}
	for _, f := range r.Findings {
		v.Findings = append(v.Findings, findingJSON{Severity: f.Severity.String(), Code: f.Code, Message: f.Message,
			Repaired: f.Repaired, Location: toPositionJSON(f.Pos)})
	}
	if pr := r.Prefix; pr != nil {
		v.Prefix = &prefixJSON{Events: pr.Events, Bytes: seqPtr(pr.Bytes), After: seqPtr(pr.After), Hidden: pr.Hidden}
	}
	if rp := r.Repair; rp != nil {
		v.Repair = &repairJSON{DryRun: rp.DryRun, Skipped: rp.Skipped, Removed: nonNil(rp.Removed), Rewrite: rp.Rewrite,
			Salvaged: rp.Salvaged, Before: toStateJSON(rp.Before), After: toStateJSON(rp.After)}
		if rp.Salvaged > 0 {
			v.Repair.SalvagedFrom = &rp.SalvagedFrom
		}
	}
	if r.Err != nil {
		v.Error = r.Err.Error()
	}
	return v
}

func toStateJSON(s *inspect.LogState) *stateJSON {
	if s == nil {
		return nil
	}
	return &stateJSON{Frames: s.Frames, Lines: s.Lines, Bytes: s.Bytes, Events: s.Events, LastSeq: seqPtr(s.LastSeq)}
}

func toPositionJSON(p seam.Pos) positionJSON {
	j := positionJSON{Path: p.Path, Offset: seqPtr(p.Offset), Seq: seqPtr(p.Seq)}
	if p.Frame >= 0 {
		j.Frame = &p.Frame
	}
	if p.Line > 0 {
		j.Line = &p.Line
	}
	return j
}

// seqPtr returns nil for a negative (unknown) value.
func seqPtr(n int64) *int64 {
	if n < 0 {
		return nil
	}
	return &n
}
