package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/dshctl/dshctl/internal/fixture"
	"github.com/dshctl/dshctl/internal/jsonl/zstdframe"
	"github.com/rogpeppe/go-internal/testscript"
)

func TestMain(m *testing.M) {
	// The tests' logs are made moments before dshctl writes to them, which
	// would make every session look in use (see writeOptions); a test of
	// that check sets the variable itself.
	if _, ok := os.LookupEnv("DSHCTL_TEST_INUSE_WINDOW"); !ok {
		os.Setenv("DSHCTL_TEST_INUSE_WINDOW", "0s")
	}
	testscript.Main(m, map[string]func(){
		"dshctl": func() { os.Exit(run(os.Args[1:], newEnv())) },
		// dshctl-status runs dshctl and checks its exit code, which
		// testscript's exec cannot tell apart: dshctl-status 2 stat
		"dshctl-status": dshctlStatus,
		// holdlock takes the write lock of a session folder and keeps it
		// until killed, standing in for a running dsh.
		"holdlock": holdLock,
		// dshctl-measure runs a command and reports its peak memory and
		// CPU time, for the catalogue's bounded.
		"dshctl-measure": measureMain,
		// testpager stands in for less: PAGER=testpager shows what was
		// paged, after a "[paged]" line.
		"testpager": testPager,
	})
}

// sharedFixtures is the shared fixture tree (see package fixture).
func sharedFixtures(t *testing.T) string { return fixture.Dir(t) }

func TestScripts(t *testing.T) {
	// Scripts that need the fixtures start with [!fixtures] skip.
	fixtures, found := fixture.Lookup(t)
	params := testscript.Params{
		Dir: filepath.Join("..", "..", "testdata", "scripts"),
		Condition: func(cond string) (bool, error) {
			switch cond {
			case "fixtures":
				return found, nil
			case "root":
				return isRoot(), nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		Setup: func(e *testscript.Env) error {
			e.Setenv("FIXTURES", fixtures)
			e.Setenv("HOME", filepath.Join(e.WorkDir, "home"))
			e.Setenv("XDG_STATE_HOME", filepath.Join(e.WorkDir, "state"))
			e.Setenv("DSH_HOME", "")
			e.Setenv("DSHCTL_STORE", "")
			e.Setenv("NO_COLOR", "1")
			// The scripts' logs are made moments before they are written
			// to: a change that recent would make every session look in
			// use (running_beside_dsh.txtar sets it back).
			e.Setenv("DSHCTL_TEST_INUSE_WINDOW", "0s")
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"fixture":    cmdFixture,
			"cmpjsonl":   cmdCmpJSONL,
			"truncate":   cmdTruncate,
			"countline":  cmdCountLines,
			"jsonfield":  cmdJSONField,
			"waitfile":   cmdWaitFile,
			"waitline":   cmdWaitLine,
			"zstdify":    cmdZstdify,
			"zipnames":   cmdZipNames,
			"unzipentry": cmdUnzipEntry,
			"sqlexec":    cmdSQLExec,
			"patchbytes": cmdPatchBytes,
			"sqlwal":     cmdSQLWAL,
			"setbyte":    cmdSetByte,
		},
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
	}
	for name, cmd := range catalogueCmds() {
		params.Cmds[name] = cmd
	}
	testscript.Run(t, params)
}

// cmdFixture copies a file or tree from the shared fixtures into the work
// directory, writable, so scripts never touch the read-only originals:
//
//	fixture dsh-0.1.0/jsonl-zstd store
func cmdFixture(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: fixture SRC DST")
	}
	src := filepath.Join(ts.Getenv("FIXTURES"), args[0])
	dst := ts.MkAbs(args[1])
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
	ts.Check(err)
}

// cmdCmpJSONL compares two JSONL files line by line as JSON values, so key
// order does not matter:
//
//	cmpjsonl stdout $FIXTURES/…/id.events.jsonl
func cmdCmpJSONL(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: cmpjsonl FILE1 FILE2")
	}
	a, b := readJSONL(ts, args[0]), readJSONL(ts, args[1])
	equal := len(a) == len(b)
	first := -1
	for i := 0; i < min(len(a), len(b)); i++ {
		if !reflect.DeepEqual(a[i], b[i]) {
			equal = false
			first = i
			break
		}
	}
	switch {
	case neg && equal:
		ts.Fatalf("%s and %s are equal", args[0], args[1])
	case !neg && !equal && first >= 0:
		ts.Fatalf("line %d differs:\n%s\n%s", first+1, mustJSON(a[first]), mustJSON(b[first]))
	case !neg && !equal:
		ts.Fatalf("%s has %d lines, %s has %d", args[0], len(a), args[1], len(b))
	}
}

