// Package buildinfo reads what the Go toolchain records in the dshctl
// binary: its version, the commit it was built from, the Go version.
package buildinfo

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
	"time"
)

// What `make build` stamps with -ldflags -X (from git), for builds that
// record no VCS information of their own (-buildvcs=false, or a build
// outside a checkout): each, when set, stands before the build info's.
var (
	version    string
	commit     string
	commitTime string // RFC 3339, as git's %cd in UTC
	modified   string // "true" when the checkout had changes
)

// Info is what `dshctl version` says about the binary.
type Info struct {
	Version string `json:"version"`
	// Commit is the VCS revision built, null when the build did not
	// record one (go run, go test, a build outside a checkout).
	Commit *string `json:"commit"`
	// CommitTime is the commit's time as every time dshctl prints (RFC
	// 3339 UTC with milliseconds), with its epoch-ms twin.
	CommitTime   *string `json:"commitTime"`
	CommitTimeMs *int64  `json:"commitTimeMs"`
	// Modified says the checkout had uncommitted changes; null, as
	// Commit, when the build recorded none.
	Modified  *bool  `json:"modified"`
	GoVersion string `json:"goVersion"`
	Platform  string `json:"platform"`
}

// Read reads the build information of the running binary.
func Read() Info {
	b := Info{Version: "(unknown)", GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	var at string
	if bi, ok := debug.ReadBuildInfo(); ok {
		if v := bi.Main.Version; v != "" {
			b.Version = v
		}
		b.GoVersion = bi.GoVersion
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				b.Commit = nonEmpty(s.Value)
			case "vcs.time":
				at = s.Value
			case "vcs.modified":
				b.Modified = new(s.Value == "true")
			}
		}
	}
	if version != "" {
		b.Version = version
	}
	if commit != "" {
		b.Commit, b.Modified = &commit, new(modified == "true")
		at = commitTime
	}
	if b.Commit == nil {
		b.Modified = nil // of no known commit
	}
	b.CommitTime, b.CommitTimeMs = timestamp(at)
	return b
}

// timestamp is an RFC 3339 time as dshctl's JSON gives times: three
// fraction digits in UTC, and its epoch ms; both nil when s is none.
func timestamp(s string) (*string, *int64) {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return nil, nil
	}
	ms := t.UnixMilli()
	v := time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z")
	return &v, &ms
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
		if b.Modified != nil && *b.Modified {
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
