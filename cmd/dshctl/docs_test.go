package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// TestMakeDemoPrintsWhatRuns: every command make demo shows can be copied
// and run as it is, and prints what the demo showed (issue 14 item 13).
func TestMakeDemoPrintsWhatRuns(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("needs make")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "dshctl")
	cmd := exec.Command("make", "-s", "demo", "BIN="+bin)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("make demo: %v", err)
	}
	blocks := regexp.MustCompile(`(?m)^\$ `).Split(string(out), -1)
	if strings.TrimSpace(blocks[0]) != "" || len(blocks) < 4 {
		t.Fatalf("make demo printed no commands:\n%s", out)
	}
	for _, b := range blocks[1:] {
		line, shown, _ := strings.Cut(b, "\n")
		shown = strings.TrimSuffix(shown, "\n") // the blank line after each command
		run := exec.Command("sh", "-c", line)
		run.Dir = root
		run.Env = cmd.Env
		got, err := run.Output()
		if err != nil {
			t.Errorf("%s: %v", line, err)
			continue
		}
		if string(got) != shown {
			t.Errorf("%s printed\n%s\nbut make demo showed\n%s", line, got, shown)
		}
	}
}

// TestHelpCitesNoFilesUsersLack: help texts stand on their own; the spec
// pages, docs and test data of the source tree are not shipped to users
// (issue 14 item 14).
func TestHelpCitesNoFilesUsersLack(t *testing.T) {
	root := newRootCmd(newEnv(), &globals{})
	spec := regexp.MustCompile(`\b(replay|store|seam|cli)\.md\b|shared/spec|testdata/|docs/`)
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		texts := []string{c.Short, c.Long, c.Example}
		c.Flags().VisitAll(func(f *pflag.Flag) { texts = append(texts, f.Usage) })
		for _, s := range texts {
			if m := spec.FindString(s); m != "" {
				t.Errorf("%s: help cites %s", c.CommandPath(), m)
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	var help bytes.Buffer
	root.SetOut(&help)
	root.SetArgs([]string{"--help"})
	if err := root.Execute(); err != nil || !strings.Contains(help.String(), "completion") || !strings.Contains(help.String(), "version") {
		t.Errorf("root help lacks completion or version: %v\n%s", err, help.String())
	}
}

// TestMakeBuildStampsVersion: make build stamps the commit it was built
// from, which dshctl --version names even when Go records no VCS
// information (GOFLAGS=-buildvcs=false) (issue 23).
func TestMakeBuildStampsVersion(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("needs make")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	head, err := exec.Command("git", "-C", root, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skip("needs a git checkout")
	}
	bin := filepath.Join(t.TempDir(), "dshctl")
	cmd := exec.Command("make", "-s", "build", "BIN="+bin)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOFLAGS=-buildvcs=false")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "version", "-o", "json").Output()
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Version      string
		Commit       *string
		CommitTime   *string
		CommitTimeMs *int64
		Modified     *bool
	}
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatal(err)
	}
	want := strings.TrimSpace(string(head))
	if v.Commit == nil || *v.Commit != want || v.CommitTime == nil || !strings.HasSuffix(*v.CommitTime, ".000Z") || v.CommitTimeMs == nil || v.Modified == nil {
		t.Errorf("make build's dshctl version -o json:\n%s\nwant commit %s and its time", out, want)
	}
	// The version is git's description of the checkout, or without a tag
	// the pseudo-version Go gives it: never "(devel)".
	wantVersion := `^v0\.0\.0-\d{14}-` + want[:12] + `(\+dirty)?$`
	if desc, err := exec.Command("git", "-C", root, "describe", "--tags", "--dirty").Output(); err == nil {
		wantVersion = "^" + regexp.QuoteMeta(strings.TrimSpace(string(desc))) + "$"
	}
	if !regexp.MustCompile(wantVersion).MatchString(v.Version) {
		t.Errorf("make build's version %q, want %s", v.Version, wantVersion)
	}
	if v.CommitTime != nil && strings.HasPrefix(v.Version, "v0.0.0-") {
		stamp := strings.NewReplacer("-", "", "T", "", ":", "").Replace((*v.CommitTime)[:19])
		if v.Version[len("v0.0.0-"):][:14] != stamp {
			t.Errorf("pseudo-version %q, want the commit time %s in it", v.Version, stamp)
		}
	}
	line, err := exec.Command(bin, "--version").Output()
	if err != nil || !strings.Contains(string(line), "(commit "+want[:12]) {
		t.Errorf("dshctl --version = %q (%v), want commit %s", line, err, want[:12])
	}
	// make man's pages name the same version.
	man := t.TempDir()
	cmd = exec.Command("make", "-s", "man", "MANDIR="+man)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOFLAGS=-buildvcs=false")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make man: %v\n%s", err, out)
	}
	page, err := os.ReadFile(filepath.Join(man, "dshctl-list.1"))
	if err != nil || !strings.Contains(string(page), `"dshctl `+v.Version+`" "dshctl manual"`) {
		t.Errorf("make man's dshctl-list.1 does not name version %s (%v):\n%.300s", v.Version, err, page)
	}
}
