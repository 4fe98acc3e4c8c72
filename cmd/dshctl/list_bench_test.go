//go:build linux

package main

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dshctl/dshctl/internal/jsonl"
	"github.com/dshctl/dshctl/internal/jsonl/zstdframe"
	"github.com/dshctl/dshctl/internal/seam"
	"golang.org/x/sys/unix"
)

// benchStoreSessions is the size of the list benchmark's store.
const benchStoreSessions = 10_000

// BenchmarkList measures `dshctl list` on a store of 10,000 zstd sessions of
// mixed sizes (some over 10 MB) against the floor of any cold list: reading
// the first and last 4 KiB of every log file, given the list of files
// ("ratio"), and also finding those files by walking the store first, as
// list must ("ratio-walk"). All run in every iteration, on the same warm
// page cache. The store is built once and kept in $DSHCTL_BENCH_STORE
// (default: a folder in the temp dir).
func BenchmarkList(b *testing.B) {
	root := benchStore(b)
	logs, err := filepath.Glob(filepath.Join(root, "*", "*", "session*.jsonl.zstd"))
	if err != nil || len(logs) != benchStoreSessions {
		b.Fatalf("store has %d logs: %v", len(logs), err)
	}
	var listTime, readTime, walkTime time.Duration
	b.ResetTimer()
	for b.Loop() {
		start := time.Now()
		e := &env{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard,
			getenv: func(string) string { return "" }, now: time.Now}
		if code := run([]string{"--store", root, "list", "--all", "-o", "jsonl"}, e); code != 0 {
			b.Fatalf("list exited %d", code)
		}
		listTime += time.Since(start)

		start = time.Now()
		if err := readHeadsAndTails(logs, 4<<10); err != nil {
			b.Fatal(err)
		}
		readTime += time.Since(start)

		start = time.Now()
		found, err := findLogs(root)
		if err == nil {
			err = readHeadsAndTails(found, 4<<10)
		}
		if err != nil || len(found) != len(logs) {
			b.Fatalf("walk found %d logs: %v", len(found), err)
		}
		walkTime += time.Since(start)
	}
	n := float64(b.N)
	b.ReportMetric(float64(listTime.Milliseconds())/n, "list-ms")
	b.ReportMetric(float64(readTime.Milliseconds())/n, "head+tail-4KiB-ms")
	b.ReportMetric(float64(walkTime.Milliseconds())/n, "walk+head+tail-ms")
	b.ReportMetric(float64(listTime)/float64(readTime), "ratio")
	b.ReportMetric(float64(listTime)/float64(walkTime), "ratio-walk")
}

// findLogs walks a store for its log files, the way any lister must before
// it can read them: root, project folders, session folders, as bare
// system calls (no *os.File, no stat of the entries).
func findLogs(root string) ([]string, error) {
	var logs []string
	projects, err := readNames(root)
	if err != nil {
		return nil, err
	}
	for _, p := range projects {
		sessions, err := readNames(filepath.Join(root, p))
		if err == unix.ENOTDIR {
			continue
		}
		if err != nil {
			return nil, err
		}
		for _, sess := range sessions {
			dir := filepath.Join(root, p, sess)
			files, err := readNames(dir)
			if err != nil && err != unix.ENOTDIR {
				return nil, err
			}
			for _, f := range files {
				if strings.HasSuffix(f, ".jsonl.zstd") {
					logs = append(logs, filepath.Join(dir, f))
				}
			}
		}
	}
	return logs, nil
}

// readNames returns the names in a folder.
func readNames(dir string) ([]string, error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	var names []string
	buf := make([]byte, 8<<10)
	for {
		n, err := unix.Getdents(fd, buf)
		if err != nil {
			return nil, err
		}
		if n <= 0 {
			return names, nil
		}
		_, _, names = unix.ParseDirent(buf[:n], -1, names)
	}
}

// readHeadsAndTails reads the first and last n bytes of every file with
// the fewest system calls: open, fstat, one or two preads, close.
func readHeadsAndTails(paths []string, n int64) error {
	buf := make([]byte, n)
	for _, p := range paths {
		fd, err := unix.Open(p, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			return err
		}
		var st unix.Stat_t
		err = unix.Fstat(fd, &st)
		if err == nil {
			_, err = unix.Pread(fd, buf[:min(n, st.Size)], 0)
		}
		if err == nil && st.Size > n {
			_, err = unix.Pread(fd, buf, st.Size-n)
		}
		unix.Close(fd)
		if err != nil {
			return err
		}
	}
	return nil
}

