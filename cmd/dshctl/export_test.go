package main

import (
	"archive/zip"
	"bytes"
	"context"
	"io"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dshctl/dshctl/internal/export"
	"github.com/dshctl/dshctl/internal/termui"
	"github.com/rogpeppe/go-internal/testscript"
)

// readZipEntries reads every entry of a ZIP in the work directory, checking
// each one's CRC.
func readZipEntries(ts *testscript.TestScript, name string) ([]string, map[string][]byte) {
	zr, err := zip.OpenReader(ts.MkAbs(name))
	ts.Check(err)
	defer zr.Close()
	var names []string
	files := map[string][]byte{}
	for _, f := range zr.File {
		rc, err := f.Open()
		ts.Check(err)
		b, err := io.ReadAll(rc)
		ts.Check(err)
		names = append(names, f.Name)
		files[f.Name] = b
	}
	return names, files
}

// cmdZipNames checks the entries of a ZIP, in order:
//
//	zipnames out.zip session.jsonl subagents/x/session.jsonl
func cmdZipNames(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 {
		ts.Fatalf("usage: zipnames ZIP NAME...")
	}
	names, _ := readZipEntries(ts, args[0])
	if !slices.Equal(names, args[1:]) {
		ts.Fatalf("%s holds %q, want %q", args[0], names, args[1:])
	}
}

// cmdUnzipEntry writes one entry of a ZIP to a file; with -body, without
// its first line (an exported log's header):
//
//	unzipentry -body out.zip session.jsonl events.jsonl
func cmdUnzipEntry(ts *testscript.TestScript, neg bool, args []string) {
	body := len(args) > 0 && args[0] == "-body"
	if body {
		args = args[1:]
	}
	if neg || len(args) != 3 {
		ts.Fatalf("usage: unzipentry [-body] ZIP NAME FILE")
	}
	_, files := readZipEntries(ts, args[0])
	b, ok := files[args[1]]
	if !ok {
		ts.Fatalf("%s has no entry %s", args[0], args[1])
	}
	if body {
		_, b, _ = bytes.Cut(b, []byte("\n"))
	}
	ts.Check(os.WriteFile(ts.MkAbs(args[2]), b, 0o644))
}

// TestExportTerminal: a ZIP is not written to a terminal unless --force
// says so; the summary for people is a sentence per ZIP.
func TestExportTerminal(t *testing.T) {
	store := sharedFixtures(t) + "/dsh-0.1.0/jsonl-none"
	var out, errb bytes.Buffer
	e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(string) string { return "" }, now: time.Now,
		stdoutTTY: true, stderrTTY: true, width: 400}
	if code := run([]string{"--store", store, "export", "-O", "-", "session-4f1c"}, e); code != termui.ExitError || out.Len() > 0 {
		t.Fatalf("export to a terminal: exit %d, %d bytes out", code, out.Len())
	}
	if !strings.Contains(errb.String(), "refusing to write a ZIP to a terminal") {
		t.Fatalf("stderr: %s", errb.String())
	}
	out.Reset()
	if code := run([]string{"--store", store, "export", "--force", "-O", "-", "session-4f1c"}, e); code != termui.ExitOK || !bytes.HasPrefix(out.Bytes(), []byte("PK\x03\x04")) {
		t.Fatalf("--force: exit %d, %q…", code, out.Bytes()[:min(out.Len(), 8)])
	}

	dir := t.TempDir()
	out.Reset()
	if code := run([]string{"--store", store, "export", "-O", dir + "/", "session-4f1c"}, e); code != termui.ExitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	file := dir + "/" + export.FileName("session-4f1c2a9e-8b3d-4e6f-a1c2-7d9e0b1f2a3c")
	want := "session:    session-4f1c2a9e-8b3d-4e6f-a1c2-7d9e0b1f2a3c\n" +
		"file:       " + file + "\n" +
		"events:     133\n" +
		"subagents:  1\n" +
		"size:       106.0 KiB (108545 bytes)\n"
	if out.String() != want {
		t.Fatalf("summary\n%s\nwant\n%s", out.String(), want)
	}

	// Several ZIPs: a table.
	out.Reset()
	if code := run([]string{"--store", store, "export", "--force", "-O", dir, "session-4f1c", "session-7a2b"}, e); code != termui.ExitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 3 || !strings.HasPrefix(strings.TrimSpace(lines[0]), "SESSION") ||
		!strings.Contains(lines[1], file) || !strings.Contains(lines[2], "39") {
		t.Fatalf("table\n%s", out.String())
	}
}

// TestExportInterrupted: an export stopped by a signal (the context of the
// command) leaves no file.
func TestExportInterrupted(t *testing.T) {
	store := sharedFixtures(t) + "/dsh-0.1.0/jsonl-zstd"
	dir := t.TempDir()
	var out, errb bytes.Buffer
	e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(string) string { return "" }, now: time.Now}
	g := &globals{}
	cmd := newRootCmd(e, g)
	cmd.SetArgs([]string{"--store", store, "export", "-O", dir + "/x.zip", "session-4f1c"})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := cmd.ExecuteContext(ctx); err == nil || err.Error() != "export interrupted" {
		t.Fatalf("got %v, want the export interrupted", err)
	}
	if names, _ := os.ReadDir(dir); len(names) != 0 {
		t.Fatalf("an interrupted export left %v", names)
	}

	// Several sessions: the interruption is said once.
	errb.Reset()
	cmd = newRootCmd(e, &globals{})
	cmd.SetArgs([]string{"--store", store, "export", "--all", "-O", dir})
	err := cmd.ExecuteContext(ctx)
	if err == nil || !strings.HasPrefix(err.Error(), "export interrupted") || errb.Len() > 0 {
		t.Fatalf("got %v; stderr %q", err, errb.String())
	}
	if names, _ := os.ReadDir(dir); len(names) != 0 {
		t.Fatalf("an interrupted export left %v", names)
	}
}

// TestExportProgress: on a terminal, a long export shows a bar on stderr;
// the ZIP and the summary are the same as without it.
func TestExportProgress(t *testing.T) {
	store := sharedFixtures(t) + "/dsh-0.1.0/jsonl-zstd"
	clock := time.Unix(1785331618, 0)
	var out, errb bytes.Buffer
	e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(string) string { return "" },
		stderrTTY: true, now: func() time.Time { clock = clock.Add(2 * time.Second); return clock }}
	path := t.TempDir() + "/x.zip"
	if code := run([]string{"--store", store, "export", "-O", path, "session-4f1c"}, e); code != termui.ExitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if !strings.Contains(errb.String(), "exporting events") || !strings.Contains(errb.String(), "/133)") {
		t.Fatalf("no progress bar on stderr: %q", errb.String())
	}
	if !strings.HasPrefix(out.String(), "session-4f1c2a9e-8b3d-4e6f-a1c2-7d9e0b1f2a3c\t"+path+"\t133\t1\t") {
		t.Fatalf("stdout %q", out.String())
	}
}