func readJSONL(ts *testscript.TestScript, name string) []any {
	var data []byte
	if name == "stdout" || name == "stderr" {
		data = []byte(ts.ReadFile(name))
	} else {
		var err error
		data, err = os.ReadFile(ts.MkAbs(name))
		ts.Check(err)
	}
	var out []any
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 64<<20)
	for n := 1; sc.Scan(); n++ {
		var v any
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			ts.Fatalf("%s line %d: %v", name, n, err)
		}
		out = append(out, v)
	}
	ts.Check(sc.Err())
	return out
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// cmdTruncate cuts a file: truncate FILE -N removes N bytes from the end,
// truncate FILE N keeps the first N bytes.
func cmdTruncate(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: truncate FILE [-]N")
	}
	name := ts.MkAbs(args[0])
	n, err := strconv.ParseInt(args[1], 10, 64)
	ts.Check(err)
	if n < 0 {
		fi, err := os.Stat(name)
		ts.Check(err)
		n += fi.Size()
	}
	ts.Check(os.Truncate(name, n))
}

// cmdCountLines checks the number of lines of a file or stdout:
//
//	countline stdout 42
func cmdCountLines(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: countline FILE N")
	}
	data := ts.ReadFile(args[0])
	want, err := strconv.Atoi(args[1])
	ts.Check(err)
	got := bytes.Count([]byte(data), []byte("\n"))
	if (got == want) == neg {
		ts.Fatalf("%s has %d lines, want %s%d", args[0], got, map[bool]string{true: "not ", false: ""}[neg], want)
	}
}

// cmdJSONField checks one top-level field of the JSON object on stdout:
//
//	jsonfield eventCount 113
func cmdJSONField(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: jsonfield KEY VALUE")
	}
	var obj map[string]any
	if err := json.Unmarshal([]byte(ts.ReadFile("stdout")), &obj); err != nil {
		ts.Fatalf("stdout is not a JSON object: %v", err)
	}
	got := fmt.Sprint(obj[args[0]])
	if (got == args[1]) == neg {
		ts.Fatalf("%s is %s, want %s", args[0], got, args[1])
	}
}

// waitFor is how long waitfile and waitline wait: only a process that
// hangs takes that long, however busy the machine.
const waitFor = time.Minute

// cmdWaitFile waits for a file to exist (a background process signalling
// that it is ready).
func cmdWaitFile(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: waitfile FILE")
	}
	name := ts.MkAbs(args[0])
	for deadline := time.Now().Add(waitFor); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(name); err == nil {
			return
		}
	}
	ts.Fatalf("%s did not appear in %v", args[0], waitFor)
}

// cmdWaitLine waits for a line of FILE to match REGEXP: a background
// command whose output goes to FILE has printed it. A script then acts
// on what the command did, not after a sleep a busy machine outlasts:
//
//	waitline follow.out '"seq":19,'
func cmdWaitLine(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: waitline FILE REGEXP")
	}
	re, err := regexp.Compile("(?m)" + args[1])
	ts.Check(err)
	name := ts.MkAbs(args[0])
	for deadline := time.Now().Add(waitFor); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if data, err := os.ReadFile(name); err == nil && re.Match(data) {
			return
		}
	}
	data, _ := os.ReadFile(name)
	ts.Fatalf("no line of %s matched %q in %v; it holds:\n%s", args[0], args[1], waitFor, data)
}

func dshctlStatus() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: dshctl-status CODE ARGS...")
		os.Exit(2)
	}
	want, err := strconv.Atoi(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if got := run(os.Args[2:], newEnv()); got != want {
		fmt.Fprintf(os.Stderr, "dshctl exited %d, want %d\n", got, want)
		os.Exit(1)
	}
}

// cmdZstdify writes the zstd form of a plain log the way dsh does: the
// header line alone in frame 0, then one frame per following line:
//
//	zstdify session.v3.jsonl session.v3.jsonl.zstd
func cmdZstdify(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 && len(args) != 3 {
		ts.Fatalf("usage: zstdify PLAIN ZSTD [LINE-WITHOUT-CHECKSUM]")
	}
	nocheck := -1
	if len(args) == 3 {
		n, err := strconv.Atoi(args[2])
		ts.Check(err)
		nocheck = n
	}
	var out []byte
	for i, line := range bytes.SplitAfter([]byte(ts.ReadFile(args[0])), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		frame := zstdframe.AppendFrame(nil, line)
		if i+1 == nocheck {
			// Drop the content checksum: clear its flag in the frame
			// header descriptor and cut its four bytes.
			frame[4] &^= 0x04
			frame = frame[:len(frame)-4]
		}
		out = append(out, frame...)
	}
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), out, 0o644))
}

// holdLock flocks DIR/session.lock, creates READY, and sleeps until killed:
//
//	exec holdlock DIR READY &
func holdLock() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: holdlock DIR READYFILE")
		os.Exit(2)
	}
	f, err := os.OpenFile(filepath.Join(os.Args[1], "session.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err == nil {
		err = lockFile(f)
	}
	if err == nil {
		err = os.WriteFile(os.Args[2], nil, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	time.Sleep(time.Hour)
}

// testPager copies its input to its output after a "[paged]" line.
func testPager() {
	fmt.Println("[paged]")
	if _, err := io.Copy(os.Stdout, os.Stdin); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