// benchStore returns the benchmark store, building it on first use.
func benchStore(b *testing.B) string {
	root := os.Getenv("DSHCTL_BENCH_STORE")
	if root == "" {
		root = filepath.Join(os.TempDir(), fmt.Sprintf("dshctl-bench-list-%d", benchStoreSessions))
	}
	done := filepath.Join(root, ".complete")
	if _, err := os.Stat(done); err == nil {
		return root
	}
	b.Logf("building a store of %d sessions in %s (once)", benchStoreSessions, root)
	if err := os.RemoveAll(root); err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range benchStoreSessions {
		if err := writeBenchSession(root, i, rng); err != nil {
			b.Fatal(err)
		}
	}
	if err := os.WriteFile(done, nil, 0o644); err != nil {
		b.Fatal(err)
	}
	return root
}

// writeBenchSession writes one v0 zstd log the way dsh does: the header in
// frame 0, then one frame per batch. Sizes are mixed: most logs hold a few
// turns, 1 in 500 holds over 10 MB of tool output, 1 in 20 is blank and
// 1 in 50 ends in an open turn.
func writeBenchSession(root string, i int, rng *rand.Rand) error {
	cwd := fmt.Sprintf("/home/dev/project-%d", i%40)
	h := seam.Header{ID: fmt.Sprintf("session-%08x-%04d", rng.Uint32(), i), CreatedAt: 1785000000000 + int64(i)*60000, Cwd: cwd}
	project, err := jsonl.ProjectKey(cwd)
	if err != nil {
		return err
	}
	seg, err := jsonl.EncodeSegment(h.ID)
	if err != nil {
		return err
	}
	dir := filepath.Join(root, project, seg)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	file := zstdframe.AppendFrame(nil, append(h.AppendJSON(nil), '\n'))
	var seq int64
	t := h.CreatedAt
	batch := func(evs ...seam.Event) {
		var text []byte
		for k := range evs {
			evs[k].Seq, evs[k].Time = seq, t
			seq++
			t += 50
			text = append(evs[k].AppendJSON(text), '\n')
		}
		file = zstdframe.AppendFrame(file, text)
	}
	ev := func(typ, data string, surface bool) seam.Event {
		e := seam.Event{Type: typ, Data: []byte(data)}
		if surface {
			e.SurfaceOp = []byte(`"append"`)
		}
		return e
	}
	turns := 1 + rng.IntN(8)
	big := 0
	switch {
	case i%20 == 7:
		turns = 0
		batch(ev("session/end-seed", `{}`, false))
	case i%500 == 3:
		turns, big = 12, 1<<20
	}
	for turn := 1; turn <= turns; turn++ {
		output := base64.StdEncoding.EncodeToString(randomBytes(rng, big+rng.IntN(2000)))
		batch(
			ev("turn/start", fmt.Sprintf(`{"turn":%d}`, turn), false),
			ev("step/start", fmt.Sprintf(`{"turn":%d,"step":1}`, turn), false),
			ev("user/message", fmt.Sprintf(`{"id":"u%d","role":"user","content":[{"type":"text","text":"please do step %d"}],"source":{"kind":"user"}}`, turn, turn), true),
		)
		batch(
			ev("assistant/message", fmt.Sprintf(`{"turn":%d,"step":1,"message":{"id":"a%d","role":"assistant","content":[{"type":"tool-call","id":"c%d","name":"bash","arguments":"{}"}],"source":{"kind":"model","provider":"p","model":"m"}}}`, turn, turn, turn), true),
			ev("tool/call", fmt.Sprintf(`{"turn":%d,"step":1,"callId":"c%d","name":"bash","arguments":"{}"}`, turn, turn), false),
		)
		if turn == turns && i%50 == 11 {
			break // an open turn: the tool never returned
		}
		batch(
			ev("tool/result", fmt.Sprintf(`{"turn":%d,"step":1,"message":{"id":"r%d","role":"user","source":{"kind":"tool","callId":"c%d"},"content":[{"type":"tool-result","toolCallId":"c%d","content":[{"type":"text","text":%q}]}]}}`, turn, turn, turn, turn, output), true),
			ev("step/end", fmt.Sprintf(`{"turn":%d,"step":1}`, turn), false),
			ev("turn/end", fmt.Sprintf(`{"turn":%d,"reason":{"kind":"completed"}}`, turn), false),
		)
	}
	return os.WriteFile(filepath.Join(dir, "session.jsonl.zstd"), file, 0o644)
}

func randomBytes(rng *rand.Rand, n int) []byte {
	var b bytes.Buffer
	b.Grow(n)
	for b.Len() < n {
		v := rng.Uint64()
		for k := 0; k < 8 && b.Len() < n; k++ {
			b.WriteByte(byte(v >> (8 * k)))
		}
	}
	return b.Bytes()
}
