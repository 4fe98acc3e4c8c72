package buildinfo

import (
	"runtime"
	"testing"
)

func TestString(t *testing.T) {
	commit, at := "3324a81d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b", "2026-12-01T16:36:03.000Z"
	for _, c := range []struct {
		info Info
		want string
	}{
		{Info{Version: "v1.2.3", GoVersion: "go1.26.8", Platform: "linux/amd64"}, "dshctl v1.2.3, go1.26.8 linux/amd64"},
		{Info{Version: "(devel)", Commit: &commit, CommitTime: &at, Modified: new(true), GoVersion: "go1.26.8", Platform: "darwin/arm64"},
			"dshctl (devel) (commit 3324a81d5e6f, 2026-12-01T16:36:03.000Z, modified), go1.26.8 darwin/arm64"},
	} {
		if got := c.info.String(); got != c.want {
			t.Errorf("String() = %q, want %q", got, c.want)
		}
	}
	if r := Read(); r.GoVersion == "" || r.Platform != runtime.GOOS+"/"+runtime.GOARCH || r.Version == "" {
		t.Errorf("Read() = %+v", r)
	}
}

// TestStamped: what make build stamps stands before the build info's, and
// the commit time is given as every time is.
func TestStamped(t *testing.T) {
	defer func(v, c, at, m string) { version, commit, commitTime, modified = v, c, at, m }(version, commit, commitTime, modified)
	version, commit, commitTime, modified = "v1.2.3", "3324a81d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b", "2026-12-01T16:36:03Z", "true"
	r := Read()
	if r.Version != "v1.2.3" || r.Commit == nil || *r.Commit != commit || r.Modified == nil || !*r.Modified {
		t.Errorf("Read() = %+v", r)
	}
	if r.CommitTime == nil || *r.CommitTime != "2026-12-01T16:36:03.000Z" || r.CommitTimeMs == nil || *r.CommitTimeMs != 1796142963000 {
		t.Errorf("commit time %v, %v; want 2026-12-01T16:36:03.000Z, 1796142963000", r.CommitTime, r.CommitTimeMs)
	}
	commit = ""
	if r := Read(); r.Commit == nil && r.Modified != nil {
		t.Errorf("no commit known, yet modified is %v; want null", *r.Modified)
	}
	commit = "3324a81d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b"
	commitTime = "yesterday"
	if r := Read(); r.CommitTime != nil || r.CommitTimeMs != nil {
		t.Errorf("a time that does not parse: %v, %v; want null", r.CommitTime, r.CommitTimeMs)
	}
}
