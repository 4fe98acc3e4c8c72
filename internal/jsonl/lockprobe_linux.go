package jsonl

import (
	"bufio"
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// procLocksHeld looks for a flock on the file fi in /proc/locks; ok is
// false when the table cannot be read.
func procLocksHeld(fi fs.FileInfo) (held, ok bool) {
	_, held, ok = procLockHolder(fi)
	return held, ok
}

// procLockHolder is procLocksHeld, also returning the pid /proc/locks
// gives for the holder (0 when it shows none, as across pid namespaces).
func procLockHolder(fi fs.FileInfo) (pid int, held, ok bool) {
	data, err := os.ReadFile("/proc/locks")
	if err != nil {
		return 0, false, false
	}
	dev, ino, _ := fileIdentity(fi)
	want := []byte(fmt.Sprintf("%02x:%02x:%d", unix.Major(dev), unix.Minor(dev), ino))
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		f := bytes.Fields(sc.Bytes())
		// "1: FLOCK ADVISORY WRITE <pid> <maj:min:ino> 0 EOF"; waiters
		// have "->" after the index.
		if len(f) < 6 || bytes.Equal(f[1], []byte("->")) || !bytes.Equal(f[1], []byte("FLOCK")) {
			continue
		}
		if bytes.Equal(f[5], want) {
			pid, _ = strconv.Atoi(string(f[4]))
			return max(pid, 0), true, true
		}
	}
	return 0, false, true
}
