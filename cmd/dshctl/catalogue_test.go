package main

// Commands for the catalogue of hostile and damaged inputs,
// testdata/scripts/bad_*.txtar: they build the inputs at run time (a GiB
// of content in a few KiB of frames, sparse torn tails), run dshctl under
// time and memory bounds, and check that a store is left byte for byte as
// it was.

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/dshctl/dshctl/internal/jsonl/hostile"
	"github.com/rogpeppe/go-internal/testscript"
)

// catalogueCmds are the testscript commands of the catalogue.
func catalogueCmds() map[string]func(ts *testscript.TestScript, neg bool, args []string) {
	return map[string]func(ts *testscript.TestScript, neg bool, args []string){
		"mksession": cmdMkSession,
		"addframe":  cmdAddFrame,
		"addbytes":  cmdAddBytes,
		"mkevents":  cmdMkEvents,
		"extend":    cmdExtend,
		"mkfifo":    cmdMkfifo,
		"snapshot":  cmdSnapshot,
		"unchanged": cmdUnchanged,
		"bounded":   cmdBounded,
		"chownall":  cmdChownAll,
		"owner":     cmdOwner,
	}
}

// cmdMkSession writes a session of one committed turn (seq 0 to 4) in the
// project folder --p-- of ROOT, for cwd /p:
//
//	mksession store s zstd|plain
func cmdMkSession(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 || args[2] != "zstd" && args[2] != "plain" {
		ts.Fatalf("usage: mksession ROOT ID zstd|plain")
	}
	_, err := hostile.Session(ts.MkAbs(args[0]), args[1], args[2] == "zstd")
	ts.Check(err)
}

// parseParts reads the parts of a frame or of bytes to append:
// text:STRING (Go escapes allowed: \n, \x00), rep:BYTE:SIZE (BYTE one
// character, nl or nul; SIZE a count with an optional KiB, MiB, GiB, MB or
// GB), reps:STRING:COUNT (STRING COUNT times) or seq:STRING:COUNT (STRING
// COUNT times, {i} in it replaced by 0, 1, …).
func parseParts(ts *testscript.TestScript, args []string) []hostile.Part {
	var parts []hostile.Part
	for _, a := range args {
		switch {
		case strings.HasPrefix(a, "text:"):
			s, err := strconv.Unquote(`"` + strings.ReplaceAll(a[5:], `"`, `\"`) + `"`)
			if err != nil {
				ts.Fatalf("%s: %v", a, err)
			}
			parts = append(parts, hostile.Text(s))
		case strings.HasPrefix(a, "reps:"):
			i := strings.LastIndexByte(a, ':')
			text, err := strconv.Unquote(`"` + strings.ReplaceAll(a[5:i], `"`, `\"`) + `"`)
			if err != nil {
				ts.Fatalf("%s: %v", a, err)
			}
			n := parseSize(ts, a[i+1:])
			if n*int64(len(text)) > 256<<20 {
				ts.Fatalf("%s: more than 256 MiB", a)
			}
			parts = append(parts, hostile.Text(strings.Repeat(text, int(n))))
		case strings.HasPrefix(a, "seq:"):
			i := strings.LastIndexByte(a, ':')
			text, err := strconv.Unquote(`"` + strings.ReplaceAll(a[4:i], `"`, `\"`) + `"`)
			if err != nil {
				ts.Fatalf("%s: %v", a, err)
			}
			n := parseSize(ts, a[i+1:])
			if n*int64(len(text)+10) > 256<<20 {
				ts.Fatalf("%s: more than 256 MiB", a)
			}
			var sb strings.Builder
			for k := range n {
				sb.WriteString(strings.ReplaceAll(text, "{i}", strconv.FormatInt(k, 10)))
			}
			parts = append(parts, hostile.Text(sb.String()))
		case strings.HasPrefix(a, "rep:"):
			f := strings.SplitN(a[4:], ":", 2)
			if len(f) != 2 {
				ts.Fatalf("%s: want rep:BYTE:SIZE", a)
			}
			b := map[string]byte{"nl": '\n', "nul": 0}[f[0]]
			if _, ok := map[string]bool{"nl": true, "nul": true}[f[0]]; !ok {
				if len(f[0]) != 1 {
					ts.Fatalf("%s: BYTE is one character, nl or nul", a)
				}
				b = f[0][0]
			}
			parts = append(parts, hostile.Repeat(b, parseSize(ts, f[1])))
		default:
			ts.Fatalf("%s: want text:STRING or rep:BYTE:SIZE", a)
		}
	}
	return parts
}

