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

	"github.com/dshctl/dshctl/internal/fixture"
	"github.com/dshctl/dshctl/internal/ingest"
	"github.com/dshctl/dshctl/internal/jsonl/zstdframe"
	"github.com/dshctl/dshctl/internal/seam"
	"github.com/dshctl/dshctl/internal/store"
)

// appendResult is what `append -o json` prints.
type appendResult = ingest.Result

// TestCrashAppend kills `dshctl append` processes at random points across
// many appends and checks after each one that every acknowledged event is
// still readable, unchanged and in place, that the log reads without error,
// and that Stat agrees with a full read: only an unacknowledged tail is ever
// lost. DSHCTL_CRASH_RUNS sets the number of appends per encoding (make
// crash runs many; make test a few).
func TestCrashAppend(t *testing.T) {
	runs := crashRuns(t, 8)
	if _, err := exec.LookPath("dshctl"); err != nil {
		t.Skip("dshctl is not on PATH (the test binary installs it through testscript.Main)")
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	for _, store := range []string{"jsonl-zstd", "jsonl-none"} {
		t.Run(store, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 1))
			root := fixture.Copy(t, filepath.Join(sharedFixtures(t), "dsh-0.1.0", store))
			backups := t.TempDir()
			const id = "session-4f1c2a9e-8b3d-4e6f-a1c2-7d9e0b1f2a3c"
			// acked maps a seq to the title the acknowledged append gave it.
			acked := map[int64]string{}
			killed, torn, damaged := 0, 0, 0
			kill := killer{rng: rng}
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
				// Kill somewhere between start-up and the end of the write
				// (but one run in five, which measures how long that is).
				start := time.Now()
				timer := kill.arm(cmd, run%5 != 0)
				err := cmd.Wait()
				kill.done(timer, time.Since(start))
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

// killer picks when to kill an append: uniformly within the time an
// unkilled append took last on this machine, with a margin, so that kills
// land at start-up, during validation and inside the write alike however
// loaded the machine is.
type killer struct {
	rng  *rand.Rand
	span time.Duration
}

// arm kills cmd at a random point, when kill is set; done is to be called
// with what arm returned once cmd ended.
func (k *killer) arm(cmd *exec.Cmd, kill bool) *time.Timer {
	if !kill {
		return nil
	}
	if k.span == 0 {
		k.span = 120 * time.Millisecond
	}
	d := time.Duration(k.rng.Int64N(int64(k.span)*5/4 + 1))
	return time.AfterFunc(d, func() { cmd.Process.Signal(syscall.SIGKILL) })
}

// done stops the timer arm returned; an append that ran to its end says how
// long one takes now.
func (k *killer) done(timer *time.Timer, took time.Duration) {
	if timer == nil || timer.Stop() {
		k.span = took
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

// crashRuns is DSHCTL_CRASH_RUNS, or def.
func crashRuns(t *testing.T, def int) int {
	if s := os.Getenv("DSHCTL_CRASH_RUNS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			t.Fatalf("DSHCTL_CRASH_RUNS: %v", err)
		}
		return n
	}
	return def
}

// TestCrashRetry checks the safe way to retry a batch that a kill may
// have cut (issue 16 item 7). A zstd log takes a batch as one frame, all
// or nothing; a plain log takes it line by line, so a killed append can
// leave its first lines, each whole. Each batch is appended with
// --expect-next-seq N and --assign-seq, and every append is killed at a
// random point until one is acknowledged; after each, the log must hold a
// prefix of the batch (for zstd: none or all of what was asked), never a
// line twice, and the retry appends the rest with --expect-next-seq set
// to the log's next seq. A retry that still expects the old next seq must
// fail and write nothing. Kills inside write(2) are rare on a fast disk:
// the test also leaves the partial batches and torn lines they leave.
func TestCrashRetry(t *testing.T) {
	runs := crashRuns(t, 6)
	if _, err := exec.LookPath("dshctl"); err != nil {
		t.Skip("dshctl is not on PATH (the test binary installs it through testscript.Main)")
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	for _, st := range []string{"jsonl-zstd", "jsonl-none"} {
		t.Run(st, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 2))
			root := fixture.Copy(t, filepath.Join(sharedFixtures(t), "dsh-0.1.0", st))
			backups := t.TempDir()
			const id = "session-7a2b9c4d-1e3f-4a5b-8c6d-0e1f2a3b4c5d"
			plain := st == "jsonl-none"
			_, next := checkAfterCrash(t, root, id, nil, -1)
			var attempts, kills, partial, stale, checked int
			kill := killer{rng: rng}
			for run := range runs {
				titles, lines := retryBatch(rng, run)
				n := next // the log's next seq before the batch
				done := 0 // the batch's events stored so far
				for try := 0; done < len(titles); try++ {
					attempts++
					m := n + int64(done)
					var in bytes.Buffer
					for _, l := range lines[done:] {
						in.WriteString(l)
					}
					cmd := exec.Command("dshctl", "--store", root, "append", "--assign-seq", "--expect-next-seq", strconv.FormatInt(m, 10), "-o", "jsonl", id)
					cmd.Stdin = &in
					cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+backups)
					var stdout, stderr bytes.Buffer
					cmd.Stdout, cmd.Stderr = &stdout, &stderr
					if err := cmd.Start(); err != nil {
						t.Fatal(err)
					}
					start := time.Now()
					timer := kill.arm(cmd, try < 4) // then let it finish
					err := cmd.Wait()
					kill.done(timer, time.Since(start))
					acked := err == nil
					switch ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus); {
					case acked:
						var res appendResult
						if err := json.Unmarshal(stdout.Bytes(), &res); err != nil || res.FirstSeq != m || res.NextSeq != n+int64(len(titles)) {
							t.Fatalf("run %d: acknowledged append printed %q: %v", run, stdout.String(), err)
						}
					case ws.Signaled():
						kills++
					default:
						t.Fatalf("run %d: append failed without being killed: %v: %s", run, err, stderr.String())
					}
					got, loc := batchStored(t, root, id, n, titles, run)
					checked += int(n) + got
					switch {
					case acked && got != len(titles):
						t.Fatalf("run %d: acknowledged, but %d of %d events stored", run, got, len(titles))
					case !plain && got != done && got != len(titles):
						t.Fatalf("run %d: a zstd batch stored in part: %d of the %d asked", run, got-done, len(titles)-done)
					case got > done && got < len(titles):
						partial++
					}
					if got == done && !acked && loc.TornBytes == 0 && loc.UncommittedBytes == 0 && rng.IntN(3) == 0 {
						// What a kill inside write(2) leaves, which a
						// writer starts only on a clean tail: the first
						// lines of the batch (plain), then a torn line or
						// a torn frame.
						logPath := filepath.Join(root, "--home-dev-projects-demo-app--", id, map[bool]string{true: "session.jsonl", false: "session.jsonl.zstd"}[plain])
						if plain {
							k := rng.IntN(len(titles) - done + 1)
							for i := done; i < done+k; i++ {
								appendToLog(t, logPath, fmt.Appendf(nil, `{"type":"session/title","seq":%d,"time":1,"data":{"title":%q}}`+"\n", n+int64(i), titles[i]))
							}
							got += k
							if k > 0 && got < len(titles) {
								partial++
							}
						}
						tearTail(t, logPath, st, rng)
					}
					if got > done && got < len(titles) {
						// A retry that still expects the old next seq
						// writes nothing.
						stale++
						before := logState(t, root, id)
						cmd := exec.Command("dshctl", "--store", root, "append", "--assign-seq", "--expect-next-seq", strconv.FormatInt(m, 10), id)
						cmd.Stdin = strings.NewReader(strings.Join(lines[done:], ""))
						cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+backups)
						out, err := cmd.CombinedOutput()
						if err == nil || !strings.Contains(string(out), fmt.Sprintf("the log's next seq is %d, not the %d expected: nothing was written", n+int64(got), m)) {
							t.Fatalf("run %d: a stale retry: %v: %s", run, err, out)
						}
						if after := logState(t, root, id); after != before {
							t.Fatalf("run %d: a refused retry changed the log", run)
						}
					}
					done = got
				}
				next = n + int64(len(titles))
			}
			t.Logf("%d batches, %d appends, %d killed, %d partial batches retried, %d stale retries refused, %d events checked",
				runs, attempts, kills, partial, stale, checked)
		})
	}
}

