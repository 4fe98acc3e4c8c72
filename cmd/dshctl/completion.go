package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/dshctl/dshctl/internal/buildinfo"
	"github.com/dshctl/dshctl/internal/seam"
	"github.com/dshctl/dshctl/internal/store"
	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

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

// registerCompletions makes the flags that name a folder complete folder
// names, on every command that has them. (Flags of a fixed set of values
// complete them where they are defined: enumFlag.)
func registerCompletions(root *cobra.Command) {
	dirs := []string{"save", "convert", "backup-dir", "cwd", "project"}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
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
	shells := oneOf("bash", "zsh", "fish", "powershell")
	return &cobra.Command{
		Use:   "completion SHELL",
		Short: "Print a shell completion script: " + strings.Join(shells.values, ", "),
		Long:  help("completion"),
		Args: func(_ *cobra.Command, args []string) error {
			if _, ok := shells.accept(args[0]); !ok {
				return fmt.Errorf("unknown shell %q: want %s", args[0], shells.want())
			}
			return nil
		},
		ValidArgs: shells.values,
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
			if err := writeManPages(root, args[0]); err != nil {
				return fmt.Errorf("write man pages: %w", err)
			}
			return nil
		},
	}
}

// writeManPages writes the page of cmd and of each command under it into
// dir, as cobra's doc.GenManTree names them (dshctl-list.1), each with
// the EXIT STATUS and ENVIRONMENT sections of help/exit-status.txt and
// help/environment.txt before its SEE ALSO.
func writeManPages(cmd *cobra.Command, dir string) error {
	for _, c := range cmd.Commands() {
		if c.IsAvailableCommand() && !c.IsAdditionalHelpTopicCommand() {
			if err := writeManPages(c, dir); err != nil {
				return err
			}
		}
	}
	header := &doc.GenManHeader{Section: "1", Source: "dshctl " + buildinfo.Read().Version, Manual: "dshctl manual"}
	if !cmd.HasParent() {
		// The root's help adds the sections the page has of its own.
		long := cmd.Long
		cmd.Long = help("dshctl")
		defer func() { cmd.Long = long }()
	}
	var page bytes.Buffer
	if err := doc.GenMan(cmd, header, &page); err != nil {
		return err
	}
	sections := ".SH EXIT STATUS\n" + manList(help("exit-status")) + ".SH ENVIRONMENT\n" + manList(help("environment"))
	text := page.String()
	if at := strings.Index(text, ".SH SEE ALSO"); at >= 0 {
		text = text[:at] + sections + text[at:]
	} else {
		text += sections
	}
	name := strings.ReplaceAll(cmd.CommandPath(), " ", "-") + ".1"
	return os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644)
}

// manList is a help list ("NAME  what", continued on indented lines) as
// roff tagged paragraphs.
func manList(list string) string {
	var b strings.Builder
	for line := range strings.Lines(list) {
		line = strings.TrimRight(line, "\n")
		if strings.HasPrefix(line, " ") {
			b.WriteString(manEscape(strings.TrimSpace(line)) + "\n")
			continue
		}
		name, what, _ := strings.Cut(line, " ")
		fmt.Fprintf(&b, ".TP\n.B %s\n%s\n", manEscape(name), manEscape(strings.TrimSpace(what)))
	}
	return b.String()
}

// manEscape keeps text from being read as roff: a backslash, and a line
// starting with a dot or quote.
func manEscape(s string) string {
	s = strings.ReplaceAll(s, `\`, `\e`)
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "'") {
		s = `\&` + s
	}
	return s
}

// formatVersions are the log formats dshctl writes, newest first.
func formatVersions() []string {
	var out []string
	for v := seam.MaxVersion; v >= 0; v-- {
		out = append(out, strconv.Itoa(v))
	}
	return out
}
