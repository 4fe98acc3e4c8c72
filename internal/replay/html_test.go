package replay

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/dshctl/dshctl/internal/reconcile"
)

// chromium returns a headless Chromium, installing Debian's package when
// it is missing and this test may (root, apt-get), or skips the test.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	apt, err := exec.LookPath("apt-get")
	if err != nil || os.Geteuid() != 0 {
		t.Skip("chromium is not installed and cannot be here (apt-get install -y chromium, as root)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, apt, "install", "-y", "-qq", "chromium")
	cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Skipf("chromium is not installed and apt-get install -y chromium failed: %v\n%s", err, out)
	}
	p, err := exec.LookPath("chromium")
	if err != nil {
		t.Skipf("chromium: %v", err)
	}
	return p
}

// artifacts is where tests keep what CI publishes: $DSHCTL_TEST_ARTIFACTS
// (.ci/run sets it to artifacts/ in the checkout), else a folder of the
// test's own.
func artifacts(t *testing.T) string {
	dir := os.Getenv("DSHCTL_TEST_ARTIFACTS")
	if dir == "" {
		dir = t.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestHTMLInChromium: the --html page of a run with failures and a file
// that cannot be read loads in a real headless Chromium, off line, and
// shows each failing trace's timeline with the violating record marked,
// the invariant in words, the states before and after, the message's fate
// and the command to reproduce it; a screenshot is kept
// ($DSHCTL_TEST_ARTIFACTS/replay-html.png).
func TestHTMLInChromium(t *testing.T) {
	browser := chromium(t)
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.har")
	writeFile(t, empty, "")
	files, err := Files([]string{filepath.Join(repo, "traces"), empty})
	if err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(dir, "replay.html")
	rep, err := Run(context.Background(), files, Options{Policy: reconcile.Legacy, HTML: page})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Failed == 0 || rep.Errors != 1 {
		t.Fatalf("want failures and one unreadable file: %+v", rep)
	}
	raw, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	// Self-contained: nothing is loaded from anywhere.
	if m := regexp.MustCompile(`(?i)<script|<link|<img|<iframe|@import|url\(|(src|href)="(https?:)?//`).Find(raw); m != nil {
		t.Fatalf("the page loads something: %s", m)
	}
	flags := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + filepath.Join(dir, "profile"), "--window-size=1280,1600"}
	run := func(args ...string) []byte {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		var out, errb bytes.Buffer
		cmd := exec.CommandContext(ctx, browser, append(append([]string{}, flags...), args...)...)
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			t.Fatalf("chromium %v: %v\n%s", args, err, errb.Bytes())
		}
		return out.Bytes()
	}
	url := "file://" + filepath.ToSlash(page)
	dom := string(run("--dump-dom", url))
	for _, want := range []string{
		`id="summary"`, "1 could not be read",
		`class="timeline"`, `<tr class="bad">`, // the violating record marked
		"Invariant 2 (no duplicate, no linger)", "Nothing shows twice",
		"What the user saw before", "What the user saw after", "user:hello",
		`cancelled message "c1" ("never mind") is still visible`, "): cancelled.",
		"dshctl replay --policy legacy ", "regress-2-message-queued-after-cancel.jsonl",
		"This file could not be read", "the file is empty",
	} {
		if !strings.Contains(dom, want) {
			t.Errorf("the rendered page lacks %q", want)
		}
	}
	shot := filepath.Join(artifacts(t), "replay-html.png")
	run("--screenshot="+shot, url)
	png, err := os.ReadFile(shot)
	if err != nil {
		t.Fatal(err)
	}
	if len(png) < 10<<10 || !bytes.HasPrefix(png, []byte("\x89PNG")) {
		t.Fatalf("screenshot %s: %d bytes, not a picture of the page", shot, len(png))
	}
	t.Logf("screenshot: %s", shot)
}
