// Package procfd finds the other processes that have a file open for
// writing, where the operating system tells: a writer that takes no lock
// (dsh 0.1.0's JSONL writer, any dsh's SQLite connection) is seen only
// this way.
//
// Each system tells what it can:
//   - Linux: /proc/PID/fd and the access mode in /proc/PID/fdinfo, for the
//     processes whose /proc entries this user may read.
//   - macOS: lsof's machine output (-F), for the processes lsof may
//     inspect as this user; the access mode is lsof's.
//   - Windows: the Restart Manager (rstrtmgr.dll), which lists the
//     processes that have a file open in any mode: a process that only
//     reads the file counts too (Holder.AnyAccess).
//   - Other systems: Writers returns ErrCannotTell.
//
// Everywhere, this process and other runs of the same executable (which
// keep apart through the session's lock instead) are left out.
package procfd

import (
	"errors"
	"strconv"
	"strings"
	"unicode"
)

// Holder is a process that has a file open for writing (or, where
// AnyAccess is set, open at all).
type Holder struct {
	PID int
	// Command is the process's name (Linux: /proc/PID/comm; macOS: lsof's
	// command; Windows: the executable's file name, else the Restart
	// Manager's application name); empty when it cannot be read.
	Command string
	// Path is the file, as it was given to Writers.
	Path string
	// AnyAccess says the system told only that the process has the file
	// open, not whether for writing (Windows).
	AnyAccess bool
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
// processes have a file open (or where this process may not look). Errors
// that wrap it say why.
var ErrCannotTell = errors.New("this operating system does not tell which processes have a file open")

// printable returns s with what a terminal would act on (control
// characters, invalid UTF-8) shown as '?', cut to 256 bytes.
func printable(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == unicode.ReplacementChar || unicode.Is(unicode.Bidi_Control, r) {
			return '?'
		}
		return r
	}, strings.ToValidUTF8(s, "\uFFFD"))
	if len(s) > 256 {
		s = strings.ToValidUTF8(s[:256], "")
	}
	return s
}
