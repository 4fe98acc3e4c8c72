package main

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/dshctl/dshctl/internal/fixture"
)

// TestListAndStatDescribeSessionsAlike: for every session of the fixture
// stores, stat -o json has every field of the list row, with the same
// value, and the same presence (issue 14 item 5); stat adds its own.
func TestListAndStatDescribeSessionsAlike(t *testing.T) {
	for _, store := range [][]string{{"dsh-0.1.0", "jsonl-zstd"}, {"dsh-0.1.0", "jsonl-none"}, {"dsh-v2-v4"}} {
		root := fixture.Path(t, store...)
		out, stderr, code := runCLI(t, "--store", root, "list", "--all", "-o", "jsonl")
		if code != 0 {
			t.Fatalf("list: %s", stderr)
		}
		var keys []string
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			var row map[string]any
			if err := json.Unmarshal([]byte(line), &row); err != nil {
				t.Fatal(err)
			}
			id := row["id"].(string)
			if keys == nil {
				for k := range row {
					keys = append(keys, k)
				}
				slices.Sort(keys)
			}
			statOut, stderr, _ := runCLI(t, "--store", root, "stat", "-o", "json", id)
			var st map[string]any
			if err := json.Unmarshal([]byte(statOut), &st); err != nil {
				t.Fatalf("stat %s: %v: %s", id, err, stderr)
			}
			for _, k := range keys {
				lv, lok := row[k]
				sv, sok := st[k]
				if !lok || !sok {
					t.Errorf("%s: field %q in list %v, in stat %v: every field is always present", id, k, lok, sok)
					continue
				}
				if !reflect.DeepEqual(lv, sv) && k != "error" {
					t.Errorf("%s: %s is %v in list, %v in stat", id, k, lv, sv)
				}
			}
			for _, k := range []string{"lockHeld", "inheritedEventCount", "exact"} {
				if _, ok := st[k]; !ok {
					t.Errorf("%s: stat has no %q", id, k)
				}
			}
			for _, k := range []string{"createdAt", "updatedAt", "lastPromptAt"} {
				if s, ok := st[k].(string); ok && (len(s) != len("2026-07-29T13:31:58.180Z") || !strings.HasSuffix(s, "Z")) {
					t.Errorf("%s: %s %q is not RFC 3339 UTC with three fraction digits", id, k, s)
				}
			}
		}
	}
}
