package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/dshctl/dshctl/internal/search"
	"github.com/dshctl/dshctl/internal/sessionview"
	"github.com/dshctl/dshctl/internal/store"
	"github.com/dshctl/dshctl/internal/termui"
	"github.com/spf13/cobra"
)

// grepIn are the values of grep's --in.
var grepIn = oneOf("text", "json")

type grepOptions struct {
	fixed, ignoreCase   bool
	in                  string
	types               []string
	times               timeFlags
	project             string
	files, count, quiet bool
	max                 int
}

func newGrepCmd(e *env, g *globals) *cobra.Command {
	var o grepOptions
	var out *output
	cmd := &cobra.Command{
		Use:   "grep PATTERN [SESSION...]",
		Short: "Search the events of every session, or of those named",
		Long:  help("grep"),
		Example: `  dshctl grep 'TypeError'                       # every session of the store
  dshctl grep -i -F 'npm ci' session-4f1c
  dshctl grep --type 'tool/*' --since 2d 'ENOENT'
  dshctl grep -l editorconfig                    # the ids of the sessions with a match
  dshctl grep -c --project ~/src/app 'panic:'
  dshctl grep --in json '"kind":"interrupted"'   # the canonical JSON lines
  dshctl grep -o jsonl 'build\.sh' | jq -r .field`,
		Args:              cobra.MinimumNArgs(1),
		ValidArgsFunction: completeGrepArgs(e, g),
		RunE: func(cmd *cobra.Command, args []string) error {
			ro, err := o.runOptions(args[0], e)
			if err != nil {
				return err
			}
			return runGrep(cmd.Context(), e, g, out.format, ro, args[1:])
		},
	}
	out = addOutput(cmd, e, tableFormats...)
	f := cmd.Flags()
	f.BoolVarP(&o.fixed, "fixed-strings", "F", false, "take PATTERN as a string, not a regular expression")
	f.BoolVarP(&o.ignoreCase, "ignore-case", "i", false, "match letters of either case")
	enumFlag(cmd, &o.in, "in", "", "text", grepIn, "what is matched, each line of the string values of an event's data (decoded) or the event's canonical JSON line")
	typesFlag(cmd, &o.types, "search only events of this type (repeatable, glob: 'tool/*')")
	o.times.add(f, "events", "events")
	f.StringVar(&o.project, "project", "", "search only sessions whose cwd is `DIR`")
	f.BoolVarP(&o.files, "files-with-matches", "l", false, "print only the ids of the sessions with a match")
	f.BoolVarP(&o.count, "count", "c", false, "print each session with a match and its number of matching lines")
	f.BoolVarP(&o.quiet, "quiet", "q", false, "print nothing; exit 0 at the first match")
	f.IntVarP(&o.max, "max-count", "m", 0, "stop searching a session after `N` matching lines (0: no limit)")
	return cmd
}

// runOptions checks the flags and compiles the pattern.
func (o *grepOptions) runOptions(pattern string, e *env) (search.RunOptions, error) {
	var ro search.RunOptions
	switch {
	case countTrue(o.files, o.count, o.quiet) > 1:
		return ro, termui.Usagef("-l, -c and -q do not go together: each says what to print")
	case o.max < 0:
		return ro, termui.Usagef("--max-count must not be negative")
	}
	p, err := search.Compile(pattern, search.PatternOptions{Fixed: o.fixed, IgnoreCase: o.ignoreCase})
	if err != nil {
		return ro, termui.Usage(err)
	}
	r, err := o.times.parse(e)
	if err != nil {
		return ro, err
	}
	ro.Options = search.Options{Pattern: p, Types: o.types, Max: o.max,
		Since: r.Since, HasSince: r.HasSince, Until: r.Until, HasUntil: r.HasUntil}
	if o.in == "json" {
		ro.In = search.InJSON
	}
	switch {
	case o.files:
		ro.Mode = search.Files
	case o.count:
		ro.Mode = search.Count
	case o.quiet:
		ro.Mode = search.Quiet
	}
	if o.project != "" {
		if ro.Project, err = filepath.Abs(o.project); err != nil {
			return ro, termui.Usage(err)
		}
	}
	return ro, nil
}

func countTrue(bs ...bool) int {
	n := 0
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}

// runGrep searches the sessions args name, or the whole store, and says
// by its error whether anything matched: exit 0 when something did, 1
// (silently) when nothing did, 1 with a message when a session could not
// be searched (the others are).
func runGrep(ctx context.Context, e *env, g *globals, format string, o search.RunOptions, args []string) error {
	out := e.out(format)
	p := sessionview.NewGrepPrinter(out, o.Mode)
	var each func(context.Context, search.Visit) error
	var unopened []error
	var misuse error // a --store that is not the store of a session path
	if len(args) == 0 {
		svc, err := g.openStore(e, store.Options{AllowUnknownTypes: true})
		if err != nil {
			return err
		}
		defer svc.Close()
		each = func(ctx context.Context, v search.Visit) error { return search.EachSession(ctx, svc, v) }
	} else {
		ss, err := store.OpenEachSession(ctx, g.request(e), args, store.Options{AllowUnknownTypes: true}, func(arg string, err error) {
			var oth *store.OtherStoreError
			if errors.As(err, &oth) {
				misuse = cmp.Or(misuse, err)
			}
			unopened = append(unopened, fmt.Errorf("%q: %w", arg, sessionview.Explain(err)))
		})
		defer ss.Close()
		if err = cmp.Or(err, misuse); err != nil {
			return notFound(err)
		}
		for _, err := range unopened {
			fmt.Fprintf(e.stderr, "dshctl: grep: %s\n", termui.OneLineError(err))
			if h := termui.Hint(err); h != "" { // a typo away from a session, say
				fmt.Fprintf(e.stderr, "hint: %s\n", h)
			}
		}
		sources := make([]search.Source, len(ss.Sessions))
		for i, s := range ss.Sessions {
			sources[i] = search.Source{Service: s.Service, ID: s.ID}
		}
		each = func(ctx context.Context, v search.Visit) error { return search.EachSource(ctx, sources, v) }
	}
	res, err := search.Run(ctx, each, o, p)
	if cerr := p.Close(); err == nil {
		err = cerr
	}
	failed := res.Failed + len(unopened)
	switch {
	case err != nil:
		return err
	case res.Lines > 0 && o.Mode == search.Quiet:
		return nil // grep -q: a match settles it, whatever failed
	case failed > 0:
		return fmt.Errorf("%s could not be searched", termui.Count(failed, "session"))
	case res.Lines == 0:
		return termui.Silent("no match")
	}
	return nil
}

// completeGrepArgs completes grep's SESSION arguments (not its PATTERN).
func completeGrepArgs(e *env, g *globals) cobra.CompletionFunc {
	sessions := completeSessions(e, g, manySessions)
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) == 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return sessions(cmd, args[1:], toComplete)
	}
}
