package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/dshctl/dshctl/internal/inspect"
	"github.com/dshctl/dshctl/internal/seam"
	"github.com/spf13/cobra"
)

type appendOptions struct {
	assignSeq, closeInterrupted bool
	create                      bool
	header                      seam.Header
	// versionSet says --version was given; otherwise a new session takes
	// the store's newest format, so that the dsh using the store reads it.
	versionSet bool
	// headerFlags names the header flags given, for the warning when the
	// session exists and they do not apply.
	headerFlags []string
}

// appendResult is the stable JSON shape of `append`.
type appendResult struct {
	ID       string `json:"id"`
	Created  bool   `json:"created"`
	Closers  int    `json:"closers"`
	Appended int    `json:"appended"`
	FirstSeq int64  `json:"firstSeq"`
	NextSeq  int64  `json:"nextSeq"`
	// Repairs lists the torn or uncommitted tails removed (and saved to a
	// backup) before the batch was written; empty when the log was clean.
	Repairs []seam.Repair `json:"repairs"`
}

func newAppendCmd(e *env, g *globals) *cobra.Command {
	var o appendOptions
	cmd := &cobra.Command{
		Use:   "append SESSION [FILE|-]",
		Short: "Append events to a session as one durable batch",
		Long: `Append events (JSONL, one per line) to a session as one durable batch.

Every line is validated first: if any is invalid nothing is written and the
message names the line. The session's write lock is taken at once; if another
process holds it the command fails immediately. A torn or uncommitted tail is
removed before the batch is written: its bytes are saved to a backup file, and
each removal is reported on stderr (and under "repairs" with -o json).

Events are read from FILE, or from standard input when FILE is - or absent
(with --close-interrupted and no FILE, only the closers are appended).`,
		Example: `  dshctl append session-4f1c events.jsonl
  printf '%s\n' '{"type":"session/title","data":{"title":"Fix CI"}}' | dshctl append --assign-seq session-4f1c
  dshctl append --close-interrupted session-7a2b
  dshctl append --create --cwd "$PWD" --assign-seq my-session events.jsonl`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			format, err := g.outputFormat(formatTable, formatTable, formatJSON, formatJSONL)
			if err != nil {
				return err
			}
			o.headerFlags = headerFlagsSet(cmd)
			if !o.create && len(o.headerFlags) > 0 {
				return usagef("--cwd, --version, --parent, --origin, --preset and --compression need --create")
			}
			if g.compression != "" && g.compression != "zstd" && g.compression != "none" {
				return usagef("--compression %q: want zstd or none", g.compression)
			}
			o.versionSet = cmd.Flags().Changed("version")
			var in io.Reader
			name := "-"
			if len(args) == 2 {
				name = args[1]
			}
			if len(args) == 2 || !o.closeInterrupted {
				if name == "-" {
					in = e.stdin
				} else {
					f, err := os.Open(name)
					if err != nil {
						return fmt.Errorf("read events: %w", err)
					}
					defer f.Close()
					in = f
				}
			}
			res, err := runAppend(cmd.Context(), e, g, args[0], name, in, &o)
			if err != nil {
				return err
			}
			if format != formatTable {
				return writeJSON(e.stdout, format, res)
			}
			return printAppend(e, res)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.assignSeq, "assign-seq", false, "number the events from the stored next seq (and set time when absent)")
	f.BoolVar(&o.closeInterrupted, "close-interrupted", false, "first append the closers of an interrupted tail turn, as dsh's resume does")
	f.BoolVar(&o.create, "create", false, "create the session when it does not exist (SESSION is then its exact id)")
	f.StringVar(&o.header.Cwd, "cwd", "", "with --create: the session's working directory")
	f.IntVar(&o.header.Version, "version", seam.MaxVersion, "with --create: the log format version (default: the newest in the store, v4 in an empty one)")
	f.StringVar(&g.compression, "compression", "", "with --create in a new or empty store: zstd (default) or none")
	f.StringVar(&o.header.ParentSession, "parent", "", "with --create: the parent session id")
	f.StringVar(&o.header.Origin, "origin", "", "with --create: \"subagent\" for a subagent session")
	f.StringVar(&o.header.AgentPreset, "preset", "", "with --create: the agent preset")
	return cmd
}

