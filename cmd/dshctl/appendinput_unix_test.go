//go:build unix

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dshctl/dshctl/internal/jsonl/hostile"
)

// TestAppendInputBeforeLock: append reads its input before it takes the
// session's lock, and a signal stops it while it waits for input (#24 item
// 5: with a stalled pipe it held the lock and ignored SIGINT and SIGTERM;
// a FIFO with no writer blocked in open). Another append goes through
// meanwhile; the stalled one, signalled, exits 1 within a second and
// writes nothing.
func TestAppendInputBeforeLock(t *testing.T) {
	if _, err := exec.LookPath("dshctl"); err != nil {
		t.Skip("dshctl is not on PATH (the test binary installs it through testscript.Main)")
	}
	root := t.TempDir()
	if _, err := hostile.Session(root, "a", true); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(t.TempDir(), "events")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	urgent(t)
	for _, c := range []struct {
		name string
		args []string
		sig  os.Signal
	}{
		{"stalled pipe, SIGINT", []string{"append", "--assign-seq", "a"}, os.Interrupt},
		{"stalled pipe, SIGTERM", []string{"append", "--assign-seq", "a", "-"}, syscall.SIGTERM},
		{"FIFO without a writer", []string{"append", "--assign-seq", "a", fifo}, syscall.SIGTERM},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := logState(t, root, "a")
			stalled := exec.Command("dshctl", append([]string{"--store", root}, c.args...)...)
			// A pipe whose writer never writes nor closes.
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			stalled.Stdin = r
			var stderr bytes.Buffer
			stalled.Stderr = &stderr
			if err := stalled.Start(); err != nil {
				t.Fatal(err)
			}
			r.Close()
			// Waiting for input (or for a writer to open the FIFO), the
			// lock is free: another append goes through.
			waitBlocked(t, stalled.Process.Pid)
			other := exec.Command("dshctl", "--store", root, "append", "--assign-seq", "a")
			other.Stdin = strings.NewReader(titleLine)
			if out, err := other.CombinedOutput(); err != nil {
				t.Errorf("an append beside a stalled one: %v: %s", err, out)
			}
			mid := logState(t, root, "a")
			took, _ := signalAndWait(t, stalled, c.sig)
			if code := stalled.ProcessState.ExitCode(); code != 1 || stderr.String() != "dshctl: interrupted\n" {
				t.Errorf("the stalled append exited %d: %q", code, stderr.String())
			}
			if took > time.Second {
				t.Errorf("the stalled append took %v to stop", took)
			}
			if after := logState(t, root, "a"); after != mid || mid == before {
				t.Errorf("log before %s, after the other append %s, after the signal %s", before, mid, after)
			}
		})
	}
}
