package main

import (
	"cmp"
	"context"
	"errors"

	"github.com/dshctl/dshctl/internal/seam"
	"github.com/dshctl/dshctl/internal/sessionview"
	"github.com/dshctl/dshctl/internal/store"
	"github.com/dshctl/dshctl/internal/termui"
	"github.com/dshctl/dshctl/internal/verify"
	"github.com/spf13/cobra"
)

func newVerifyCmd(e *env, g *globals) *cobra.Command {
	var o verify.Options
	var mode, backupDir string
	var force bool
	var out *output
	cmd := &cobra.Command{
		Use:   "verify [SESSION...]",
		Short: "Check sessions for damage; repair torn and uncommitted tails",
		Long:  help("verify"),
		Example: `  dshctl verify                                 # the whole store
  dshctl verify session-4f1c
  dshctl verify --mode strict -o json
  dshctl verify --repair --dry-run session-4f1c
  dshctl verify --repair --salvage session-4f1c
  dshctl verify --repair --renumber session-4f1c   # after two writers appended at once`,
		ValidArgsFunction: completeSessions(e, g, manySessions),
		RunE: func(cmd *cobra.Command, args []string) error {
			var err error
			if o.Mode, err = verify.ParseMode(mode); err != nil {
				return err // verifyModes holds ParseMode's names: a build mistake
			}
			switch {
			case o.Salvage && !o.Repair:
				return termui.Usagef("--salvage needs --repair")
			case o.DryRun && !o.Repair:
				return termui.Usagef("--dry-run needs --repair")
			case o.Jobs < 0:
				return termui.Usagef("--jobs must not be negative")
			case cmd.Flags().Changed("backup-dir") && backupDir == "":
				return termui.Usagef("--backup-dir must not be empty")
			case force && !o.Repair:
				return termui.Usagef("--force needs --repair")
			case o.Renumber && !o.Repair:
				return termui.Usagef("--renumber needs --repair")
			}
			return runVerify(cmd.Context(), e, g, args, out.format, backupDir, force, o)
		},
	}
	out = addOutput(cmd, e, tableFormats...)
	f := cmd.Flags()
	enumFlag(cmd, &mode, "mode", "", verify.ModeTolerateTail.String(), verifyModes, "what counts as an error")
	f.BoolVar(&o.Repair, "repair", false, "remove torn and uncommitted tails, saving the bytes to a backup first")
	f.BoolVar(&o.Salvage, "salvage", false, "with --repair: re-append the complete records of a torn final zstd frame")
	f.BoolVar(&o.Renumber, "renumber", false, "with --repair: renumber a log whose seqs repeat (two writers), keeping every event")
	f.BoolVar(&o.DryRun, "dry-run", false, "with --repair: print what would be removed, change nothing")
	f.StringVar(&backupDir, "backup-dir", "", "where repairs save removed bytes (default $XDG_STATE_HOME/dshctl/backups)")
	f.BoolVar(&force, "force", false, "with --repair: repair even when the session looks in use by a dsh that takes no lock (only when you know no dsh runs it)")
	f.IntVarP(&o.Jobs, "jobs", "j", 0, "check `N` sessions at a time (default: one per CPU, at most 8)")
	return cmd
}

// verifyModes are verify's --mode values (verify.Mode).
var verifyModes = oneOf(verify.ModeTolerateTail.String(), verify.ModeStrict.String(), verify.ModePointInTime.String())

// runVerify checks the sessions args name, or the whole store
// (verify.Run, once per store), printing each report as it comes.
func runVerify(ctx context.Context, e *env, g *globals, args []string, format, backupDir string, force bool, o verify.Options) error {
	// Of several names, one that finds no session is reported and the
	// others are checked, as export does; a store that cannot be opened
	// stops it all. One name (or none: the whole store) is opened or not.
	var unfound []*verify.SessionReport
	var stop error
	failed := func(arg string, err error) {
		var amb *store.AmbiguousError
		if !errors.Is(err, seam.ErrNotFound) && !errors.As(err, &amb) && !errors.Is(err, store.ErrEmptyArg) {
			stop = cmp.Or(stop, err)
		}
		unfound = append(unfound, &verify.SessionReport{ID: arg, Status: verify.StatusFailed, Err: err, State: verify.LogState{LastSeq: -1}})
	}
	so := writeOptions(e, force)
	so.BackupDir, so.Verify = backupDir, true
	var ss *store.Sessions
	var err error
	if len(args) > 1 {
		ss, err = store.OpenEachSession(ctx, g.request(e), args, so, failed)
	} else {
		ss, err = store.OpenSessions(ctx, g.request(e), args, so)
	}
	defer ss.Close()
	if err = cmp.Or(err, stop); err != nil {
		return notFound(err)
	}
	if backupDir == "" {
		if backupDir, err = store.DefaultBackupDir(e.getenv); err != nil {
			backupDir = "the backup folder"
		}
	}
	p := sessionview.NewVerifyPrinter(e.out(format), backupDir)
	defer p.Flush()
	o.Report = p.Report
	bar := e.out(format).NewBar("verify")
	o.Total, o.Progress = func(n int) { bar.Start(n) }, bar.Step
	var sum verify.Summary
	for _, r := range unfound {
		if err := p.Report(r); err != nil {
			return err
		}
		sum.Add(verify.Summary{Sessions: 1, Failed: 1})
	}
	for _, gr := range ss.Groups() {
		s, err := verify.Run(ctx, gr.Service, gr.IDs, o)
		bar.Finish()
		sum.Add(s)
		if err != nil {
			return sessionview.ExplainVerify(err)
		}
	}
	return p.Summary(o.Mode, sum)
}
