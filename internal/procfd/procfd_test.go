package procfd

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestHelperProcess is the child of the tests below, not a test: with
// PROCFD_HOLD set to "r:PATH" or "w:PATH" it opens PATH to read or to
// write, says "ready", and holds it until its stdin closes.
func TestHelperProcess(t *testing.T) {
	hold := os.Getenv("PROCFD_HOLD")
	if hold == "" {
		return
	}
	mode, path, _ := strings.Cut(hold, ":")
	flag := os.O_RDONLY
	if mode == "w" {
		flag = os.O_WRONLY | os.O_APPEND
	}
	f, err := os.OpenFile(path, flag, 0)
	if err != nil {
		os.Stdout.WriteString(err.Error() + "\n")
		os.Exit(1)
	}
	os.Stdout.WriteString("ready\n")
	io.Copy(io.Discard, os.Stdin)
	f.Close()
	os.Exit(0)
}

// hold starts exe (a copy of this test binary, or the binary itself) as
// TestHelperProcess holding path open in mode ("r" or "w"), and returns
// once it has opened it.
func hold(t *testing.T, exe, mode, path string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(exe, "-test.run=^TestHelperProcess$")
	cmd.Env = append(os.Environ(), "PROCFD_HOLD="+mode+":"+path)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close(); cmd.Process.Kill(); cmd.Wait() })
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(out).ReadString('\n')
		line <- s
	}()
	select {
	case s := <-line:
		if s != "ready\n" {
			t.Fatalf("holder of %s: %q", path, s)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("holder of %s did not open it", path)
	}
	return cmd
}

// copyOfTest is a copy of this test binary: another program, as far as
// Writers can tell, which the tests run as a holder that is not dshctl.
func copyOfTest(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(t.TempDir(), "holder")
	if runtime.GOOS == "windows" {
		exe += ".exe"
	}
	if err := os.WriteFile(exe, data, 0o755); err != nil {
		t.Fatal(err)
	}
	return exe
}

// TestWritersOfAnotherProgram checks Writers on each system with a real
// process holding the file: another program holding it for writing is
// found and named, a reader is not (on Windows it is, marked AnyAccess:
// the Restart Manager does not say the mode), and another run of this
// program is left out. Where the system cannot tell, Writers says so.
func TestWritersOfAnotherProgram(t *testing.T) {
	if testing.Short() {
		t.Skip("copies the test binary")
	}
	dir := t.TempDir()
	written, read, ours := filepath.Join(dir, "written"), filepath.Join(dir, "read"), filepath.Join(dir, "ours")
	for _, p := range []string{written, read, ours} {
		if err := os.WriteFile(p, []byte("x\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	switch runtime.GOOS {
	case "linux", "darwin", "windows":
	default:
		if _, err := Writers(context.Background(), written); !errors.Is(err, ErrCannotTell) {
			t.Fatalf("Writers on %s: %v, want ErrCannotTell", runtime.GOOS, err)
		}
		return
	}
	other := copyOfTest(t)
	writer := hold(t, other, "w", written)
	reader := hold(t, other, "r", read)
	hold(t, os.Args[0], "w", ours)

	hs, err := Writers(context.Background(), written, filepath.Join(dir, "missing"))
	if err != nil || len(hs) != 1 || hs[0].PID != writer.Process.Pid || hs[0].Path != written {
		t.Fatalf("Writers(written): %+v, %v; want process %d", hs, err, writer.Process.Pid)
	}
	if !strings.HasPrefix(hs[0].Command, "holder") {
		t.Errorf("writer named %q, want holder…", hs[0].Command)
	}
	if hs[0].AnyAccess != (runtime.GOOS == "windows") {
		t.Errorf("AnyAccess %v on %s", hs[0].AnyAccess, runtime.GOOS)
	}

	hs, err = Writers(context.Background(), read)
	if runtime.GOOS == "windows" {
		if err != nil || len(hs) != 1 || hs[0].PID != reader.Process.Pid || !hs[0].AnyAccess {
			t.Errorf("Writers(read) on Windows: %+v, %v; want process %d, AnyAccess", hs, err, reader.Process.Pid)
		}
	} else if err != nil || len(hs) != 0 {
		t.Errorf("Writers(read): %+v, %v; want none", hs, err)
	}

	if hs, err := Writers(context.Background(), ours); err != nil || len(hs) != 0 {
		t.Errorf("Writers of a file another run of this program holds: %+v, %v; want none", hs, err)
	}
}
