//go:build darwin || linux

package procfd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"
)

// lsofTimeout bounds one run of lsof, which on a busy system (or one with
// a hung network mount) can take long: past it Writers cannot tell, and
// the write goes on under the other checks.
const lsofTimeout = 10 * time.Second

// lsofMaxOutput bounds what is kept of lsof's output. It lists only the
// files it is given, so a longer output is not lsof's: Writers then
// cannot tell.
const lsofMaxOutput = 1 << 20

// lsofWriters asks the lsof at path lsof which processes have one of paths
// open for writing (access mode w or u), leaving out this process and
// those running exe (another dshctl, found by exe open as its program
// text), when exe is not empty. Files that do not exist are skipped.
func lsofWriters(ctx context.Context, lsof, exe string, paths ...string) ([]Holder, error) {
	type target struct {
		path string
		ino  uint64
	}
	var targets []target
	// -n -P: no DNS or port names; -w: no warnings; +c0: the whole command
	// name; -F: machine output of pid, command, access, fd, inode, name.
	args := []string{"-n", "-P", "-w", "+c0", "-F", "pcafin", "--"}
	for _, p := range paths {
		var st syscall.Stat_t
		if syscall.Stat(p, &st) == nil {
			targets = append(targets, target{p, uint64(st.Ino)})
			args = append(args, p)
		}
	}
	if len(targets) == 0 {
		return nil, nil
	}
	var exeIno uint64
	if exe != "" {
		var st syscall.Stat_t
		if syscall.Stat(exe, &st) == nil {
			exeIno = uint64(st.Ino)
			args = append(args, exe)
		}
	}

	run, cancel := context.WithTimeout(ctx, lsofTimeout)
	defer cancel()
	cmd := exec.CommandContext(run, lsof, args...)
	var stdout, stderr cappedBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit) && exit.ExitCode() == 1 && stderr.buf.Len() == 0:
		// lsof exits 1 when one of the files it was given is open nowhere.
	default:
		if msg, _, _ := bytes.Cut(bytes.TrimSpace(stderr.buf.Bytes()), []byte{'\n'}); len(msg) > 0 {
			err = fmt.Errorf("%w: %s", err, printable(string(msg)))
		}
		return nil, fmt.Errorf("%w: %s: %w", ErrCannotTell, lsof, err)
	}
	if stdout.over {
		return nil, fmt.Errorf("%w: %s printed more than %d bytes", ErrCannotTell, lsof, lsofMaxOutput)
	}

	files := parseLsof(stdout.buf.Bytes())
	ours := map[int]bool{}
	for _, f := range files {
		if exeIno != 0 && f.FD == "txt" && f.HasInode && f.Inode == exeIno {
			ours[f.PID] = true
		}
	}
	self := os.Getpid()
	var out []Holder
	seen := map[int]bool{}
	for _, f := range files {
		if f.PID == self || ours[f.PID] || seen[f.PID] || (f.Access != 'w' && f.Access != 'u') {
			continue
		}
		if _, err := strconv.ParseUint(f.FD, 10, 32); err != nil {
			continue // cwd, txt, mem: not a descriptor to write through
		}
		// Which file it is: by inode, else by the name lsof printed, else
		// the first (lsof lists only the files it was given).
		path := ""
		for _, t := range targets {
			if f.HasInode && t.ino == f.Inode || !f.HasInode && t.path == f.Name {
				path = t.path
				break
			}
		}
		if path == "" && !f.HasInode {
			path = targets[0].path
		}
		if path == "" {
			continue // the executable, open for writing
		}
		seen[f.PID] = true
		out = append(out, Holder{PID: f.PID, Command: f.Command, Path: path})
	}
	return out, nil
}

// lsofFile is one open file in lsof's -F output.
type lsofFile struct {
	PID     int
	Command string
	FD      string // a descriptor number, or cwd, txt, mem…
	Access  byte   // r, w, u, or 0 when not given
	Inode   uint64
	// HasInode says Inode was given.
	HasInode bool
	Name     string
}

// parseLsof decodes lsof's -F output: one field a line, its first byte
// naming it. A 'p' line starts a process, whose 'c' names it; an 'f' line
// starts one of its files, whose 'a', 'i' and 'n' follow. Files of no
// process, or of a process whose pid is not a positive number, are
// dropped, as are unknown fields; a missing field is left zero.
func parseLsof(out []byte) []lsofFile {
	var files []lsofFile
	var pid int
	var command string
	var cur *lsofFile
	flush := func() {
		if cur != nil {
			files = append(files, *cur)
			cur = nil
		}
	}
	for line := range bytes.Lines(out) {
		line = bytes.TrimSuffix(line, []byte{'\n'})
		if len(line) == 0 {
			continue
		}
		v := string(line[1:])
		switch line[0] {
		case 'p':
			flush()
			pid, command = 0, ""
			if n, err := strconv.Atoi(v); err == nil && n > 0 {
				pid = n
			}
		case 'c':
			if cur == nil {
				command = printable(v)
			}
		case 'f':
			flush()
			if pid > 0 {
				cur = &lsofFile{PID: pid, Command: command, FD: v}
			}
		case 'a':
			if cur != nil && len(v) == 1 {
				cur.Access = v[0]
			}
		case 'i':
			if cur != nil {
				if n, err := strconv.ParseUint(v, 10, 64); err == nil {
					cur.Inode, cur.HasInode = n, true
				}
			}
		case 'n':
			if cur != nil {
				cur.Name = v
			}
		}
	}
	flush()
	return files
}

// cappedBuffer keeps the first lsofMaxOutput bytes written to it and
// notes whether more came; it never fails a write, so lsof is not left
// blocked on a full pipe.
type cappedBuffer struct {
	buf  bytes.Buffer
	over bool
}

func (b *cappedBuffer) Write(p []byte) (int, error) {
	n := len(p)
	if room := lsofMaxOutput - b.buf.Len(); n > room {
		p, b.over = p[:room], true
	}
	b.buf.Write(p)
	return n, nil
}