// headerFlagsSet returns the --create-only flags given.
func headerFlagsSet(cmd *cobra.Command) []string {
	var set []string
	for _, name := range []string{"cwd", "version", "parent", "origin", "preset", "compression"} {
		if cmd.Flags().Changed(name) {
			set = append(set, "--"+name)
		}
	}
	return set
}

// createVersion checks that id can be created in svc and returns the
// format to create it in: the newest among the store's sessions (MaxVersion
// for a store without any). An id that is a prefix of a stored one is
// refused: the next command naming that prefix would reach the new session,
// not the old.
func createVersion(ctx context.Context, svc seam.Service, id string) (int, error) {
	entries, err := svc.List(ctx)
	if err != nil {
		return 0, err
	}
	v := -1
	for _, en := range entries {
		if other := en.Snapshot.Header.ID; other != id && strings.HasPrefix(other, id) {
			return 0, withHint(fmt.Errorf("create %q: the id is a prefix of the stored session %q", id, other),
				"give the full id to append to that session, or another id to create a new one")
		}
		if en.Err == nil {
			v = max(v, en.Snapshot.Header.Version)
		}
	}
	if v < 0 {
		return seam.MaxVersion, nil
	}
	return v, nil
}

func runAppend(ctx context.Context, e *env, g *globals, arg, name string, in io.Reader, o *appendOptions) (*appendResult, error) {
	var s *session
	var err error
	if o.create {
		g.createRoot = true
		svc, err := g.openStore(e)
		if err != nil {
			return nil, err
		}
		s = &session{svc, arg}
	} else if s, err = g.resolveSession(ctx, e, arg); err != nil {
		return nil, err
	}
	defer s.close()

	res := &appendResult{ID: s.id, Repairs: []seam.Repair{}}
	h, err := s.svc.Open(ctx, s.id, seam.Write)
	var next int64
	switch {
	case err == nil:
		defer h.Close()
		snap, err := s.svc.Stat(ctx, s.id)
		if err != nil {
			return nil, err
		}
		next = snap.EventCount
		if o.create && len(o.headerFlags) > 0 {
			fmt.Fprintf(e.stderr, "dshctl: warning: session %s exists; %s ignored\n", s.id, strings.Join(o.headerFlags, ", "))
		}
	case o.create && errors.Is(err, seam.ErrNotFound):
		v, err := createVersion(ctx, s.svc, s.id)
		if err != nil {
			return nil, err
		}
		hdr := o.header
		if !o.versionSet {
			hdr.Version = v
		}
		hdr.ID = s.id
		hdr.CreatedAt = e.now().UnixMilli()
		if hdr.Version >= 2 {
			seeded := false
			hdr.IsSeeded = &seeded
		}
		if hdr.Origin == "subagent" {
			hdr.DelegationDepth = 1
		}
		if h, err = s.svc.Create(ctx, hdr, seam.CreateOptions{}); err != nil {
			return nil, err
		}
		defer h.Close()
		res.Created = true
	default:
		return nil, err
	}
	version := h.Header().Version

	var batch []seam.Event
	if o.closeInterrupted {
		closers, err := inspect.Closers(ctx, h)
		if err != nil {
			return nil, err
		}
		batch = append(batch, closers...)
		res.Closers = len(closers)
	}
	if in != nil {
		events, err := readEvents(in, name, version, next+int64(len(batch)), o.assignSeq, e.now().UnixMilli())
		if err != nil {
			return nil, err
		}
		batch = append(batch, events...)
	}
	res.FirstSeq, res.NextSeq = next, next+int64(len(batch))
	res.Appended = len(batch)
	if len(batch) > 0 {
		err := h.Append(ctx, batch)
		// What the append removed is reported even when it then failed:
		// the removal happened, and the backup is where the bytes are.
		reportRepairs(e, h, res)
		if err != nil {
			return nil, err
		}
	} else if res.Created {
		if err := h.Flush(ctx); err != nil {
			return nil, err
		}
	}
	return res, h.Close()
}