func parseSize(ts *testscript.TestScript, s string) int64 {
	mult := int64(1)
	for suffix, m := range map[string]int64{"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "MB": 1e6, "GB": 1e9} {
		if strings.HasSuffix(s, suffix) {
			s, mult = strings.TrimSuffix(s, suffix), m
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		ts.Fatalf("size %q: %v", s, err)
	}
	return n * mult
}

// cmdAddFrame appends one zstd frame (checksum on, RLE blocks for
// repeats) holding the parts to FILE:
//
//	addframe $LOG rep:nul:1GiB
func cmdAddFrame(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: addframe FILE PART...")
	}
	ts.Check(hostile.Append(ts.MkAbs(args[0]), hostile.Frame(nil, parseParts(ts, args[1:])...)))
}

// cmdAddBytes appends the parts to FILE (made if needed) as they are:
//
//	addbytes $LOG rep:nl:16MiB
func cmdAddBytes(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: addbytes FILE PART...")
	}
	f, err := os.OpenFile(ts.MkAbs(args[0]), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	ts.Check(err)
	defer f.Close()
	for _, p := range parseParts(ts, args[1:]) {
		if p.Data != nil {
			_, err = f.Write(p.Data)
		} else {
			chunk := bytes.Repeat([]byte{p.Byte}, int(min(p.N, 1<<20)))
			for n := p.N; n > 0 && err == nil; n -= int64(len(chunk)) {
				_, err = f.Write(chunk[:min(n, int64(len(chunk)))])
			}
		}
		ts.Check(err)
	}
}

// cmdMkEvents writes FILE, a batch of N session/title events (no seq),
// each line SIZE bytes long with its newline: a large input to append.
//
//	mkevents batch.jsonl 100 1MiB
func cmdMkEvents(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: mkevents FILE N SIZE")
	}
	n, err := strconv.Atoi(args[1])
	ts.Check(err)
	const head, tail = `{"type":"session/title","data":{"title":"`, "\"}}\n"
	size := parseSize(ts, args[2])
	if size < int64(len(head)+len(tail)) {
		ts.Fatalf("mkevents: a line takes at least %d bytes", len(head)+len(tail))
	}
	line := []byte(head + strings.Repeat("a", int(size)-len(head)-len(tail)) + tail)
	f, err := os.Create(ts.MkAbs(args[0]))
	ts.Check(err)
	defer f.Close()
	for range n {
		_, err := f.Write(line)
		ts.Check(err)
	}
}

// cmdExtend grows FILE by SIZE zero bytes, as a sparse hole: a torn tail
// of any length for free.
//
//	extend $LOG 500MB
func cmdExtend(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: extend FILE SIZE")
	}
	ts.Check(hostile.Extend(ts.MkAbs(args[0]), parseSize(ts, args[1])))
}

// cmdMkfifo makes a FIFO at PATH.
func cmdMkfifo(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: mkfifo PATH")
	}
	ts.Check(mkfifo(ts.MkAbs(args[0])))
}

var snapshots sync.Map // script work dir + name -> tree state

// cmdSnapshot records the state of every file under DIR (its bytes, mode
// and, for a link, target) as NAME, for unchanged to compare:
//
//	snapshot before store
func cmdSnapshot(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: snapshot NAME DIR")
	}
	snapshots.Store(ts.Getenv("WORK")+"\x00"+args[0], treeDigest(ts, ts.MkAbs(args[1])))
}

