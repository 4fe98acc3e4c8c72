package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dshctl/dshctl/internal/jsonl/zstdframe"
	"github.com/dshctl/dshctl/internal/seam"
	"github.com/dshctl/dshctl/internal/store"
)

// appendResult is what `append -o json` prints.
type appendResult = store.AppendResult

// TestCrashAppend kills `dshctl append` processes at random points across
// many appends and checks after each one that every acknowledged event is
// still readable, unchanged and in place, that the log reads without error,
// and that Stat agrees with a full read: only an unacknowledged tail is ever
// lost. DSHCTL_CRASH_RUNS sets the number of appends per encoding (make
// crash runs many; make test a few).
func TestCrashAppend(t *testing.T) {
	runs := 8
	if s := os.Getenv("DSHCTL_CRASH_RUNS"); s != "" {
		var err error
		if runs, err = strconv.Atoi(s); err != nil {
			t.Fatalf("DSHCTL_CRASH_RUNS: %v", err)
		}
	}
	if _, err := exec.LookPath("dshctl"); err != nil {
		t.Skip("dshctl is not on PATH (the test binary installs it through testscript.Main)")
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	for _, store := range []string{"jsonl-zstd", "jsonl-none"} {
		t.Run(store, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 1))
			root := copyTree(t, filepath.Join(sharedFixtures(t), "dsh-0.1.0", store))
			backups := t.TempDir()
			const id = "session-4f1c2a9e-8b3d-4e6f-a1c2-7d9e0b1f2a3c"
			// acked maps a seq to the title the acknowledged append gave it.
			acked := map[int64]string{}
			killed, torn, damaged := 0, 0, 0
			for run := range runs {
				batch, titles := crashBatch(rng, run)
				cmd := exec.Command("dshctl", "--store", root, "append", "--assign-seq", "-o", "jsonl", id)
				cmd.Stdin = bytes.NewReader(batch)
				cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+backups)
				var stdout, stderr bytes.Buffer
				cmd.Stdout, cmd.Stderr = &stdout, &stderr
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				// Kill somewhere between start-up and the end of the write.
				delay := time.Duration(rng.IntN(120_000)) * time.Microsecond
				timer := time.AfterFunc(delay, func() { cmd.Process.Signal(syscall.SIGKILL) })
				err := cmd.Wait()
				timer.Stop()
				acknowledged := err == nil
				if err == nil {
					var res appendResult
					if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
						t.Fatalf("run %d: acknowledged append printed %q: %v", run, stdout.String(), err)
					}
					for k, title := range titles {
						acked[res.FirstSeq+int64(k)] = title
					}
				} else if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
					killed++
				} else {
					t.Fatalf("run %d: append failed without being killed: %v: %s", run, err, stderr.String())
				}
				loc, n := checkAfterCrash(t, root, id, acked, run)
				if tmps, _ := filepath.Glob(filepath.Join(filepath.Dir(loc.Path), "*.tmp")); acknowledged && len(tmps) > 0 {
					t.Fatalf("run %d: an acknowledged append left temp files: %v", run, tmps)
				}
				switch r := rng.IntN(8); {
				case loc.TornBytes > 0:
					torn++
				case loc.UncommittedBytes > 0:
					// An earlier damaged tail a killed append left in
					// place: the next append repairs it first.
				case r < 2:
					// A kill inside write(2) is rare on a fast disk; leave
					// the torn tail it would leave, for the next append to
					// remove.
					tearTail(t, loc.Path, store, rng)
					if loc, _ := checkAfterCrash(t, root, id, acked, run); loc.TornBytes == 0 {
						t.Fatalf("run %d: torn tail not reported", run)
					}
					torn++
				case r == 2:
					// A complete frame (or lines) whose first record is
					// served and whose second is garbage: the next append
					// must drop the garbage without losing the record,
					// whatever point it is killed at.
					title := fmt.Sprintf("served before run %d", run+1)
					badTail(t, loc.Path, store, n, title)
					acked[n] = title
					if loc, _ := checkAfterCrash(t, root, id, acked, run); loc.UncommittedBytes == 0 {
						t.Fatalf("run %d: uncommitted tail not reported", run)
					}
					damaged++
				}
			}
			t.Logf("%d appends, %d killed, %d torn tails, %d uncommitted tails inside a frame, %d acknowledged events",
				runs, killed, torn, damaged, len(acked))
		})
	}
}

