package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/dshctl/dshctl/internal/inspect"
	"github.com/dshctl/dshctl/internal/seam"
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
			g.allowUnknown = true
			s, err := g.resolveSession(cmd.Context(), e, args[0])
			if err != nil {
				return err
			}
			defer s.close()
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

func runCat(ctx context.Context, e *env, s *session, format string, o *catOptions, w *bufio.Writer) error {
	h, err := s.svc.Open(ctx, s.id, seam.Read)
	if err != nil {
		return err
	}
	defer h.Close()
	if o.raw {
		return catRaw(ctx, h, o.frames, w)
	}
	fo := inspect.FilterOptions{From: o.from, Types: o.types, Turn: o.turn}
	if o.to >= 0 {
		fo.To, fo.HasTo = o.to, true
	}
	filter, err := inspect.NewFilter(fo)
	if err != nil {
		return usageError{err}
	}
	p := newEventPrinter(e, format, o, w)
	hdr := h.Header()
	if err := p.header(&hdr); err != nil {
		return err
	}
	next, err := catEvents(ctx, h, filter.ScanFrom(), filter, p)
	if err != nil {
		return err
	}
	if o.closers {
		closers, err := inspect.Closers(ctx, h)
		if err != nil {
			return err
		}
		if err := p.closers(closers, filter); err != nil {
			return err
		}
		if len(closers) > 0 && format != formatJSON {
			fmt.Fprintf(e.stderr, "dshctl: %s for the interrupted turn printed, not stored\n", count(len(closers), "synthetic closer"))
		}
	}
	if err := p.finish(); err != nil {
		return err
	}
	if o.follow {
		if err := w.Flush(); err != nil {
			return err
		}
		if err := follow(ctx, h, next, filter, p, w, o.poll); err != nil {
			return err
		}
	}
	return p.unknownTypes(ctx, s)
}

// catEvents prints the events of h from seq next on that filter matches
// and returns the seq after the last event read.
func catEvents(ctx context.Context, h seam.Handle, next int64, filter *inspect.Filter, p *eventPrinter) (int64, error) {
	for ev, err := range h.Scan(ctx, seam.ScanOptions{From: next}) {
		if err != nil {
			return next, err
		}
		next = ev.Seq + 1
		if filter.Match(&ev) {
			if err := p.event(&ev); err != nil {
				return next, err
			}
		}
		if filter.Done() {
			break
		}
	}
	return next, nil
}

// follow prints what is appended to h, polling like tail -f, until ctx ends
// or the filter wants nothing more. A read handle sees every append that
// returned before a scan starts, so polling is a scan from the next seq.
func follow(ctx context.Context, h seam.Handle, next int64, filter *inspect.Filter, p *eventPrinter, w *bufio.Writer, poll time.Duration) error {
	tick := time.NewTicker(poll)
	defer tick.Stop()
	for !filter.Done() {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		var err error
		if next, err = catEvents(ctx, h, next, filter, p); err != nil {
			if ctx.Err() != nil {
				return w.Flush() // interrupted mid-scan: the way follow ends
			}
			return err
		}
		if err := w.Flush(); err != nil {
			return err
		}
	}
	return nil
}

// catRaw prints the physical records as stored.
func catRaw(ctx context.Context, h seam.Handle, frames bool, w io.Writer) error {
	rr, ok := h.(seam.RawReader)
	if !ok {
		return errors.New("this store has no physical records to print: --raw needs a JSONL store")
	}
	lastFrame := -1
	for rec, err := range rr.Raw(ctx) {
		if err != nil {
			return err
		}
		if frames && rec.Frame >= 0 && rec.Frame != lastFrame {
			lastFrame = rec.Frame
			if _, err := fmt.Fprintf(w, "# frame %d at byte %d, %d bytes\n", rec.Frame, rec.FrameOffset, rec.FrameSize); err != nil {
				return err
			}
		}
		if _, err := w.Write(rec.Line); err != nil {
			return err
		}
	}
	return nil
}

// eventPrinter writes events in one output format.
type eventPrinter struct {
	e       *env
	format  string
	w       *bufio.Writer
	buf     []byte
	text    *inspect.Transcript
	first   bool
	unknown map[string]int64
	// firstUnknown is the seq of the first event of an unknown type.
	firstUnknown int64
	version      int
}

