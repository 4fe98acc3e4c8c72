package procfd

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"strconv"
	"syscall"
)

// Writers returns the processes, other than this one and other runs of
// this program's executable (which take the session's lock instead), that
// have one of paths open for writing (O_WRONLY or O_RDWR, read from
// fdinfo's flags). Files that do not exist are skipped. It sees only the
// processes whose /proc entries this process may read: as a user other
// than root, that user's own. ErrCannotTell: /proc is not mounted.
func Writers(ctx context.Context, paths ...string) ([]Holder, error) {
	type id struct{ dev, ino uint64 }
	want := map[id]string{}
	for _, p := range paths {
		var st syscall.Stat_t
		if err := syscall.Stat(p, &st); err == nil {
			want[id{uint64(st.Dev), st.Ino}] = p
		}
	}
	if len(want) == 0 {
		return nil, nil
	}
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return nil, ErrCannotTell
	}
	self := os.Getpid()
	var exe syscall.Stat_t
	haveExe := syscall.Stat("/proc/self/exe", &exe) == nil
	var out []Holder
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil || pid == self {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		dir := "/proc/" + p.Name()
		fds, err := os.ReadDir(dir + "/fd")
		if err != nil {
			continue // gone, or not ours to look at
		}
		for _, fd := range fds {
			var st syscall.Stat_t
			if syscall.Stat(dir+"/fd/"+fd.Name(), &st) != nil {
				continue
			}
			path, ok := want[id{uint64(st.Dev), st.Ino}]
			if !ok || !writeMode(dir+"/fdinfo/"+fd.Name()) {
				continue
			}
			var pe syscall.Stat_t
			if haveExe && syscall.Stat(dir+"/exe", &pe) == nil && pe.Dev == exe.Dev && pe.Ino == exe.Ino {
				break // another dshctl: kept apart by the session lock
			}
			out = append(out, Holder{PID: pid, Command: command(dir), Path: path})
			break
		}
	}
	return out, nil
}

// writeMode reports whether the fdinfo file at path says the descriptor
// was opened for writing.
func writeMode(path string) bool {
	data, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		v, ok := bytes.CutPrefix(sc.Bytes(), []byte("flags:"))
		if !ok {
			continue
		}
		flags, err := strconv.ParseUint(string(bytes.TrimSpace(v)), 8, 64)
		if err != nil {
			return false
		}
		mode := flags & syscall.O_ACCMODE
		return mode == syscall.O_WRONLY || mode == syscall.O_RDWR
	}
	return false
}

// command is the name of the process whose /proc folder is dir.
func command(dir string) string {
	comm, err := os.ReadFile(dir + "/comm")
	if err != nil {
		return ""
	}
	return string(bytes.TrimSpace(comm))
}
