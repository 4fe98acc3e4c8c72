package main

import (
	"errors"
	"io/fs"
	"os"

	"github.com/rogpeppe/go-internal/testscript"
)

func mkfifo(string) error { return errors.ErrUnsupported }

func isRoot() bool { return false }

// limitCPU does nothing on Windows: a command that runs away is killed
// after bounded's wait.
func limitCPU(int64) error { return nil }

// maxRSS is not measured on Windows: the time bound still applies.
func maxRSS(*os.ProcessState) (int64, bool) { return 0, false }

// changeStamp is what a write to a file changes that Windows shows.
func changeStamp(fi fs.FileInfo) string { return fi.ModTime().String() }

func fileOwner(fs.FileInfo) (uid, gid int, ok bool) { return 0, 0, false }

func asNobody(_ *testscript.TestScript, measure, bin string, args []string) (string, []string) {
	return measure, append([]string{".bounded", bin}, args...)
}
