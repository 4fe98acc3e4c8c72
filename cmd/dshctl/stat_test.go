package main

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestStatExactSettlesApproximate: a session whose first turn lies beyond
// the scan budget is shown as approximate (and never as blank) by stat,
// and --exact settles it with a full scan.
func TestStatExactSettlesApproximate(t *testing.T) {
	root := filepath.Join(t.TempDir(), "store")
	events := filepath.Join(t.TempDir(), "events.jsonl")
	big := `{"type":"session/title","data":{"title":"` + incompressible(t, 400<<10) + `"}}`
	turn := `{"type":"turn/start","data":{"turn":1}}
{"type":"user/message","time":1785400000000,"data":{"id":"u1","role":"user","content":[{"type":"text","text":"hi"}],"source":{"kind":"user"}},"surfaceOp":"append"}
{"type":"title/padding","ignorable":true,"data":{"pad":"` + incompressible(t, 400<<10) + `"}}`
	if err := os.WriteFile(events, []byte(big+"\n"+turn+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := runCLI(t, "--store", root, "append", "--create", "--cwd", "/w", "--assign-seq", "far", events); code != 0 {
		t.Fatalf("append: %s", stderr)
	}
	var st struct {
		Blank              bool
		UpdatedApproximate bool
		LastPromptAtMs     *int64
	}
	for _, tc := range []struct {
		args        []string
		approximate bool
	}{
		{[]string{"stat", "-o", "json", "far"}, true},
		{[]string{"stat", "--exact", "-o", "json", "far"}, false},
	} {
		out, stderr, code := runCLI(t, append([]string{"--store", root}, tc.args...)...)
		if code != 0 {
			t.Fatalf("%v: %s", tc.args, stderr)
		}
		st.LastPromptAtMs = nil
		if err := json.Unmarshal([]byte(out), &st); err != nil {
			t.Fatal(err)
		}
		if st.Blank || st.UpdatedApproximate != tc.approximate {
			t.Errorf("%v: blank %v, approximate %v; want not blank, approximate %v", tc.args, st.Blank, st.UpdatedApproximate, tc.approximate)
		}
		if !tc.approximate && (st.LastPromptAtMs == nil || *st.LastPromptAtMs != 1785400000000) {
			t.Errorf("%v: lastPromptAtMs %v, want 1785400000000", tc.args, st.LastPromptAtMs)
		}
	}
}

// incompressible returns n bytes of base64 text that zstd cannot shrink
// much, so that the scan budget, counted in stored bytes, is reached.
func incompressible(t *testing.T, n int) string {
	b := make([]byte, n*3/4)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(b)
}
