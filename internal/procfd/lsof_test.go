//go:build darwin || linux

package procfd

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"
)

// findLsof returns the lsof to test with, skipping the test without one.
func findLsof(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"/usr/sbin/lsof", "/usr/bin/lsof"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	p, err := exec.LookPath("lsof")
	if err != nil {
		t.Skip("no lsof")
	}
	return p
}

// TestLsofWriters runs the lsof implementation (macOS's Writers) against
// real processes: one holding the file for writing (O_APPEND) and one for
// reading and writing are found and named, one holding it only to read is
// not, nor is one holding another file, nor another run of exe.
func TestLsofWriters(t *testing.T) {
	lsof := findLsof(t)
	if testing.Short() {
		t.Skip("copies the test binary")
	}
	dir := t.TempDir()
	log, db, read, ours := filepath.Join(dir, "log"), filepath.Join(dir, "db"), filepath.Join(dir, "read"), filepath.Join(dir, "ours")
	for _, p := range []string{log, db, read, ours} {
		if err := os.WriteFile(p, []byte("x\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	other := copyOfTest(t)
	writer := hold(t, other, "w", log)
	hold(t, other, "r", read)
	hold(t, os.Args[0], "w", ours)
	rdwr := exec.Command("sh", "-c", "exec 5<>"+db+"; echo ready; exec sleep 30")
	out, err := rdwr.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := rdwr.Start(); err != nil {
		t.Skipf("no sh: %v", err)
	}
	t.Cleanup(func() { rdwr.Process.Kill(); rdwr.Wait() })
	if _, err := out.Read(make([]byte, 6)); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	hs, err := lsofWriters(ctx, lsof, os.Args[0], log, filepath.Join(dir, "missing"))
	want := []Holder{{PID: writer.Process.Pid, Command: "holder", Path: log}}
	if err != nil || !reflect.DeepEqual(hs, want) {
		t.Fatalf("lsofWriters(log): %+v, %v; want %+v", hs, err, want)
	}
	hs, err = lsofWriters(ctx, lsof, os.Args[0], read, db)
	want = []Holder{{PID: rdwr.Process.Pid, Command: "sleep", Path: db}}
	if err != nil || !reflect.DeepEqual(hs, want) {
		t.Errorf("lsofWriters(read, db): %+v, %v; want %+v (only the read-write holder of db)", hs, err, want)
	}
	if hs, err := lsofWriters(ctx, lsof, os.Args[0], ours); err != nil || len(hs) != 0 {
		t.Errorf("lsofWriters of a file another run of exe holds: %+v, %v; want none", hs, err)
	}
	if hs, err := lsofWriters(ctx, lsof, "", ours); err != nil || len(hs) != 1 {
		t.Errorf("lsofWriters with no exe to leave out: %+v, %v; want its holder", hs, err)
	}
	if hs, err := lsofWriters(ctx, lsof, os.Args[0], filepath.Join(dir, "missing")); err != nil || len(hs) != 0 {
		t.Errorf("lsofWriters of a missing file: %+v, %v", hs, err)
	}
}

// TestLsofFails checks that an lsof that is missing, fails, or says too
// much leaves Writers unable to tell, and that a cancelled context is
// reported as such.
func TestLsofFails(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "log")
	if err := os.WriteFile(log, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	script := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ctx := context.Background()
	for _, c := range []struct {
		name, lsof string
		wantErr    bool
	}{
		{"missing", filepath.Join(dir, "no-lsof"), true},
		{"exit 2", script("exit2", "exit 2"), true},
		{"exit 1 with an error", script("err1", "echo 'lsof: status error' >&2; exit 1"), true},
		{"too much output", script("loud", "yes p1 | head -c 2000000"), true},
		{"exit 1, nothing open", script("none", "exit 1"), false},
		{"a writer", script("one", "printf 'p4242\\ncnode\\nf7\\naw\\nn%s\\n' \"$8\""), false},
	} {
		hs, err := lsofWriters(ctx, c.lsof, "", log)
		if c.wantErr {
			if !errors.Is(err, ErrCannotTell) {
				t.Errorf("%s: %+v, %v; want ErrCannotTell", c.name, hs, err)
			}
		} else if err != nil {
			t.Errorf("%s: %v", c.name, err)
		} else if c.name == "a writer" && (len(hs) != 1 || hs[0] != (Holder{PID: 4242, Command: "node", Path: log})) {
			t.Errorf("%s: %+v", c.name, hs)
		}
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := lsofWriters(cctx, script("slow", "sleep 5"), "", log); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v, want context.Canceled", err)
	}
}

func TestParseLsof(t *testing.T) {
	for _, c := range []struct {
		name, out string
		want      []lsofFile
	}{
		{"empty", "", nil},
		{"one process, two files",
			"p12\ncnode\nf3\naw\ni99\nn/s/log\nftxt\na \ni5\nn/usr/bin/node\n",
			[]lsofFile{{PID: 12, Command: "node", FD: "3", Access: 'w', Inode: 99, HasInode: true, Name: "/s/log"},
				{PID: 12, Command: "node", FD: "txt", Access: ' ', Inode: 5, HasInode: true, Name: "/usr/bin/node"}}},
		{"two processes",
			"p1\nca\nf4\nau\np2\ncb\nf5\nar\n",
			[]lsofFile{{PID: 1, Command: "a", FD: "4", Access: 'u'}, {PID: 2, Command: "b", FD: "5", Access: 'r'}}},
		{"command with spaces and lsof's escapes",
			"p7\nca b\\nc\\td^[[31m\nf4\naw\n",
			[]lsofFile{{PID: 7, Command: `a b\nc\td^[[31m`, FD: "4", Access: 'w'}}},
		{"raw control bytes and invalid UTF-8 in the command",
			"p7\nca\x1b[31m\xffb\r\nf4\naw\n",
			[]lsofFile{{PID: 7, Command: "a?[31m?b?", FD: "4", Access: 'w'}}},
		{"missing access, inode and name", "p8\ncx\nf4\n", []lsofFile{{PID: 8, Command: "x", FD: "4"}}},
		{"missing command", "p8\nf4\naw\n", []lsofFile{{PID: 8, FD: "4", Access: 'w'}}},
		{"file before any process", "f4\naw\np9\nf5\naw\n", []lsofFile{{PID: 9, FD: "5", Access: 'w'}}},
		{"bad pids", "pX\nf4\naw\np-3\nf5\naw\np0\nf6\naw\np99999999999999999999\nf7\naw\n", nil},
		{"bad access and inode", "p3\nf4\naww\ni-1\n", []lsofFile{{PID: 3, FD: "4"}}},
		{"no trailing newline, blank lines, CRLF-free unknown fields", "p3\n\nL root\nf4\nt REG\naw", []lsofFile{{PID: 3, FD: "4", Access: 'w'}}},
		{"command after a file keeps the first", "p3\ncgood\nf4\ncbad\naw\n", []lsofFile{{PID: 3, Command: "good", FD: "4", Access: 'w'}}},
	} {
		if got := parseLsof([]byte(c.out)); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}

// FuzzParseLsof feeds the parser arbitrary output (it decodes another
// program's bytes): it must not panic, and what it returns must be whole.
func FuzzParseLsof(f *testing.F) {
	f.Add([]byte("p12\ncnode\nf3\naw\ni99\nn/s/log\n"))
	f.Add([]byte("p1\nca b\\n\nf4\nau\np2\nf5\n"))
	f.Add([]byte("f4\npX\ni\nn\n"))
	f.Fuzz(func(t *testing.T, out []byte) {
		for _, file := range parseLsof(out) {
			if file.PID <= 0 {
				t.Fatalf("pid %d", file.PID)
			}
			if p := printable(file.Command); p != file.Command {
				t.Fatalf("command %q not printable", file.Command)
			}
		}
	})
}
