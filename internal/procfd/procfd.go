// Package procfd finds the other processes that have a file open for
// writing, where the operating system tells: a writer that takes no lock
// (dsh 0.1.0's JSONL writer, any dsh's SQLite connection) is seen only
// this way. Linux reads /proc/PID/fd and /proc/PID/fdinfo; on other
// systems Writers returns ErrCannotTell.
package procfd

import (
	"errors"
	"strconv"
)

// Holder is a process that has a file open for writing.
type Holder struct {
	PID int
	// Command is the process's name (Linux: /proc/PID/comm); empty when
	// it cannot be read.
	Command string
	// Path is the file, as it was given to Writers.
	Path string
}

// String names the process: "process 1234 (node)".
func (h Holder) String() string {
	s := "process " + strconv.Itoa(h.PID)
	if h.Command != "" {
		s += " (" + h.Command + ")"
	}
	return s
}

// ErrCannotTell is Writers' error on a system that does not say which
// processes have a file open (or where this process may not look).
var ErrCannotTell = errors.New("this operating system does not tell which processes have a file open")
