package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/dshctl/dshctl/internal/export"
	"github.com/dshctl/dshctl/internal/inspect"
	"github.com/dshctl/dshctl/internal/seam"
	"github.com/dshctl/dshctl/internal/store"
	"github.com/spf13/cobra"
)

type catOptions struct {
	raw, frames, closers, follow bool
	from, to, turn               int64
	types                        []string
	width                        int
	poll                         time.Duration
}

func newCatCmd(e *env, g *globals) *cobra.Command {
	o := catOptions{poll: 500 * time.Millisecond}
	cmd := &cobra.Command{
		Use:   "cat SESSION",
		Short: "Print a session's log",
		Long: `Print a session's log in seq order, streamed with bounded memory.

By default the output is canonical JSONL, header first: packed chunk rows and
sourceEventSeqs ranges expanded, one event per line (what export writes).
--raw prints the physical records exactly as stored; -o text prints a readable
transcript. A torn tail is never printed.`,
		Example: `  dshctl cat session-4f1c
  dshctl cat -o text --turn 2 session-4f1c
  dshctl cat --type 'tool/*' --from 100 session-4f1c
  dshctl cat --raw --frames session-4f1c
  dshctl cat --closers session-7a2b     # add what dsh's resume would append
  dshctl cat -f session-4f1c            # keep printing new events`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			format, err := g.outputFormat(formatJSONL, formatJSONL, formatJSON, formatText)
			if err != nil {
				return err
			}
			if err := o.check(cmd, format); err != nil {
				return err
			}
			s, err := g.openSession(cmd.Context(), e, args[0], store.Options{AllowUnknownTypes: true})
			if err != nil {
				return err
			}
			defer s.Close()
			w := bufio.NewWriterSize(e.stdout, 64<<10)
			err = runCat(cmd.Context(), e, s, format, &o, w)
			if ferr := w.Flush(); err == nil {
				err = ferr
			}
			return err
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.raw, "raw", false, "print the physical records exactly as stored")
	f.BoolVar(&o.frames, "frames", false, "with --raw: mark zstd frame boundaries and offsets")
	f.Int64Var(&o.from, "from", 0, "first seq to print")
	f.Int64Var(&o.to, "to", -1, "last seq to print")
	f.StringArrayVar(&o.types, "type", nil, "print only events of this type (repeatable, glob: 'tool/*')")
	f.Int64Var(&o.turn, "turn", 0, "print only the events of turn `N`")
	f.BoolVar(&o.closers, "closers", false, "append the synthetic closers of an interrupted tail turn (in memory only)")
	f.BoolVarP(&o.follow, "follow", "f", false, "keep printing new events as they are appended")
	f.IntVar(&o.width, "width", inspect.DefaultTranscriptWidth, "with -o text: cut long lines to this many characters (0: no limit)")
	return cmd
}

// check rejects flag combinations that mean nothing.
func (o *catOptions) check(cmd *cobra.Command, format string) error {
	filtered := cmd.Flags().Changed("from") || cmd.Flags().Changed("to") ||
		cmd.Flags().Changed("type") || cmd.Flags().Changed("turn")
	switch {
	case o.frames && !o.raw:
		return usagef("--frames needs --raw")
	case o.raw && (filtered || o.closers || o.follow || format != formatJSONL):
		return usagef("--raw prints the stored records whole: it takes no filter, --closers, --follow or -o")
	case o.follow && o.closers:
		return usagef("--closers and --follow do not go together: a followed log may still be resumed")
	case o.follow && format == formatJSON:
		return usagef("--follow streams: use -o jsonl or -o text")
	case o.from < 0:
		return usagef("--from must not be negative")
	case o.turn < 0:
		return usagef("--turn must not be negative")
	case cmd.Flags().Changed("to") && o.to < o.from:
		return usagef("--to %d is before --from %d", o.to, o.from)
	case o.width < 0:
		return usagef("--width must not be negative")
	}
	return nil
}

func runCat(ctx context.Context, e *env, s *store.Session, format string, o *catOptions, w *bufio.Writer) error {
	h, err := s.Service.Open(ctx, s.ID, seam.Read)
	if err != nil {
		return err
	}
	defer h.Close()
	if o.raw {
		rr, ok := h.(seam.RawReader)
		if !ok {
			return errors.New("this store has no physical records to print: --raw needs a JSONL store")
		}
		return export.WriteRaw(ctx, w, rr, o.frames)
	}
	so := inspect.StreamOptions{Filter: inspect.FilterOptions{From: o.from, Types: o.types, Turn: o.turn},
		Closers: o.closers, Follow: o.follow, Poll: o.poll}
	if o.to >= 0 {
		so.Filter.To, so.Filter.HasTo = o.to, true
	}
	var sink inspect.Sink
	switch format {
	case formatJSON:
		sink = export.NewDocument(w)
	case formatText:
		width := o.width
		if width == 0 {
			width = -1
		}
		sink = inspect.NewTranscript(w, inspect.TranscriptOptions{Width: width, Color: e.colour()})
	default:
		sink = export.NewCanonical(w)
	}
	res, err := inspect.Stream(ctx, h, so, sink)
	if res.Closers > 0 && format != formatJSON {
		fmt.Fprintf(e.stderr, "dshctl: %s for the interrupted turn printed, not stored\n", count(res.Closers, "synthetic closer"))
	}
	return explain(err)
}
