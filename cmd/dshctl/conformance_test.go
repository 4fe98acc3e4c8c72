package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"
)

// runCLI runs one dshctl invocation in-process.
func runCLI(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	e := &env{
		stdin:  strings.NewReader(""),
		stdout: &out,
		stderr: &errb,
		getenv: func(k string) string {
			if k == "HOME" {
				return t.TempDir()
			}
			return ""
		},
		now: time.Now,
	}
	code = run(args, e)
	return out.String(), errb.String(), code
}

// sessionIDs lists the session ids of a fixture store from its expected
// events files.
func fixtureSessions(t *testing.T, expected string) []string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(expected, "*.events.jsonl"))
	if err != nil || len(names) == 0 {
		t.Fatalf("no expected events in %s: %v", expected, err)
	}
	var ids []string
	for _, n := range names {
		ids = append(ids, strings.TrimSuffix(filepath.Base(n), ".events.jsonl"))
	}
	return ids
}

func jsonValues(t *testing.T, text string) []any {
	t.Helper()
	var out []any
	for i, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		if line == "" && i == 0 {
			break
		}
		var v any
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			t.Fatalf("line %d is not JSON: %v: %.200s", i+1, err, line)
		}
		out = append(out, v)
	}
	return out
}

func readOptional(t *testing.T, path string) string {
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

var unsafeID = regexp.MustCompile(`[^A-Za-z0-9_-]`)

// TestFixtureConformance checks the CLI against what dsh's own reader
// returned for every session it wrote: cat's events, cat --closers, cat
// --raw byte for byte, and the eventCount of stat and list.
func TestFixtureConformance(t *testing.T) {
	fixtures := sharedFixtures(t)
	for _, store := range []string{"jsonl-zstd", "jsonl-none"} {
		root := filepath.Join(fixtures, "dsh-0.1.0", store)
		expected := filepath.Join(fixtures, "dsh-0.1.0", "expected", store)
		// The ids come from the store's list so that ids with escaped
		// characters are named exactly.
		out, stderr, code := runCLI(t, "--store", root, "list", "--all", "-o", "jsonl")
		if code != 0 {
			t.Fatalf("list %s: exit %d: %s", store, code, stderr)
		}
		var ids []string
		listed := map[string]int{}
		for _, v := range jsonValues(t, out) {
			item := v.(map[string]any)
			id := item["id"].(string)
			ids = append(ids, id)
			listed[id] = int(item["eventCount"].(float64))
		}
		if want := len(fixtureSessions(t, expected)); len(ids) != want {
			t.Fatalf("list %s: %d sessions, want %d", store, len(ids), want)
		}
		for _, id := range ids {
			file := unsafeID.ReplaceAllString(id, "_")
			t.Run(store+"/"+file, func(t *testing.T) {
				wantEvents := readOptional(t, filepath.Join(expected, file+".events.jsonl"))
				out, stderr, code := runCLI(t, "--store", root, "cat", id)
				if code != 0 {
					t.Fatalf("cat: exit %d: %s", code, stderr)
				}
				header, body, _ := strings.Cut(out, "\n")
				var h map[string]any
				if err := json.Unmarshal([]byte(header), &h); err != nil || h["type"] != "session" || h["id"] != id {
					t.Fatalf("cat: first line is not the header of %q: %.200s", id, header)
				}
				got, want := jsonValues(t, body), jsonValues(t, wantEvents)
				if len(got) != len(want) {
					t.Fatalf("cat: %d events, want %d", len(got), len(want))
				}
				for i := range got {
					if !reflect.DeepEqual(got[i], want[i]) {
						t.Fatalf("cat: event %d differs:\n got %s\nwant %s", i, mustJSON(got[i]), mustJSON(want[i]))
					}
				}

				out, stderr, code = runCLI(t, "--store", root, "cat", "--closers", id)
				if code != 0 {
					t.Fatalf("cat --closers: exit %d: %s", code, stderr)
				}
				_, body, _ = strings.Cut(out, "\n")
				closers := jsonValues(t, body)[len(want):]
				wantClosers := jsonValues(t, readOptional(t, filepath.Join(expected, file+".closers.jsonl")))
				if !reflect.DeepEqual(closers, wantClosers) && (len(closers) > 0 || len(wantClosers) > 0) {
					t.Fatalf("cat --closers added %s\nwant %s", mustJSON(closers), mustJSON(wantClosers))
				}

				out, stderr, code = runCLI(t, "--store", root, "cat", "--raw", id)
				if code != 0 {
					t.Fatalf("cat --raw: exit %d: %s", code, stderr)
				}
				if raw := readOptional(t, filepath.Join(expected, file+".raw.jsonl")); out != raw {
					t.Fatalf("cat --raw differs from %s.raw.jsonl (%d vs %d bytes)", file, len(out), len(raw))
				}

				out, stderr, code = runCLI(t, "--store", root, "stat", "-o", "json", id)
				if code != 0 {
					t.Fatalf("stat: exit %d: %s", code, stderr)
				}
				var st struct{ EventCount int }
				if err := json.Unmarshal([]byte(out), &st); err != nil {
					t.Fatal(err)
				}
				if st.EventCount != len(want) {
					t.Fatalf("stat eventCount %d, want %d", st.EventCount, len(want))
				}
				if listed[id] != len(want) {
					t.Fatalf("list eventCount %d, want %d", listed[id], len(want))
				}
			})
		}
	}
}