// retryBatch returns a batch of session/title events with titles unique to
// the run, some padded so that the write takes long enough to be cut.
func retryBatch(rng *rand.Rand, run int) (titles, lines []string) {
	n := 2 + rng.IntN(20)
	for k := range n {
		title := fmt.Sprintf("retry run %d event %d", run, k)
		pad := ""
		if rng.IntN(4) == 0 {
			pad = fmt.Sprintf(`,"pad":%q`, strings.Repeat("y", rng.IntN(64<<10)))
		}
		titles = append(titles, title)
		lines = append(lines, fmt.Sprintf(`{"type":"session/title","data":{"title":%q%s}}`+"\n", title, pad))
	}
	return titles, lines
}

// batchStored reads the log after a kill: it must read without error,
// Stat must agree with a full read, and the events from seq n on must be
// the first of titles, in order, each once. It returns how many there are
// and where the log's torn and uncommitted tails are.
func batchStored(t *testing.T, root, id string, n int64, titles []string, run int) (int, seam.Location) {
	t.Helper()
	loc, count := checkAfterCrash(t, root, id, nil, run)
	ctx := context.Background()
	svc, err := store.Open(store.Spec{Path: root}, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	h, err := svc.Open(ctx, id, seam.Read)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	got := 0
	for ev, err := range h.Scan(ctx, seam.ScanOptions{From: n}) {
		if err != nil {
			t.Fatalf("run %d: read after crash: %v", run, err)
		}
		var d struct{ Title string }
		if err := json.Unmarshal(ev.Data, &d); err != nil || got >= len(titles) || d.Title != titles[got] {
			t.Fatalf("run %d: seq %d holds %q; the batch's event %d is %q", run, ev.Seq, d.Title, got, titles[min(got, len(titles)-1)])
		}
		got++
	}
	if int64(got) != count-n {
		t.Fatalf("run %d: %d events from seq %d, but the log has %d", run, got, n, count)
	}
	return got, loc
}

// logState is what a refused append must not change: the live log's
// revision and size.
func logState(t *testing.T, root, id string) string {
	t.Helper()
	svc, err := store.Open(store.Spec{Path: root}, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	snap, err := svc.Stat(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%s %d", snap.Revision, snap.SizeBytes)
}
