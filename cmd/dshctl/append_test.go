package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshctl/dshctl/internal/fixture"
	"github.com/dshctl/dshctl/internal/jsonl/zstdframe"
)

const closedTurn = `{"type":"turn/start","time":1785400000000,"data":{"turn":99}}
{"type":"step/start","time":1785400000001,"data":{"turn":99,"step":1}}
{"type":"user/message","time":1785400000002,"data":{"id":"u99","role":"user","content":[{"type":"text","text":"one more"}],"source":{"kind":"user"}},"surfaceOp":"append"}
{"type":"step/end","time":1785400000003,"data":{"turn":99,"step":1}}
{"type":"turn/end","time":1785400000004,"data":{"turn":99,"reason":{"kind":"completed"}}}
`

// TestAppendFixtures appends a closed turn to a copy of every session dsh
// wrote and checks that the bytes before the append are unchanged, that the
// new bytes are exactly one new zstd frame or the new lines, and that the
// log reads back with the new events.
func TestAppendFixtures(t *testing.T) {
	for _, store := range []string{"jsonl-zstd", "jsonl-none"} {
		root := fixture.Copy(t, filepath.Join(sharedFixtures(t), "dsh-0.1.0", store))
		out, stderr, code := runCLI(t, "--store", root, "list", "--all", "-o", "jsonl")
		if code != 0 {
			t.Fatalf("list: %s", stderr)
		}
		for _, v := range jsonValues(t, out) {
			item := v.(map[string]any)
			id := item["id"].(string)
			path := item["location"].(map[string]any)["path"].(string)
			t.Run(store+"/"+unsafeID.ReplaceAllString(id, "_"), func(t *testing.T) {
				// A new turn starts after the open one is closed (append
				// holds a batch to verify's turn rules).
				if _, stderr, code := runCLI(t, "--store", root, "append", "--close-interrupted", id); code != 0 {
					t.Fatalf("append --close-interrupted: exit %d: %s", code, stderr)
				}
				before, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				input := filepath.Join(t.TempDir(), "turn.jsonl")
				if err := os.WriteFile(input, []byte(closedTurn), 0o644); err != nil {
					t.Fatal(err)
				}
				_, stderr, code := runCLI(t, "--store", root, "append", "--close-interrupted", "--assign-seq", id, input)
				if code != 0 {
					t.Fatalf("append: exit %d: %s", code, stderr)
				}
				after, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.HasPrefix(after, before) {
					t.Fatalf("committed bytes changed by the append")
				}
				added := after[len(before):]
				if store == "jsonl-zstd" {
					frames, torn, err := zstdframe.Walk(bytes.NewReader(added), int64(len(added)))
					if err != nil || torn.Size != 0 || len(frames) != 1 {
						t.Fatalf("appended bytes are %d frames (torn %d, err %v), want exactly 1", len(frames), torn.Size, err)
					}
				} else if n := bytes.Count(added, []byte("\n")); n < 5 || !bytes.HasSuffix(added, []byte("\n")) {
					t.Fatalf("appended %d lines, want the batch's lines", n)
				}
				out, stderr, code := runCLI(t, "--store", root, "cat", "--type", "turn/*", id)
				if code != 0 {
					t.Fatalf("cat after append: %s", stderr)
				}
				lines := strings.Split(strings.TrimSpace(out), "\n")
				var last map[string]any
				if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil {
					t.Fatal(err)
				}
				if last["type"] != "turn/end" || last["data"].(map[string]any)["turn"] != float64(99) {
					t.Fatalf("last event read back is %v, want the appended turn/end", last)
				}
			})
		}
	}
}
