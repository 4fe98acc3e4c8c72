package main

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/dshctl/dshctl/internal/buildinfo"
	"github.com/dshctl/dshctl/internal/inspect"
	"github.com/dshctl/dshctl/internal/replay"
	"github.com/dshctl/dshctl/internal/seam"
	"github.com/dshctl/dshctl/internal/store"
	"github.com/dshctl/dshctl/internal/verify"
	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

// formatsAnnotation holds the -o values a command takes, for completion.
const formatsAnnotation = "dshctl_formats"

// setFormats records the -o values cmd takes, which -o completes.
func setFormats(cmd *cobra.Command, formats ...string) {
	if cmd.Annotations == nil {
		cmd.Annotations = map[string]string{}
	}
	cmd.Annotations[formatsAnnotation] = strings.Join(formats, ",")
}

// maxCompletions bounds the session ids offered: a shell shows no more.
const maxCompletions = 1000

// sessionArgs says what follows a command's session argument.
type sessionArgs int

const (
	oneSession      sessionArgs = iota // nothing
	manySessions                       // more sessions
	sessionThenFile                    // a file (append's FILE)
)

// completeSessions completes the session arguments of a command that takes
// kind of them: the ids of the
// store that start with what was typed (a unique prefix completes to its
// id), each with its project as the description; a word that looks like a
// path completes as a file name instead.
func completeSessions(e *env, g *globals, kind sessionArgs) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		switch {
		case len(args) == 1 && kind == sessionThenFile:
			return nil, cobra.ShellCompDirectiveDefault
		case len(args) > 0 && kind != manySessions:
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		if strings.ContainsRune(toComplete, os.PathSeparator) || strings.HasPrefix(toComplete, ".") || strings.HasPrefix(toComplete, "~") {
			return nil, cobra.ShellCompDirectiveDefault
		}
		matches, err := store.Complete(cmd.Context(), g.request(e), toComplete, maxCompletions, store.Options{AllowUnknownTypes: true})
		if err != nil {
			cobra.CompDebugln(err.Error(), true)
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var out []cobra.Completion
		for _, m := range matches {
			desc := m.Cwd
			if m.Unreadable {
				desc = "unreadable"
			}
			out = append(out, cobra.CompletionWithDesc(m.ID, desc))
		}
		slices.Sort(out)
		return slices.Compact(out), cobra.ShellCompDirectiveNoFileComp
	}
}

// registerCompletions completes the values of the flags that take one of a
// fixed set, by flag name, on every command that has them: -o (the
// command's own formats, see setFormats), --sort, --type, --policy,
// --compression, --mode, --sqlite-schema, --format-version, --origin; and
// the flags that name a folder complete folder names.
func registerCompletions(root *cobra.Command) {
	fixed := map[string][]string{
		"sort":           inspect.SortKeys,
		"type":           inspect.TypePatterns(),
		"policy":         replay.PolicyNames(),
		"compression":    {"zstd", "none"},
		"mode":           {verify.ModeTolerateTail.String(), verify.ModeStrict.String(), verify.ModePointInTime.String()},
		"sqlite-schema":  {"17", "14"},
		"format-version": formatVersions(),
		"origin":         {"subagent"},
		"in":             grepIn,
		"state":          inspect.States,
	}
	// Flags naming a folder complete folder names.
	dirs := []string{"save", "convert", "backup-dir", "cwd", "project"}
	root.RegisterFlagCompletionFunc("output", func(cmd *cobra.Command, _ []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		formats := cmd.Annotations[formatsAnnotation]
		if formats == "" {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return strings.Split(formats, ","), cobra.ShellCompDirectiveNoFileComp
	})
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for name, values := range fixed {
			if c.LocalNonPersistentFlags().Lookup(name) != nil {
				c.RegisterFlagCompletionFunc(name, cobra.FixedCompletions(values, cobra.ShellCompDirectiveNoFileComp))
			}
		}
		for _, name := range dirs {
			if c.LocalNonPersistentFlags().Lookup(name) != nil {
				c.MarkFlagDirname(name)
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

func newCompletionCmd(root *cobra.Command) *cobra.Command {
	return &cobra.Command{
		Use:       "completion bash|zsh|fish|powershell",
		Short:     "Print a shell completion script",
		Long:      help("completion"),
		Args:      cobra.MatchAll(cobra.ExactArgs(1), cobra.OnlyValidArgs),
		ValidArgs: []string{"bash", "zsh", "fish", "powershell"},
		RunE: func(cmd *cobra.Command, args []string) error {
			w := cmd.OutOrStdout()
			switch args[0] {
			case "bash":
				return root.GenBashCompletionV2(w, true)
			case "zsh":
				return root.GenZshCompletion(w)
			case "fish":
				return root.GenFishCompletion(w, true)
			}
			return root.GenPowerShellCompletionWithDesc(w)
		},
	}
}

// newManCmd writes the man pages; `make man` runs it. It is hidden: users
// install the pages, they do not make them.
func newManCmd(root *cobra.Command) *cobra.Command {
	return &cobra.Command{
		Use:    "man DIR",
		Short:  "Write dshctl's man pages (section 1) into DIR",
		Hidden: true,
		Args:   cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			if err := os.MkdirAll(args[0], 0o755); err != nil {
				return err
			}
			header := &doc.GenManHeader{Section: "1", Source: "dshctl " + buildinfo.Read().Version,
				Manual: "dshctl manual"}
			if err := doc.GenManTree(root, header, args[0]); err != nil {
				return fmt.Errorf("write man pages: %w", err)
			}
			return nil
		},
	}
}

// formatVersions are the log formats dshctl writes, newest first.
func formatVersions() []string {
	var out []string
	for v := seam.MaxVersion; v >= 0; v-- {
		out = append(out, strconv.Itoa(v))
	}
	return out
}
