package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"strings"
	"time"

	"github.com/dshctl/dshctl/internal/ingest"
	"github.com/dshctl/dshctl/internal/seam"
	"github.com/dshctl/dshctl/internal/sessionview"
	"github.com/dshctl/dshctl/internal/store"
	"github.com/dshctl/dshctl/internal/termui"
	"github.com/spf13/cobra"
)

// appendGCPercent is append's GC target (see newAppendCmd).
const appendGCPercent = 25

type appendOptions struct {
	assignSeq, closeInterrupted bool
	create                      bool
	header                      seam.Header
	compression                 string
	sqliteSchema                int
	// versionSet says --format-version was given; otherwise a new session
	// takes the store's newest format, so that the dsh using the store
	// reads it.
	versionSet bool
	// headerFlags names the header flags given, for the warning when the
	// session exists and they do not apply.
	headerFlags []string
	// expectNext is --expect-next-seq when given.
	expectNext *int64
	// force writes even when the session looks in use (--force).
	force bool
}

func newAppendCmd(e *env, g *globals) *cobra.Command {
	var o appendOptions
	var expectNext int64
	var out *output
	cmd := &cobra.Command{
		Use:   "append SESSION [FILE|-]",
		Short: "Append events to a session as one durable batch",
		Long:  help("append"),
		Example: `  dshctl append session-4f1c events.jsonl
  printf '%s\n' '{"type":"session/title","data":{"title":"Fix CI"}}' | dshctl append --assign-seq session-4f1c
  dshctl append --close-interrupted session-7a2b
  dshctl append --close-interrupted --assign-seq session-7a2b late-result.jsonl
  dshctl append --create --cwd "$PWD" --assign-seq my-session events.jsonl`,
		Args:              cobra.RangeArgs(1, 2),
		ValidArgsFunction: completeSessions(e, g, sessionThenFile),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.headerFlags = changedFlags(cmd, "cwd", "format-version", "parent", "origin", "preset", "compression", "sqlite-schema")
			if !o.create && len(o.headerFlags) > 0 {
				return termui.Usagef("--cwd, --format-version, --parent, --origin, --preset, --compression and --sqlite-schema need --create")
			}
			o.versionSet = cmd.Flags().Changed("format-version")
			if cmd.Flags().Changed("expect-next-seq") {
				if expectNext < 0 {
					return termui.Usagef("--expect-next-seq must not be negative")
				}
				o.expectNext = &expectNext
			}
			name := "-"
			if len(args) == 2 {
				name = args[1]
			}
			var in io.Reader
			switch {
			case name != "-":
				f, err := ingest.OpenFile(cmd.Context(), name)
				if err != nil {
					return err
				}
				defer f.Close()
				in = f
			case len(args) == 2 || !o.closeInterrupted || !e.stdinTTY:
				in = e.stdin
			}
			// A batch is read, checked and written a record at a time, and
			// each pass lets go of the one before: a low GC target keeps
			// the heap near the record (or chunk) at hand.
			defer debug.SetGCPercent(debug.SetGCPercent(appendGCPercent))
			res, err := runAppend(cmd.Context(), e, g, args[0], name, in, &o)
			if err != nil {
				return err
			}
			return sessionview.PrintAppend(e.out(out.format), res)
		},
	}
	out = addOutput(cmd, e, tableFormats...)
	f := cmd.Flags()
	f.BoolVar(&o.assignSeq, "assign-seq", false, "number the events from the stored next seq (and set time when absent)")
	f.Int64Var(&expectNext, "expect-next-seq", 0, "write nothing unless the log's next seq is `N` (a safe retry; see above)")
	f.BoolVar(&o.closeInterrupted, "close-interrupted", false, "after the events, append the closers of the turn left open, as dsh's resume does")
	f.BoolVar(&o.force, "force", false, "write even when the session looks in use by a dsh that takes no lock (only when you know no dsh runs it)")
	f.BoolVar(&o.create, "create", false, "create the session when it does not exist (SESSION is then its exact id)")
	f.StringVar(&o.header.Cwd, "cwd", "", "with --create: the session's working directory")
	intEnumFlag(cmd, &o.header.Version, "format-version", 0, oneOf(formatVersions()...), "with --create: the log format version (default: the newest in the store, v0 in an empty one: the only format released dsh reads)")
	enumFlag(cmd, &o.compression, "compression", "", "", oneOf("zstd", "none"), "with --create: other than the store's only in a new or empty store")
	intEnumFlag(cmd, &o.sqliteSchema, "sqlite-schema", 0, oneOf("17", "14"), "with --create in a new SQLite store (--store sqlite:PATH): its schema, 17 by default (14 holds format v0 only)")
	f.StringVar(&o.header.ParentSession, "parent", "", "with --create: the parent session id")
	cmd.RegisterFlagCompletionFunc("parent", completeSessions(e, g, manySessions))
	enumFlag(cmd, &o.header.Origin, "origin", "", "", oneOf("subagent"), "with --create: the origin of a subagent session")
	f.StringVar(&o.header.AgentPreset, "preset", "", "with --create: the agent preset")
	return cmd
}