// cmdUnchanged fails unless DIR is byte for byte as snapshot NAME found
// it (with !, unless it changed):
//
//	unchanged before store
func cmdUnchanged(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: unchanged NAME DIR")
	}
	was, ok := snapshots.Load(ts.Getenv("WORK") + "\x00" + args[0])
	if !ok {
		ts.Fatalf("no snapshot %s", args[0])
	}
	now := treeDigest(ts, ts.MkAbs(args[1]))
	if same := now == was.(string); same == neg {
		if neg {
			ts.Fatalf("%s did not change", args[1])
		}
		ts.Fatalf("%s changed:\nwas:\n%s\nnow:\n%s", args[1], was, now)
	}
}

// treeDigest lists every file under dir with its mode and a hash of its
// bytes (a link: its target), but lock files (see below).
func treeDigest(ts *testscript.TestScript, dir string) string {
	var lines []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		rel, _ := filepath.Rel(dir, p)
		if err != nil {
			lines = append(lines, rel+" unreadable")
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return nil
		}
		if d.Name() == "session.lock" && fi.Mode().IsRegular() || strings.HasSuffix(d.Name(), ".dshctl-lock") && fi.Mode().IsRegular() && fi.Size() == 0 {
			// Taken by every write, made if needed and never deleted: a
			// lock file is not a change of the store, nor is the note of
			// dshctl's last write a session's holds (a hint, not data).
			return nil
		}
		if fi.Mode().IsRegular() && (strings.HasSuffix(rel, "-shm") || strings.HasSuffix(rel, "-wal") && fi.Size() == 0) {
			// SQLite's shared memory, which every reader of a WAL
			// database writes, and an empty WAL, which is no WAL: a
			// reader may make both.
			return nil
		}
		line := fmt.Sprintf("%s %v", rel, fi.Mode())
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			line += " -> " + target
		case fi.Mode().IsRegular() && fi.Size() > 64<<20:
			// A hostile log of GiBs: any write to it moves its change
			// time, which is cheaper to compare than its bytes.
			line += fmt.Sprintf(" %d %s", fi.Size(), changeStamp(fi))
		case fi.Mode().IsRegular():
			h := xxhash.New()
			if f, err := os.Open(p); err == nil {
				io.Copy(h, f)
				f.Close()
			}
			line += fmt.Sprintf(" %d %x", fi.Size(), h.Sum64())
		}
		lines = append(lines, line)
		return nil
	})
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// cmdBounded runs dshctl with ARGS as its own process and checks that it
// exits with CODE, without a panic or a stack trace, within the CPU time
// and peak memory (resident set) bounds, and when CODE is not 0 that its
// stderr is one "dshctl: " line (-errors N: up to N, for a batch that
// reports each session that failed, then a summary) and at most a "hint: "
// line; its output is the script's stdout and stderr. A check that found
// problems (3) prints them as its output: its stderr may be empty.
// GOMEMLIMIT is set below the memory bound, as a user short of memory
// would: the resident set also holds what the Go runtime does not count
// (the program's own pages), and a collection under load ends a little
// after the heap passes the limit.
// -ownlimit leaves GOMEMLIMIT unset, to test the limit dshctl sets itself.
// -nobody runs it, when the test runs as root, as the unprivileged user
// nobody (so that file modes apply), and as the current user otherwise.
// -tries N runs it up to N times while it takes more CPU time than its
// bound and every other check holds, for a command that changes nothing
// whose time is near its bound: the CPU time of the same work varies with
// what else the machine (or its host) runs — 0.65 s to 1.37 s for the
// stat of bad_zstd_frames_of_newlines — and a command that does more work
// than it should is over its bound every time. -restore DIR puts DIR back
// as it was before each further run, for a command that writes only
// there.
//
//	bounded [-mem 100MB] [-time 2s] [-nobody] [-errors 1] [-tries 1] [-restore DIR] 1 stat s
func cmdBounded(ts *testscript.TestScript, neg bool, args []string) {
	fl := flag.NewFlagSet("bounded", flag.ContinueOnError)
	memArg := fl.String("mem", "100MB", "peak resident memory")
	limit := fl.Duration("time", 2*time.Second, "CPU time (user and system)")
	nobody := fl.Bool("nobody", false, "run as nobody when root")
	errLines := fl.Int("errors", 1, "most error lines")
	ownLimit := fl.Bool("ownlimit", false, "set no GOMEMLIMIT: dshctl's own memory limit applies")
	tries := fl.Int("tries", 1, "runs while only the CPU time bound fails (a command that changes nothing)")
	restore := fl.String("restore", "", "the folder to put back before each further run")
	if neg || fl.Parse(args) != nil || fl.NArg() < 2 || *tries < 1 {
		ts.Fatalf("usage: bounded [-mem SIZE] [-time DURATION] [-nobody] [-ownlimit] [-errors N] [-tries N] [-restore DIR] CODE ARGS...")
	}
	var saved *savedTree
	if *restore != "" {
		saved = saveTree(ts, ts.MkAbs(*restore))
	}
	mem := parseSize(ts, *memArg)
	if raceEnabled {
		// What the race detector adds (see raceEnabled): a race run is
		// for races; the bounds are held by the run without it, and
		// here still stop a command that runs away.
		mem, *limit = mem*raceMem, *limit*raceCPU
	}
	code, err := strconv.Atoi(fl.Arg(0))
	ts.Check(err)
	bin, err := exec.LookPath("dshctl")
	ts.Check(err)
	measure, err := exec.LookPath("dshctl-measure")
	ts.Check(err)
	out := filepath.Join(ts.MkAbs("."), ".bounded")
	name, argv := measure, append([]string{out, bin}, fl.Args()[1:]...)
	if *nobody && isRoot() {
		name, argv = asNobody(ts, measure, bin, argv[2:])
	}
	var env []string
	for _, k := range []string{"PATH", "HOME", "XDG_STATE_HOME", "DSH_HOME", "DSHCTL_STORE", "NO_COLOR", "TMPDIR", "DSHCTL_TEST_TTY", "DSHCTL_TEST_INUSE_WINDOW", "COLUMNS"} {
		env = append(env, k+"="+ts.Getenv(k))
	}
	env = append(env, fmt.Sprintf("%s=%d", cpuLimitEnv, cpuStop(*limit)))
	if !*ownLimit {
		env = append(env, fmt.Sprintf("GOMEMLIMIT=%d", mem*4/5))
	}
	var m measured
	var stdout, stderr bytes.Buffer
	for try := 1; ; try++ {
		stdout.Reset()
		stderr.Reset()
		m = runMeasured(ts, out, name, argv, env, *limit, &stdout, &stderr)
		if m.CPU <= *limit || m.Code != code || m.MaxRSS > mem || try == *tries {
			break
		}
		ts.Logf("bounded: %v of CPU, over %v: run %d of %d", m.CPU, *limit, try+1, *tries)
		if saved != nil {
			saved.restore(ts)
		}
	}
	ts.Stdout().Write(stdout.Bytes())
	ts.Stderr().Write(stderr.Bytes())
	if m.CPU > *limit && m.Code != code {
		ts.Fatalf("dshctl took %v of CPU, over %v (and exited %d, want %d: stopped at %v of CPU)", m.CPU, *limit, m.Code, code, time.Duration(cpuStop(*limit))*time.Second)
	}
	if m.Code != code {
		ts.Fatalf("dshctl exited %d, want %d", m.Code, code)
	}
	for _, l := range strings.Split(stderr.String(), "\n") {
		for _, bad := range []string{"panic:", "goroutine ", "runtime error", "fatal error", "\t"} {
			if strings.HasPrefix(l, bad) {
				ts.Fatalf("stderr holds a panic or a stack trace: %q", l)
			}
		}
	}
	if code != 0 && (code != 3 || stderr.Len() > 0) {
		// One clear line (one per failure of a batch), and a hint at most.
		lines := strings.Split(strings.TrimSuffix(stderr.String(), "\n"), "\n")
		if len(lines) > 1 && strings.HasPrefix(lines[len(lines)-1], "hint: ") {
			lines = lines[:len(lines)-1]
		}
		for _, l := range lines {
			if !strings.HasPrefix(l, "dshctl: ") {
				ts.Fatalf("stderr is not one message (and a hint): %q", stderr.String())
			}
		}
		if len(lines) > *errLines {
			ts.Fatalf("stderr holds %d messages, more than %d: %q", len(lines), *errLines, stderr.String())
		}
	}
	ts.Logf("bounded: %v of CPU, peak %d MB", m.CPU, m.MaxRSS/1e6)
	if m.MaxRSS > mem {
		ts.Fatalf("dshctl peaked at %d MB of memory, over %d MB", m.MaxRSS/1e6, mem/1e6)
	}
	if m.CPU > *limit {
		ts.Fatalf("dshctl took %v of CPU, over %v", m.CPU, *limit)
	}
}

