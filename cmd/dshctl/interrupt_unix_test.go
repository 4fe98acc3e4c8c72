//go:build unix

package main

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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
	// 24 MB of prompts of random text, which a ZIP cannot shrink much: far
	// more than a pipe holds, whatever the output.
	path, err := hostile.Session(root, "g", true)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	text := make([]byte, 2<<20)
	for seq := int64(5); seq < 17; seq++ {
		for i := range text {
			text[i] = 'a' + byte(rng.IntN(26))
		}
		ev := fmt.Sprintf(`{"type":"user/message","seq":%d,"time":1785331918300,"data":{"id":"big%d","role":"user","content":[{"type":"text","text":"%s"}],"source":{"kind":"user"}},"surfaceOp":"append"}`+"\n", seq, seq, text)
		if err := hostile.Append(path, hostile.Frame(nil, hostile.Text(ev))); err != nil {
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
	out := r // where the output shows
	if fifoReader {
		// Opened without waiting for a writer; read one byte at most.
		f, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		out = f
	}
	cmd := exec.Command("dshctl", append([]string{"--store", root}, args...)...)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = w, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	// Once dshctl writes (or, without a reader, has the store open) its
	// signal handler is in place; then it fills the pipe and blocks, or
	// waits for a reader.
	if fifoReader || !slices.Contains(args, fifo) {
		got := make(chan struct{})
		go func() {
			defer close(got)
			// A FIFO read before its writer opens it is at its end.
			for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
				var b [1]byte
				if n, err := out.Read(b[:]); n > 0 || err != nil && err != io.EOF {
					return
				}
			}
		}()
		select {
		case <-got:
		case <-time.After(10 * time.Second):
			t.Fatalf("%v wrote nothing in 10 s", args)
		}
	} else {
		time.Sleep(time.Second) // nothing to wait for: waiting for a reader
	}
	time.Sleep(200 * time.Millisecond)
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

// TestInterruptSQLiteBusy checks that an append waiting (up to the busy
// timeout, 5 s) for another connection's write lock on a SQLite database
// stops within 100 ms of SIGINT, as README says: the driver interrupts
// SQLite's busy wait when the context ends.
func TestInterruptSQLiteBusy(t *testing.T) {
	if _, err := exec.LookPath("dshctl"); err != nil {
		t.Skip("dshctl is not on PATH (the test binary installs it through testscript.Main)")
	}
	dir := t.TempDir()
	db := filepath.Join(dir, "sessions.sqlite")
	events := filepath.Join(dir, "title.jsonl")
	if err := os.WriteFile(events, []byte(`{"type":"session/title","data":{"title":"t"}}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("dshctl", "--store", "sqlite:"+db, "append", "--create", "--cwd", "/p", "--assign-seq", "s", events).CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	holder, err := sql.Open("sqlite", db)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	conn, err := holder.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(context.Background(), "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	defer conn.ExecContext(context.Background(), "ROLLBACK")
	best := time.Hour
	var took []time.Duration
	for try := 0; try < 5 && best > 100*time.Millisecond; try++ {
		cmd := exec.Command("dshctl", "--store", "sqlite:"+db, "append", "--assign-seq", "s", events)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(500 * time.Millisecond) // waiting for the lock by now
		sent := time.Now()
		cmd.Process.Signal(os.Interrupt)
		hung := time.AfterFunc(10*time.Second, func() { cmd.Process.Kill() })
		err := cmd.Wait()
		stopped := time.Since(sent)
		if !hung.Stop() {
			t.Fatalf("append ignored SIGINT while waiting for the database: killed after %v", stopped)
		}
		if cmd.ProcessState.ExitCode() != 1 || stderr.String() != "dshctl: interrupted\n" {
			t.Fatalf("append after SIGINT: %v: %q", err, stderr.String())
		}
		best, took = min(best, stopped), append(took, stopped)
	}
	t.Logf("stopped in %v", took)
	if best > 100*time.Millisecond {
		t.Errorf("append took %v to stop after SIGINT while waiting for the database", best)
	}
}