// crashBatch returns a batch of session/title events, one of them padded so
// that the write takes long enough to be cut.
func crashBatch(rng *rand.Rand, run int) ([]byte, []string) {
	n := 1 + rng.IntN(20)
	pad := strings.Repeat("x", rng.IntN(1<<20))
	var b bytes.Buffer
	titles := make([]string, n)
	for k := range n {
		titles[k] = fmt.Sprintf("run %d event %d", run, k)
		fmt.Fprintf(&b, `{"type":"session/title","data":{"title":%q`, titles[k])
		if k == n/2 {
			fmt.Fprintf(&b, `,"pad":%q`, pad)
		}
		b.WriteString("}}\n")
	}
	return b.Bytes(), titles
}

// tearTail appends to the log at path the prefix of a write that a crash
// cut: part of a zstd frame, or a line without its newline.
func tearTail(t *testing.T, path, store string, rng *rand.Rand) {
	t.Helper()
	line := []byte(`{"type":"session/title","seq":999999,"time":1,"data":{"title":"never acknowledged"}}` + "\n")
	cut := line[:1+rng.IntN(len(line)-1)]
	if store == "jsonl-zstd" {
		frame := zstdframe.AppendFrame(nil, line)
		cut = frame[:1+rng.IntN(len(frame)-1)]
	}
	appendToLog(t, path, cut)
}

// badTail appends to the log at path one complete write holding a valid
// event at seq and then a record that does not parse: an uncommitted tail
// inside a frame.
func badTail(t *testing.T, path, store string, seq int64, title string) {
	t.Helper()
	text := fmt.Appendf(nil, `{"type":"session/title","seq":%d,"time":1,"data":{"title":%q}}`+"\n", seq, title)
	text = append(text, "{not json\n"...)
	if store == "jsonl-zstd" {
		text = zstdframe.AppendFrame(nil, text)
	}
	appendToLog(t, path, text)
}

func appendToLog(t *testing.T, path string, b []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(b); err != nil {
		t.Fatal(err)
	}
}

// checkAfterCrash reads the log back and returns its location (torn and
// uncommitted tail sizes) and its number of events.
func checkAfterCrash(t *testing.T, root, id string, acked map[int64]string, run int) (seam.Location, int64) {
	t.Helper()
	ctx := context.Background()
	svc, err := store.Open(store.Spec{Path: root}, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	snap, err := svc.Stat(ctx, id)
	if err != nil {
		t.Fatalf("run %d: stat after crash: %v", run, err)
	}
	h, err := svc.Open(ctx, id, seam.Read)
	if err != nil {
		t.Fatalf("run %d: open after crash: %v", run, err)
	}
	defer h.Close()
	var n int64
	for ev, err := range h.Scan(ctx, seam.ScanOptions{}) {
		if err != nil {
			t.Fatalf("run %d: read after crash: %v", run, err)
		}
		if ev.Seq != n {
			t.Fatalf("run %d: seq %d at position %d", run, ev.Seq, n)
		}
		if want, ok := acked[ev.Seq]; ok {
			var d struct{ Title string }
			if err := json.Unmarshal(ev.Data, &d); err != nil || d.Title != want {
				t.Fatalf("run %d: acknowledged seq %d holds %q, want %q", run, ev.Seq, d.Title, want)
			}
		}
		n++
	}
	for seq := range acked {
		if seq >= n {
			t.Fatalf("run %d: acknowledged seq %d lost (log has %d events)", run, seq, n)
		}
	}
	if snap.EventCount != n {
		t.Fatalf("run %d: stat eventCount %d, full read %d", run, snap.EventCount, n)
	}
	return snap.Location, n
}