// runMeasured runs dshctl-measure (name and argv, which name out) with
// env, its output to stdout and stderr, and returns what it measured. The
// bound is on CPU time: a command that runs away is stopped by its CPU
// time (cpuStop). One that blocks (on a FIFO, say) is killed after a
// while, long enough that a busy machine's share of a core does not pass
// for a hang: 1 CPU-s took 20 s of wall time at a load of 30 on 2 cores,
// and over a minute for a test run under nice beside a load of 20.
func runMeasured(ts *testscript.TestScript, out, name string, argv, env []string, limit time.Duration, stdout, stderr *bytes.Buffer) measured {
	os.Remove(out)
	cmd := exec.Command(name, argv...)
	cmd.Dir = ts.MkAbs(".")
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = stdout, stderr
	ts.Check(cmd.Start())
	hang := time.AfterFunc(max(30*limit, 10*time.Minute), func() { cmd.Process.Kill() })
	err := cmd.Wait()
	if !hang.Stop() {
		ts.Stdout().Write(stdout.Bytes())
		ts.Stderr().Write(stderr.Bytes())
		ts.Fatalf("dshctl did not finish: killed")
	}
	var m measured
	if data, rerr := os.ReadFile(out); rerr != nil || json.Unmarshal(data, &m) != nil {
		ts.Stdout().Write(stdout.Bytes())
		ts.Stderr().Write(stderr.Bytes())
		ts.Fatalf("dshctl did not run: %v", err)
	}
	return m
}

