// Package buildinfo reads what the Go toolchain records in the dshctl
// binary: its version, the commit it was built from, the Go version.
package buildinfo

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// Info is what `dshctl version` says about the binary.
type Info struct {
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

// Read reads the build information of the running binary.
func Read() Info {
	b := Info{Version: "(unknown)", GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
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
func (b Info) String() string {
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

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
