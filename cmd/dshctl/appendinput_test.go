package main

import (
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/dshctl/dshctl/internal/jsonl/hostile"
)

const titleLine = `{"type":"session/title","data":{"title":"x"}}` + "\n"

// TestAppendCreateRace: of appends with --create racing for one new id,
// exactly one creates it; every other one appends to it, or fails at once
// because the session is in use (the lock is never waited for), never
// with "already exists" (#24 item 14).
func TestAppendCreateRace(t *testing.T) {
	if _, err := exec.LookPath("dshctl"); err != nil {
		t.Skip("dshctl is not on PATH (the test binary installs it through testscript.Main)")
	}
	root := t.TempDir()
	if _, err := hostile.Session(root, "old", true); err != nil {
		t.Fatal(err)
	}
	const racers = 8
	for round := range 5 {
		id := "new-" + string(rune('a'+round))
		var wg sync.WaitGroup
		outs := make([]string, racers)
		codes := make([]int, racers)
		start := make(chan struct{})
		for i := range racers {
			wg.Go(func() {
				cmd := exec.Command("dshctl", "--store", root, "append", "--create", "--cwd", "/p", "--assign-seq", id)
				cmd.Stdin = strings.NewReader(titleLine)
				<-start
				out, _ := cmd.CombinedOutput()
				outs[i], codes[i] = string(out), cmd.ProcessState.ExitCode()
			})
		}
		close(start)
		wg.Wait()
		created, appended, busy := 0, 0, 0
		for i, out := range outs {
			switch {
			case codes[i] == 0 && strings.Contains(out, "created"):
				created++
			case codes[i] == 0 && strings.Contains(out, "appended"):
				appended++
			case codes[i] == 1 && strings.Contains(out, "in use"):
				busy++
			default:
				t.Errorf("round %d: racer %d exited %d: %s", round, i, codes[i], out)
			}
		}
		if created != 1 {
			t.Errorf("round %d: %d racers created the session, want 1: %q", round, created, outs)
		}
		t.Logf("round %d: 1 created, %d appended, %d in use", round, appended, busy)
		out, err := exec.Command("dshctl", "--store", root, "stat", "-o", "json", id).Output()
		if err != nil || !strings.Contains(string(out), fmt.Sprintf(`"eventCount": %d`, 1+appended)) {
			t.Errorf("round %d: stat after 1+%d appends: %v: %s", round, appended, err, out)
		}
	}
}
