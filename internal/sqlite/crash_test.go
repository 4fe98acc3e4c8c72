package sqlite

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dshctl/dshctl/internal/seam"
)

// crashChildEnv names the database a crash child appends to.
const crashChildEnv = "SQLITE_CRASH_CHILD"

// crashChild appends batches to session "crash" of the database at db
// until it is killed, printing "acked N" (the next seq) after each append
// returns.
func crashChild(db string) {
	fail := func(err error) {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	s, err := Open(db, Options{BackupDir: os.TempDir()})
	if err != nil {
		fail(err)
	}
	h, err := s.Open(ctx, "crash", seam.Write)
	if err != nil {
		fail(err)
	}
	snap, err := h.Snapshot(ctx)
	if err != nil {
		fail(err)
	}
	next := snap.EventCount
	for i := 0; ; i++ {
		batch := make([]seam.Event, 1+i%9)
		for k := range batch {
			title := fmt.Sprintf("title %d %s", next+int64(k), strings.Repeat("x", (i*7919+k)%20000))
			batch[k] = seam.Event{Type: "session/title", Seq: next + int64(k), Time: 1785331618000 + next, Data: fmt.Appendf(nil, `{"title":%q}`, title)}
		}
		if err := h.Append(ctx, batch); err != nil {
			fail(err)
		}
		next += int64(len(batch))
		fmt.Println("acked", next)
	}
}

// TestCrashAppendSQLite kills a process appending to a SQLite store at
// random points and checks after each kill that every acknowledged event
// is there, unchanged, that the session reads without error, that Stat
// agrees and that the database passes integrity_check. DSHCTL_CRASH_RUNS
// sets the number of kills per schema.
func TestCrashAppendSQLite(t *testing.T) {
	runs := 3
	if v := os.Getenv("DSHCTL_CRASH_RUNS"); v != "" {
		var err error
		if runs, err = strconv.Atoi(v); err != nil {
			t.Fatalf("DSHCTL_CRASH_RUNS: %v", err)
		}
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	for _, schema := range []int{Schema17, Schema14} {
		t.Run(fmt.Sprint("schema", schema), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, uint64(schema)))
			s := newStore(t, schema, Options{})
			stored(t, s, "crash", 1)
			s.Close()
			var acked int64 = 1
			for run := range runs {
				cmd := exec.Command(os.Args[0], "-test.run=^$")
				cmd.Env = append(os.Environ(), crashChildEnv+"="+s.Path())
				out, err := cmd.StdoutPipe()
				if err != nil {
					t.Fatal(err)
				}
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				delay := time.Duration(50+rng.IntN(400)) * time.Millisecond
				timer := time.AfterFunc(delay, func() { cmd.Process.Signal(syscall.SIGKILL) })
				sc := bufio.NewScanner(out)
				for sc.Scan() {
					line := sc.Text()
					if n, ok := strings.CutPrefix(line, "acked "); ok {
						acked, _ = strconv.ParseInt(n, 10, 64)
						continue
					}
					t.Fatalf("run %d: child: %s", run, line)
				}
				cmd.Wait()
				timer.Stop()
				checkCrashed(t, s.Path(), acked, run)
			}
			t.Logf("%d kills, %d events acknowledged", runs, acked)
		})
	}
}

func checkCrashed(t *testing.T, db string, acked int64, run int) {
	t.Helper()
	s, err := Open(db, Options{})
	if err != nil {
		t.Fatalf("run %d: open after the kill: %v", run, err)
	}
	defer s.Close()
	if problems, err := s.IntegrityCheck(ctx); err != nil || problems != nil {
		t.Fatalf("run %d: integrity_check: %v %v", run, problems, err)
	}
	snap, err := s.Stat(ctx, "crash")
	if err != nil {
		t.Fatalf("run %d: stat: %v", run, err)
	}
	h, err := s.Open(ctx, "crash", seam.Read)
	if err != nil {
		t.Fatalf("run %d: open: %v", run, err)
	}
	defer h.Close()
	got, err := h.Read(ctx, 0, -1)
	if err != nil {
		t.Fatalf("run %d: read: %v", run, err)
	}
	if int64(len(got)) < acked || snap.EventCount != int64(len(got)) {
		t.Fatalf("run %d: %d events read, Stat %d, %d acknowledged", run, len(got), snap.EventCount, acked)
	}
	for _, e := range got[1:] {
		if !strings.HasPrefix(string(e.Data), fmt.Sprintf(`{"title":"title %d `, e.Seq)) {
			t.Fatalf("run %d: seq %d holds %.60s", run, e.Seq, e.Data)
		}
	}
}
