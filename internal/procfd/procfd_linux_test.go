package procfd

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestWriters checks that a process holding a file open for writing is
// found, named by pid and command, and that one holding it open only to
// read, or holding another file, is not.
func TestWriters(t *testing.T) {
	dir := t.TempDir()
	log, other := filepath.Join(dir, "log"), filepath.Join(dir, "other")
	for _, p := range []string{log, other} {
		if err := os.WriteFile(p, []byte("x\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	start := func(script string) *exec.Cmd {
		cmd := exec.Command("sh", "-c", script)
		if err := cmd.Start(); err != nil {
			t.Skipf("no sh: %v", err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		return cmd
	}
	// Each shell opens its file, then says so: a fixed wait for that may
	// be too short on a busy machine.
	reader := start("exec 3<" + log + "; : >" + log + ".open; exec sleep 600")
	writer := start("exec 4>>" + other + "; : >" + other + ".open; exec sleep 600")
	for _, p := range []string{log, other} {
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(5 * time.Millisecond) {
			if _, err := os.Stat(p + ".open"); err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the shell did not open %s in a minute", p)
			}
		}
	}
	hs, err := Writers(context.Background(), log, filepath.Join(dir, "missing"))
	if err != nil || len(hs) != 0 {
		t.Fatalf("Writers of a file open only for reading: %v, %v; want none", hs, err)
	}
	hs, err = Writers(context.Background(), log, other)
	if err != nil || len(hs) != 1 || hs[0].PID != writer.Process.Pid || hs[0].Path != other {
		t.Fatalf("Writers: %+v, %v; want process %d on %s", hs, err, writer.Process.Pid, other)
	}
	if want := "process " + strconv.Itoa(writer.Process.Pid) + " ("; !strings.HasPrefix(hs[0].String(), want) || hs[0].Command == "" {
		t.Errorf("holder named %q, want %q and its command", hs[0], want)
	}
	_ = reader
}
