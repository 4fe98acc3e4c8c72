//go:build unix

package main

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"

	"github.com/rogpeppe/go-internal/testscript"
)

func mkfifo(path string) error { return syscall.Mkfifo(path, 0o600) }

// limitCPU makes the system kill this process and those it starts after
// secs seconds of CPU time each (SIGKILL at the hard limit: Go ignores
// SIGXCPU).
func limitCPU(secs int64) error {
	lim := syscall.Rlimit{Cur: uint64(secs), Max: uint64(secs)}
	return syscall.Setrlimit(syscall.RLIMIT_CPU, &lim)
}

func isRoot() bool { return os.Geteuid() == 0 }

// maxRSS is the peak resident memory, in bytes, of a process that ended.
func maxRSS(ps *os.ProcessState) (int64, bool) {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0, false
	}
	if runtime.GOOS == "darwin" {
		return int64(ru.Maxrss), true // bytes there, KiB elsewhere
	}
	return int64(ru.Maxrss) * 1024, true
}

// changeStamp is what any write to a file changes: its inode, change time
// and modification time.
func changeStamp(fi fs.FileInfo) string {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fi.ModTime().String()
	}
	return fmt.Sprintf("%d %v %v", st.Ino, ctime(st), fi.ModTime().UnixNano())
}

func fileOwner(fi fs.FileInfo) (uid, gid int, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, false
	}
	return int(st.Uid), int(st.Gid), true
}

var nobodyBin struct {
	once sync.Once
	dir  string
	err  error
}

// asNobody returns the command that runs dshctl-measure (measure) on
// dshctl (bin) with args as the user nobody (65534): setpriv, with copies
// of both that nobody can run, after opening the way to the script's work
// directory (the test's own temp directories) and making it nobody's.
func asNobody(ts *testscript.TestScript, measure, bin string, args []string) (string, []string) {
	nobodyBin.once.Do(func() {
		dir, err := os.MkdirTemp("", "dshctl-nobody")
		if err == nil {
			err = os.Chmod(dir, 0o755)
		}
		if err == nil {
			err = copyExec(measure, filepath.Join(dir, "dshctl-measure"))
		}
		if err == nil {
			err = copyExec(bin, filepath.Join(dir, "dshctl"))
		}
		nobodyBin.dir, nobodyBin.err = dir, err
	})
	ts.Check(nobodyBin.err)
	work := ts.Getenv("WORK")
	tmp := filepath.Clean(os.TempDir())
	for d := filepath.Dir(work); strings.HasPrefix(d, tmp+string(filepath.Separator)); d = filepath.Dir(d) {
		if fi, err := os.Stat(d); err == nil {
			os.Chmod(d, fi.Mode().Perm()|0o011)
		}
	}
	// The work directory becomes nobody's, but for the files made
	// unreadable on purpose, which stay as they are.
	filepath.WalkDir(work, func(p string, d fs.DirEntry, err error) error {
		if err == nil {
			if fi, err := d.Info(); err == nil && fi.Mode().Perm() != 0 {
				os.Lchown(p, 65534, 65534)
			}
		}
		return nil
	})
	out := filepath.Join(ts.MkAbs("."), ".bounded")
	return "setpriv", append([]string{"--reuid=65534", "--regid=65534", "--clear-groups",
		filepath.Join(nobodyBin.dir, "dshctl-measure"), out, filepath.Join(nobodyBin.dir, "dshctl")}, args...)
}

func copyExec(from, to string) error {
	src, err := os.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		return err
	}
	_, err = io.Copy(dst, src)
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	return err
}
