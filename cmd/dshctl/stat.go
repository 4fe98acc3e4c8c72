package main

import (
	"github.com/dshctl/dshctl/internal/inspect"
	"github.com/dshctl/dshctl/internal/sessionview"
	"github.com/dshctl/dshctl/internal/store"
	"github.com/spf13/cobra"
)

func newStatCmd(e *env, g *globals) *cobra.Command {
	var exact bool
	var out *output
	cmd := &cobra.Command{
		Use:   "stat SESSION",
		Short: "Show a session's metadata from its header and the tail of its log",
		Long:  help("stat"),
		Example: `  dshctl stat session-4f1c
  dshctl stat -o json ~/.dsh/sessions/--home-me-proj--/session-4f1c…/`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeSessions(e, g, oneSession),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			s, err := g.openSession(ctx, e, args[0], store.Options{AllowUnknownTypes: true})
			if err != nil {
				return err
			}
			defer s.Close()
			r, err := inspect.Stat(ctx, s.Service, s.ID, inspect.StatOptions{Exact: exact})
			if r == nil {
				return err
			}
			// A session dsh would refuse is shown as far as it can be
			// read; the reason then fails the command, after the report.
			if perr := sessionview.PrintStat(e.out(out.format), r); perr != nil {
				return perr
			}
			return sessionview.Explain(err)
		},
	}
	out = addOutput(cmd, e, tableFormats...)
	cmd.Flags().BoolVar(&exact, "exact", false, "also scan the whole log: counts by type, turns, first and last time")
	return cmd
}
