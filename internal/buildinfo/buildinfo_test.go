package buildinfo

import (
	"runtime"
	"testing"
)

func TestString(t *testing.T) {
	commit, at := "3324a81d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b", "2026-12-01T16:36:03Z"
	for _, c := range []struct {
		info Info
		want string
	}{
		{Info{Version: "v1.2.3", GoVersion: "go1.26.8", Platform: "linux/amd64"}, "dshctl v1.2.3, go1.26.8 linux/amd64"},
		{Info{Version: "(devel)", Commit: &commit, CommitTime: &at, Modified: true, GoVersion: "go1.26.8", Platform: "darwin/arm64"},
			"dshctl (devel) (commit 3324a81d5e6f, 2026-12-01T16:36:03Z, modified), go1.26.8 darwin/arm64"},
	} {
		if got := c.info.String(); got != c.want {
			t.Errorf("String() = %q, want %q", got, c.want)
		}
	}
	if r := Read(); r.GoVersion == "" || r.Platform != runtime.GOOS+"/"+runtime.GOARCH || r.Version == "" {
		t.Errorf("Read() = %+v", r)
	}
}