// runAppend appends to the session arg names, or creates it
// (ingest.Append), and says on stderr what the write repaired first.
func runAppend(ctx context.Context, e *env, g *globals, arg, name string, in io.Reader, o *appendOptions) (*ingest.Result, error) {
	if name == "-" {
		name = "stdin"
	}
	ao := ingest.Options{CloseInterrupted: o.closeInterrupted, Input: in, Name: name,
		AssignSeq: o.assignSeq, Now: e.now().UnixMilli(), ExpectNextSeq: o.expectNext, MaxRecordBytes: g.maxRecord, MaxFrameBytes: g.maxFrame}
	so := writeOptions(e, o.force)
	if o.create {
		hdr := o.header
		if !o.versionSet {
			hdr.Version = ingest.Latest
		}
		hdr.CreatedAt = e.now().UnixMilli()
		ao.Create = &hdr
		so.Create, so.Compression, so.SQLiteSchema = true, o.compression, o.sqliteSchema
	}
	s, err := store.OpenTarget(ctx, g.request(e), arg, o.create, so)
	if errors.Is(err, seam.ErrNotFound) {
		return nil, termui.WithHint(sessionview.Explain(err), "add --create to create the session (SESSION is then its exact id), or run 'dshctl list --all'")
	}
	if err != nil {
		return nil, sessionview.Explain(err)
	}
	defer s.Close()
	res, err := ingest.Append(ctx, s.Service, s.ID, ao)
	if res != nil {
		if o.create && !res.Created && len(o.headerFlags) > 0 {
			fmt.Fprintf(e.stderr, "dshctl: warning: session %s exists; %s ignored\n", s.ID, strings.Join(o.headerFlags, ", "))
		}
		// What the append removed is reported even when it then failed:
		// the removal happened, and the backup is where the bytes are.
		for _, r := range res.Repairs {
			fmt.Fprintln(e.stderr, "dshctl: "+sessionview.RepairNote(r))
		}
	}
	return res, sessionview.Explain(err)
}

// writeOptions are the store options of a command that writes: write
// opens refuse a session that a writer taking no lock (dsh 0.1.0) looks to
// be writing, unless --force. DSHCTL_TEST_INUSE_WINDOW (a duration) sets
// how recent a change of the log makes it look in use, for the tests,
// whose logs are all made moments before they are written to.
func writeOptions(e *env, force bool) store.Options {
	if force {
		return store.Options{}
	}
	o := store.Options{ProbeWriters: true, InUseWindow: store.InUseWindow}
	if d, err := time.ParseDuration(e.getenv("DSHCTL_TEST_INUSE_WINDOW")); err == nil {
		o.InUseWindow = d
	}
	return o
}