// raceCPU and raceMem scale bounded's CPU time and memory bounds under
// the race detector: the upper ends of what Go's documentation says it
// costs (execution time 2-20 times, memory 5-10 times), since the bounds
// are set near what a command takes without it.
const (
	raceCPU = 20
	raceMem = 10
)

// cpuLimitEnv passes dshctl-measure the CPU time, in seconds, after which
// the system stops the command it runs (RLIMIT_CPU; not on Windows).
const cpuLimitEnv = "DSHCTL_MEASURE_CPU_LIMIT"

// cpuStop is the CPU time, in whole seconds, after which a command bounded
// to limit is stopped: it has failed by then, and its time says by how
// much without waiting for it.
func cpuStop(limit time.Duration) int64 {
	return int64(2*limit/time.Second) + 1
}

// measured is what dshctl-measure reports of the process it ran.
type measured struct {
	Code   int
	MaxRSS int64 // bytes; 0 where not measured
	CPU    time.Duration
}

// measureMain is the dshctl-measure command: it runs BIN with ARGS as a
// child, with its own standard streams, and writes to OUT the child's exit
// code, peak resident memory and CPU time. The measuring is done from this
// small process because a child inherits the peak memory of the process
// that starts it (Linux keeps it across exec): from the test process, the
// figure would be the test's own.
//
//	dshctl-measure OUT BIN ARGS...
func measureMain() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: dshctl-measure OUT BIN ARGS...")
		os.Exit(2)
	}
	if secs, err := strconv.ParseInt(os.Getenv(cpuLimitEnv), 10, 64); err == nil {
		// Inherited by the command; this process spends next to none.
		if err := limitCPU(secs); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
	}
	cmd := exec.Command(os.Args[2], os.Args[3:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, cpuLimitEnv+"=") })
	err := cmd.Run()
	if cmd.ProcessState == nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	m := measured{Code: cmd.ProcessState.ExitCode(), CPU: cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()}
	m.MaxRSS, _ = maxRSS(cmd.ProcessState)
	data, _ := json.Marshal(m)
	if err := os.WriteFile(os.Args[1], data, 0o666); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
}

