package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

// buildInfo is what `dshctl version` says about the binary, from the
// information the Go toolchain stamps into it.
type buildInfo struct {
	Version string `json:"version"`
	// Commit is the VCS revision built, null when the build did not
	// record one (go run, go test, a build outside a checkout).
	Commit     *string `json:"commit"`
	CommitTime *string `json:"commitTime"`
	// Modified says the checkout had uncommitted changes.
	Modified  bool   `json:"modified"`
	GoVersion string `json:"goVersion"`
	Platform  string `json:"platform"`
}

// readBuildInfo reads the build information of the running binary.
func readBuildInfo() buildInfo {
	b := buildInfo{Version: "(unknown)", GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return b
	}
	if v := bi.Main.Version; v != "" {
		b.Version = v
	}
	b.GoVersion = bi.GoVersion
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Commit = nonEmpty(s.Value)
		case "vcs.time":
			b.CommitTime = nonEmpty(s.Value)
		case "vcs.modified":
			b.Modified = s.Value == "true"
		}
	}
	return b
}

// String is the one line --version prints.
func (b buildInfo) String() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "dshctl %s", b.Version)
	if b.Commit != nil {
		commit := *b.Commit
		if len(commit) > 12 {
			commit = commit[:12]
		}
		details := []string{"commit " + commit}
		if b.CommitTime != nil {
			details = append(details, *b.CommitTime)
		}
		if b.Modified {
			details = append(details, "modified")
		}
		fmt.Fprintf(&sb, " (%s)", strings.Join(details, ", "))
	}
	fmt.Fprintf(&sb, ", %s %s", b.GoVersion, b.Platform)
	return sb.String()
}

var versionFormats = []string{formatText, formatJSON, formatJSONL}

func newVersionCmd(e *env, g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Show dshctl's version, commit and Go version",
		Long: `Show dshctl's version, the commit it was built from and the Go toolchain
that built it, from the information Go records in the binary. dshctl
--version prints the same line.`,
		Example: `  dshctl version
  dshctl version -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			format, err := g.outputFormat(formatText, versionFormats...)
			if err != nil {
				return err
			}
			b := readBuildInfo()
			if format != formatText {
				return writeJSON(e.stdout, format, b)
			}
			_, err = fmt.Fprintln(e.stdout, b)
			return err
		},
	}
	setFormats(cmd, versionFormats...)
	return cmd
}

// printVersion is what --version prints.
func printVersion(w io.Writer) error {
	_, err := fmt.Fprintln(w, readBuildInfo())
	return err
}
