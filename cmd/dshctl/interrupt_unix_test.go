//go:build unix

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/dshctl/dshctl/internal/jsonl/hostile"
)

// TestInterruptStalledOutput checks that a command whose output nobody
// reads — a pipe, a FIFO whose reader never reads, a FIFO without a reader
// — still stops within 100 ms of SIGINT or SIGTERM, says it was
// interrupted and exits 1 (issue 24 item 6: cat and export -O - waited in
// the write forever).
func TestInterruptStalledOutput(t *testing.T) {
	if _, err := exec.LookPath("dshctl"); err != nil {
		t.Skip("dshctl is not on PATH (the test binary installs it through testscript.Main)")
	}
	root := t.TempDir()
	// 24 MB of prompts: far more than a pipe holds.
	path, err := hostile.Session(root, "g", true)
	if err != nil {
		t.Fatal(err)
	}
	for seq := int64(5); seq < 17; seq++ {
		if err := hostile.Append(path, hostile.Frame(nil, hostile.Text(hugePrompt(seq, 2<<20)))); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	fifo := filepath.Join(dir, "out.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args []string
		// fifoReader opens the FIFO for reading and never reads; without
		// it, nobody opens it.
		fifoReader bool
	}{
		{name: "cat", args: []string{"cat", "g"}},
		{name: "cat -o text", args: []string{"cat", "-o", "text", "--no-pager", "g"}},
		{name: "cat --raw", args: []string{"cat", "--raw", "g"}},
		{name: "export -O -", args: []string{"export", "-O", "-", "g"}},
		{name: "export -O FIFO, not read", args: []string{"export", "-O", fifo, "g"}, fifoReader: true},
		{name: "export -O FIFO, no reader", args: []string{"export", "-O", fifo, "g"}},
	} {
		for _, sig := range []os.Signal{os.Interrupt, syscall.SIGTERM} {
			best := time.Hour
			var took []time.Duration
			for try := 0; try < 5 && best > 100*time.Millisecond; try++ {
				stopped := stallAndSignal(t, root, c.args, fifo, c.fifoReader, sig)
				best = min(best, stopped)
				took = append(took, stopped)
			}
			t.Logf("%s after %v: stopped in %v", c.name, sig, took)
			if best > 100*time.Millisecond {
				t.Errorf("%s took %v to stop after %v", c.name, best, sig)
			}
		}
	}
}

// stallAndSignal runs dshctl with args on the store root, its output a
// pipe nobody reads, sends sig once it is stuck writing and returns how
// long it took to exit; it fails the test unless dshctl said it was
// interrupted and exited 1.
func stallAndSignal(t *testing.T, root string, args []string, fifo string, fifoReader bool, sig os.Signal) time.Duration {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if fifoReader {
		// Opened without waiting for a writer; never read.
		f, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
	}
	cmd := exec.Command("dshctl", append([]string{"--store", root}, args...)...)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = w, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	// Long enough to fill the pipe and block, or to wait for a reader.
	time.Sleep(500 * time.Millisecond)
	sent := time.Now()
	cmd.Process.Signal(sig)
	hung := time.AfterFunc(10*time.Second, func() { cmd.Process.Kill() })
	err = cmd.Wait()
	stopped := time.Since(sent)
	if !hung.Stop() {
		t.Fatalf("%v ignored %v with its output stalled: killed after %v", args, sig, stopped)
	}
	if cmd.ProcessState.ExitCode() != 1 || stderr.String() != "dshctl: interrupted\n" && stderr.String() != "dshctl: export interrupted\n" {
		t.Fatalf("%v after %v: %v: %q", args, sig, err, stderr.String())
	}
	return stopped
}
