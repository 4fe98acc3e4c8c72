package seamtest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
)

// childEnv carries the JSON arguments of a child started by HoldInChild.
const childEnv = "SEAMTEST_HOLD_CHILD"

// RunChild serves HoldInChild. Call it first in the TestMain of a backend's
// tests. In a process HoldInChild started it calls hold with HoldInChild's
// arguments, tells the parent it holds, waits until the parent releases it,
// calls release and exits; in any other process it returns at once.
func RunChild(hold func(args []string) (release func(), err error)) {
	enc, ok := os.LookupEnv(childEnv)
	if !ok {
		return
	}
	var args []string
	if err := json.Unmarshal([]byte(enc), &args); err != nil {
		fmt.Printf("error: %s: %v\n", childEnv, err)
		os.Exit(2)
	}
	release, err := hold(args)
	if err != nil {
		fmt.Printf("error: %v\n", strings.ReplaceAll(err.Error(), "\n", " "))
		os.Exit(1)
	}
	fmt.Println("ready")
	io.Copy(io.Discard, os.Stdin) // until the parent closes our stdin
	release()
	os.Exit(0)
}

// HoldInChild runs the test binary again as a child process whose RunChild
// calls hold(args), and returns once hold has succeeded. release (also run at
// cleanup) makes the child release what it holds and waits for it to exit.
// It is how a backend holds a lock "in another process" (point 7).
func HoldInChild(t *testing.T, args ...string) (release func()) {
	t.Helper()
	enc, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+string(enc))
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("seamtest: start child: %v", err)
	}
	var once sync.Once
	release = func() {
		once.Do(func() {
			stdin.Close()
			if err := cmd.Wait(); err != nil {
				t.Errorf("seamtest: child holding %q: %v", args, err)
			}
		})
	}
	t.Cleanup(release)
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if line != "ready\n" {
		release()
		t.Fatalf("seamtest: child holding %q did not get ready: %q %v (does TestMain call seamtest.RunChild?)", args, line, err)
	}
	return release
}