// reportRepairs adds the tails h removed to res and says each on stderr.
func reportRepairs(e *env, h seam.Handle, res *appendResult) {
	tr, ok := h.(seam.TailRepairer)
	if !ok {
		return
	}
	res.Repairs = append(res.Repairs[:0], tr.Repairs()...)
	for _, r := range res.Repairs {
		kept := ""
		if r.Rewritten > 0 {
			kept = fmt.Sprintf(" (the %d bytes of committed records in its frame were written back)", r.Rewritten)
		}
		fmt.Fprintf(e.stderr, "dshctl: removed a %d-byte %s tail at byte %d of %s%s; saved to %s\n",
			r.Bytes, r.Kind, r.Offset, r.Path, kept, r.Backup)
	}
}

// readEvents reads and validates a JSONL batch whose first event must have
// seq next. Nothing is written when any line is invalid, and the error names
// the line.
func readEvents(r io.Reader, name string, version int, next int64, assignSeq bool, now int64) ([]seam.Event, error) {
	if name == "-" {
		name = "stdin"
	}
	var out []seam.Event
	br := bufio.NewReaderSize(r, 64<<10)
	for lineNo := 1; ; lineNo++ {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 && !isBlank(line) {
			seq := next + int64(len(out))
			ev, verr := parseEventLine(line, version, seq, assignSeq, now)
			if verr != nil {
				return nil, fmt.Errorf("%s line %d: invalid event: %w; nothing was written", name, lineNo, verr)
			}
			out = append(out, ev)
		}
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", name, err)
		}
	}
}

func isBlank(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			return false
		}
	}
	return true
}

// parseEventLine validates one input line as an event of a version-v log
// that must have seq want.
func parseEventLine(line []byte, v int, want int64, assignSeq bool, now int64) (seam.Event, error) {
	if assignSeq {
		var err error
		if line, err = seam.AssignSeq(line, want, now); err != nil {
			return seam.Event{}, causeOf(err)
		}
	}
	rec, err := seam.DecodeRecord(line, v)
	if err != nil {
		return seam.Event{}, causeOf(err)
	}
	if rec.Packed != nil {
		return seam.Event{}, fmt.Errorf("packed %s rows are a storage form: append one event per line", rec.Packed.Kind)
	}
	ev := rec.Event
	if ev.Seq != want {
		return seam.Event{}, fmt.Errorf("seq %d, expected %d (the stored next seq; --assign-seq numbers events for you)", ev.Seq, want)
	}
	if err := seam.CheckVocabulary(&ev, v); err != nil {
		return seam.Event{}, causeOf(err)
	}
	return ev, nil
}

// causeOf strips the seam error's decoration, keeping the reason: the
// input is not a stored log, so "corrupt session log" would mislead.
func causeOf(err error) error {
	var se *seam.Error
	if errors.As(err, &se) && se.Err != nil {
		return se.Err
	}
	return err
}

func printAppend(e *env, r *appendResult) error {
	switch {
	case r.Appended == 0 && r.Created:
		_, err := fmt.Fprintf(e.stdout, "created %s (no events)\n", r.ID)
		return err
	case r.Appended == 0:
		_, err := fmt.Fprintf(e.stdout, "nothing to append to %s\n", r.ID)
		return err
	}
	verb := "appended"
	if r.Created {
		verb = "created " + r.ID + ";"
	}
	msg := fmt.Sprintf("%s %s, seq %d", verb, count(r.Appended, "event"), r.FirstSeq)
	if r.Appended > 1 {
		msg += fmt.Sprintf("–%d", r.NextSeq-1)
	}
	if r.Closers > 0 {
		msg += fmt.Sprintf(" (%s for the interrupted turn first)", count(r.Closers, "closer"))
	}
	if !r.Created {
		msg += " to " + r.ID
	}
	_, err := fmt.Fprintln(e.stdout, msg)
	return err
}
