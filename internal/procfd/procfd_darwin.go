package procfd

import (
	"context"
	"fmt"
	"os"
	"os/exec"
)

// Writers returns the processes, other than this one and other runs of
// this program's executable (which take the session's lock instead), that
// have one of paths open for writing, as /usr/sbin/lsof (else the lsof
// on PATH) reports them: macOS has no /proc, and asking the kernel
// (proc_pidinfo) needs cgo. Files that do not exist are skipped. lsof sees
// only the processes this user may inspect: as a user other than root,
// that user's own. ErrCannotTell: no lsof, or it failed or took over 10 s.
func Writers(ctx context.Context, paths ...string) ([]Holder, error) {
	lsof := "/usr/sbin/lsof"
	if _, err := os.Stat(lsof); err != nil {
		if lsof, err = exec.LookPath("lsof"); err != nil {
			return nil, fmt.Errorf("%w: no lsof: %w", ErrCannotTell, err)
		}
	}
	exe, err := os.Executable()
	if err != nil {
		exe = ""
	}
	return lsofWriters(ctx, lsof, exe, paths...)
}