// cmdChownAll gives every file under DIR to UID and GID.
func cmdChownAll(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: chownall DIR UID GID")
	}
	uid, err := strconv.Atoi(args[1])
	ts.Check(err)
	gid, err := strconv.Atoi(args[2])
	ts.Check(err)
	ts.Check(filepath.WalkDir(ts.MkAbs(args[0]), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, uid, gid)
	}))
}

// cmdOwner checks the owner, group and permission bits of FILE:
//
//	owner store/--p--/s/session.lock 65534 65534 0600
func cmdOwner(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 4 {
		ts.Fatalf("usage: owner FILE UID GID MODE")
	}
	fi, err := os.Lstat(ts.MkAbs(args[0]))
	ts.Check(err)
	uid, gid, ok := fileOwner(fi)
	if !ok {
		ts.Logf("no owners on this system")
		return
	}
	if got := fmt.Sprintf("%d %d %#o", uid, gid, fi.Mode().Perm()); got != strings.Join(args[1:], " ") {
		ts.Fatalf("%s: owner, group and mode %s, want %s", args[0], got, strings.Join(args[1:], " "))
	}
}

// savedTree is a folder's files as they were, to put back.
type savedTree struct {
	root    string
	entries []savedEntry
}

type savedEntry struct {
	rel   string
	mode  fs.FileMode
	data  []byte // a file's bytes; a link's target
	mtime time.Time
}

// saveTree reads the tree at root (a small store) into memory.
func saveTree(ts *testscript.TestScript, root string) *savedTree {
	t := &savedTree{root: root}
	size := 0
	ts.Check(filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		e := savedEntry{rel: rel, mode: info.Mode(), mtime: info.ModTime()}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			e.data = []byte(target)
			if err != nil {
				return err
			}
		case d.Type().IsRegular():
			if e.data, err = os.ReadFile(p); err != nil {
				return err
			}
		case !d.IsDir():
			return fmt.Errorf("%s: cannot save %v", p, d.Type())
		}
		if size += len(e.data); size > 64<<20 {
			return fmt.Errorf("%s: more than 64 MiB to save", root)
		}
		t.entries = append(t.entries, e)
		return nil
	}))
	return t
}

// restore puts the tree back as saveTree found it: the same files, modes
// and modification times (dshctl tells a log written moments ago by
// another program by its time).
func (t *savedTree) restore(ts *testscript.TestScript) {
	ts.Check(os.RemoveAll(t.root))
	for _, e := range t.entries {
		p := filepath.Join(t.root, e.rel)
		switch {
		case e.mode&fs.ModeSymlink != 0:
			ts.Check(os.Symlink(string(e.data), p))
			continue
		case e.mode.IsDir():
			ts.Check(os.Mkdir(p, e.mode.Perm()))
		default:
			ts.Check(os.WriteFile(p, e.data, e.mode.Perm()))
		}
	}
	// Times last: making an entry changes its folder's.
	for i := len(t.entries) - 1; i >= 0; i-- {
		if e := t.entries[i]; e.mode&fs.ModeSymlink == 0 {
			ts.Check(os.Chtimes(filepath.Join(t.root, e.rel), e.mtime, e.mtime))
		}
	}
}