func newEventPrinter(e *env, format string, o *catOptions, w *bufio.Writer) *eventPrinter {
	p := &eventPrinter{e: e, format: format, w: w, first: true, unknown: map[string]int64{}}
	if format == formatText {
		width := o.width
		if width == 0 {
			width = -1
		}
		p.text = inspect.NewTranscript(w, inspect.TranscriptOptions{Width: width, Color: e.colour()})
	}
	return p
}

func (p *eventPrinter) header(h *seam.Header) error {
	p.version = h.Version
	switch p.format {
	case formatJSONL:
		p.buf = append(h.AppendJSON(p.buf[:0]), '\n')
	case formatJSON:
		p.buf = append(p.buf[:0], `{"header":`...)
		p.buf = h.AppendJSON(p.buf)
		p.buf = append(p.buf, ",\n\"events\":["...)
	case formatText:
		p.buf = fmt.Appendf(p.buf[:0], "session %s  v%d  created %s\n", h.ID, h.Version,
			time.UnixMilli(h.CreatedAt).UTC().Format(time.RFC3339))
		if h.Cwd != "" {
			p.buf = fmt.Appendf(p.buf, "project %s\n", h.Cwd)
		}
		if h.ParentSession != "" {
			p.buf = fmt.Appendf(p.buf, "parent  %s\n", h.ParentSession)
		}
	}
	_, err := p.w.Write(p.buf)
	return err
}

func (p *eventPrinter) event(ev *seam.Event) error {
	if !ev.Ignorable && !seam.KnownType(p.version, ev.Type) {
		if len(p.unknown) == 0 {
			p.firstUnknown = ev.Seq
		}
		p.unknown[ev.Type]++
	}
	switch p.format {
	case formatText:
		return p.text.Render(ev)
	case formatJSON:
		p.buf = p.buf[:0]
		if !p.first {
			p.buf = append(p.buf, ',')
		}
		p.buf = append(p.buf, "\n  "...)
		p.first = false
	default:
		p.buf = p.buf[:0]
	}
	p.buf = ev.AppendJSON(p.buf)
	if p.format == formatJSONL {
		p.buf = append(p.buf, '\n')
	}
	_, err := p.w.Write(p.buf)
	return err
}

func (p *eventPrinter) closers(closers []seam.Event, filter *inspect.Filter) error {
	if p.format == formatJSON {
		p.buf = append(p.buf[:0], "\n],\n\"closers\":["...)
		p.first = true
		if _, err := p.w.Write(p.buf); err != nil {
			return err
		}
	} else if p.format == formatText && len(closers) > 0 {
		if _, err := io.WriteString(p.w, "\n[synthetic closers: what dsh's resume would append; not stored]\n"); err != nil {
			return err
		}
	}
	for i := range closers {
		if filter.Match(&closers[i]) {
			if err := p.event(&closers[i]); err != nil {
				return err
			}
		}
	}
	return nil
}

func (p *eventPrinter) finish() error {
	if p.format != formatJSON {
		return nil
	}
	_, err := io.WriteString(p.w, "\n]}\n")
	return err
}

// unknownTypes reports event types the log's version does not know and that
// are not ignorable: cat has shown them, but dsh refuses such a log, so the
// command fails the way dsh's reader would, naming the raw log.
func (p *eventPrinter) unknownTypes(ctx context.Context, s *session) error {
	if len(p.unknown) == 0 {
		return nil
	}
	var parts []string
	for _, t := range sortedKeys(p.unknown) {
		parts = append(parts, fmt.Sprintf("%q (%d)", t, p.unknown[t]))
	}
	pos := seam.NoPos
	pos.Seq = p.firstUnknown
	if snap, err := s.svc.Stat(ctx, s.id); err == nil {
		pos.Path = snap.Location.Path
	}
	return &seam.Error{Kind: seam.ErrUnsupportedFormat, Op: "cat", ID: s.id, Pos: pos, Err: fmt.Errorf(
		"every event was printed, but types %s are unknown to format v%d and not ignorable; dsh refuses this log unless a plugin registers them",
		strings.Join(parts, ", "), p.version)}
}
