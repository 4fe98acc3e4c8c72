package main

import (
	"bufio"
	"context"
	"fmt"
	"time"

	"github.com/dshctl/dshctl/internal/export"
	"github.com/dshctl/dshctl/internal/inspect"
	"github.com/dshctl/dshctl/internal/seam"
	"github.com/dshctl/dshctl/internal/sessionview"
	"github.com/dshctl/dshctl/internal/store"
	"github.com/dshctl/dshctl/internal/termui"
	"github.com/spf13/cobra"
)

type catOptions struct {
	inspect.StreamOptions
	raw, frames, tail, header bool
	width                     int
	times                     timeFlags
}

// defaultFollowLast is how many events cat -f prints before it follows,
// unless -n or --from says otherwise.
const defaultFollowLast = 10

func newCatCmd(e *env, g *globals) *cobra.Command {
	o := catOptions{StreamOptions: inspect.StreamOptions{Poll: 500 * time.Millisecond}}
	var out *output
	cmd := &cobra.Command{
		Use:   "cat SESSION",
		Short: "Print a session's log",
		Long:  help("cat"),
		Example: `  dshctl cat session-4f1c
  dshctl cat -o text --turn 2 session-4f1c
  dshctl cat --type 'tool/*' --from 100 session-4f1c
  dshctl cat --raw --frames session-4f1c
  dshctl cat --raw --include-tail session-7a2b
  dshctl cat --closers session-7a2b     # add what dsh's resume would append
  dshctl cat -n 20 session-4f1c         # the last 20 events
  dshctl cat -f session-4f1c            # the last 10 events, then new ones as they come
  dshctl cat -f -n 0 session-4f1c       # new events only`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeSessions(e, g, oneSession),
		RunE: func(cmd *cobra.Command, args []string) error {
			format := out.format
			if err := o.check(cmd, format); err != nil {
				return err
			}
			var err error
			if o.Filter.Time, err = o.times.parse(e); err != nil {
				return err
			}
			s, err := g.openSession(cmd.Context(), e, args[0], store.Options{AllowUnknownTypes: true})
			if err != nil {
				return err
			}
			defer s.Close()
			return e.out(format).Page(format == termui.FormatText && !o.Follow && !g.noPager, e.lookupEnv, func(w *bufio.Writer) error {
				return runCat(cmd.Context(), e, s, cmd, format, &o, w)
			})
		},
	}
	out = addOutput(cmd, e, catFormats...)
	f := cmd.Flags()
	f.BoolVar(&o.raw, "raw", false, "print the records exactly as stored, up to the last one dsh serves")
	f.BoolVar(&o.frames, "frames", false, "with --raw: mark zstd frame boundaries and offsets")
	f.BoolVar(&o.tail, "include-tail", false, "with --raw: also print the records dsh does not serve (an uncommitted tail)")
	f.Int64Var(&o.Filter.From, "from", 0, "first seq to print")
	f.Int64Var(&o.Filter.To, "to", 0, "last seq to print (default: the last)")
	typesFlag(cmd, &o.Filter.Types, "print only events of this type (repeatable, glob: 'tool/*')")
	f.Int64Var(&o.Filter.Turn, "turn", 0, "print only the events of turn `N`")
	o.times.add(f, "events", "events")
	f.BoolVar(&o.header, "header", false, "with a filter: print the header line too")
	f.BoolVar(&o.Closers, "closers", false, "append the synthetic closers of an interrupted tail turn (in memory only)")
	f.BoolVarP(&o.Follow, "follow", "f", false, "keep printing new events as they are appended (after the last 10, unless -n or --from)")
	f.Int64VarP(&o.Last, "last", "n", 0, "print only the last `N` events that pass the filters, reading the log from its end")
	f.IntVar(&o.width, "width", 0, fmt.Sprintf("with -o text: wrap and cut lines at this many columns (default: the terminal's width, piped %d; 0: no limit)", inspect.DefaultTranscriptWidth))
	return cmd
}

// check rejects flag combinations that mean nothing, and notes which
// optional filters were given.
func (o *catOptions) check(cmd *cobra.Command, format string) error {
	o.HasLast = cmd.Flags().Changed("last")
	if o.Follow && !o.HasLast && !cmd.Flags().Changed("from") {
		// As tail -f and journalctl -f: the last few, then what comes.
		o.Last, o.HasLast = defaultFollowLast, true
	}
	filtered := o.HasLast || len(changedFlags(cmd, "from", "to", "type", "turn", "since", "until")) > 0
	f := &o.Filter
	switch {
	case o.frames && !o.raw:
		return termui.Usagef("--frames needs --raw")
	case o.tail && !o.raw:
		return termui.Usagef("--include-tail needs --raw")
	case o.raw && (filtered || o.header || o.Closers || o.Follow || format != termui.FormatJSONL):
		return termui.Usagef("--raw prints the stored records whole: it takes no filter, --header, --closers, --follow or -o")
	case o.Follow && o.Closers:
		return termui.Usagef("--closers and --follow do not go together: a followed log may still be resumed")
	case o.Follow && format == termui.FormatJSON:
		return termui.Usagef("--follow streams: use -o jsonl or -o text")
	case o.Last < 0:
		return termui.Usagef("-n must not be negative")
	case f.From < 0:
		return termui.Usagef("--from must not be negative")
	case f.Turn < 0:
		return termui.Usagef("--turn must not be negative")
	case cmd.Flags().Changed("to") && f.To < f.From:
		return termui.Usagef("--to %d is before --from %d", f.To, f.From)
	case o.width < 0:
		return termui.Usagef("--width must not be negative")
	}
	if !cmd.Flags().Changed("width") {
		o.width = inspect.DefaultTranscriptWidth
	}
	o.header = o.header || !filtered
	f.HasTo, f.HasTurn = cmd.Flags().Changed("to"), cmd.Flags().Changed("turn")
	return nil
}

// runCat prints the log (sessionview.PrintLog) in the format asked, or its
// stored records (sessionview.PrintRaw).
func runCat(ctx context.Context, e *env, s *store.Session, cmd *cobra.Command, format string, o *catOptions, w *bufio.Writer) error {
	h, err := s.Service.Open(ctx, s.ID, seam.Read)
	if err != nil {
		return err
	}
	defer h.Close()
	if o.raw {
		return sessionview.PrintRaw(ctx, e.out(format), w, h, export.RawOptions{Groups: o.frames, Tail: o.tail})
	}
	return sessionview.PrintLog(ctx, e.out(format), w, h, o.StreamOptions, o.header, o.width, cmd.Flags().Changed("width"))
}
