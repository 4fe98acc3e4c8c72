package seam

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshctl/dshctl/internal/fixture"
)

func TestParseHeader(t *testing.T) {
	const v0 = `"type":"session","version":0,"id":"s1","createdAt":1785331618000,"delegationDepth":0`
	const v4 = `"type":"session","version":4,"id":"s1","createdAt":1785331618000,"isSeeded":false,"delegationDepth":0`
	for _, c := range []struct {
		name string
		line string
		kind error // nil: valid
	}{
		{"v0_minimal", `{` + v0 + `}`, nil},
		{"v0_all_fields", `{` + v0 + `,"cwd":"relative/ok","parentSession":"p","seedLength":19,"origin":"subagent","agentPreset":"explore"}`, nil},
		{"v0_unknown_key_tolerated", `{` + v0 + `,"title":"x"}`, nil},
		{"v0_retired_sandboxMode", `{` + v0 + `,"sandboxMode":"workspace-write"}`, ErrCorrupt},
		{"v0_retired_approvalPolicy", `{` + v0 + `,"approvalPolicy":"never"}`, ErrCorrupt},
		{"v0_negative_seedLength", `{` + v0 + `,"seedLength":-1}`, ErrCorrupt},
		{"v0_missing_delegationDepth", `{"type":"session","version":0,"id":"s1","createdAt":1}`, ErrCorrupt},
		{"v1", `{"type":"session","version":1,"id":"s1","createdAt":1,"delegationDepth":0}`, nil},
		{"v2", `{"type":"session","version":2,"id":"s1","createdAt":1,"isSeeded":true,"delegationDepth":1}`, nil},
		{"v2_missing_isSeeded", `{"type":"session","version":2,"id":"s1","createdAt":1,"delegationDepth":0}`, ErrCorrupt},
		{"v2_isSeeded_not_bool", `{"type":"session","version":2,"id":"s1","createdAt":1,"isSeeded":1,"delegationDepth":0}`, ErrCorrupt},
		{"v2_isSeeded_string", `{"type":"session","version":2,"id":"s1","createdAt":1,"isSeeded":"true","delegationDepth":0}`, ErrCorrupt},
		{"v2_seedLength_rejected", `{"type":"session","version":2,"id":"s1","createdAt":1,"isSeeded":false,"seedLength":0,"delegationDepth":0}`, ErrCorrupt},
		{"v3_unknown_key", `{"type":"session","version":3,"id":"s1","createdAt":1,"isSeeded":false,"delegationDepth":0,"title":"x"}`, ErrCorrupt},
		{"v4_minimal", `{` + v4 + `}`, nil},
		{"v4_all_fields", `{` + v4 + `,"cwd":"/dsh/workspace","parentSession":"p","origin":"subagent","agentPreset":"standard"}`, nil},
		{"v4_windows_cwd", `{` + v4 + `,"cwd":"C:\\Users\\me"}`, nil},
		{"v4_unc_cwd", `{` + v4 + `,"cwd":"\\\\server\\share"}`, nil},
		{"v4_relative_cwd", `{` + v4 + `,"cwd":"dsh/workspace"}`, ErrCorrupt},
		{"v4_drive_relative_cwd", `{` + v4 + `,"cwd":"C:dir"}`, ErrCorrupt},
		{"v3_relative_cwd", `{"type":"session","version":3,"id":"s1","createdAt":1,"isSeeded":false,"delegationDepth":0,"cwd":"rel"}`, nil},
		{"empty_cwd", `{` + v0 + `,"cwd":""}`, ErrCorrupt},
		{"null_optional", `{` + v0 + `,"cwd":null}`, ErrCorrupt},
		{"origin_other", `{` + v0 + `,"origin":"fork"}`, ErrCorrupt},
		{"createdAt_zero", `{"type":"session","version":0,"id":"s1","createdAt":0,"delegationDepth":0}`, nil},
		{"createdAt_negative", `{"type":"session","version":0,"id":"s1","createdAt":-1,"delegationDepth":0}`, ErrCorrupt},
		{"createdAt_negative_zero", `{"type":"session","version":0,"id":"s1","createdAt":-0,"delegationDepth":0}`, ErrCorrupt},
		{"createdAt_negative_zero_float", `{"type":"session","version":0,"id":"s1","createdAt":-0.0,"delegationDepth":0}`, ErrCorrupt},
		{"createdAt_max_safe", `{"type":"session","version":0,"id":"s1","createdAt":9007199254740991,"delegationDepth":0}`, nil},
		{"createdAt_unsafe", `{"type":"session","version":0,"id":"s1","createdAt":9007199254740992,"delegationDepth":0}`, ErrCorrupt},
		{"createdAt_fraction", `{"type":"session","version":0,"id":"s1","createdAt":1.5,"delegationDepth":0}`, ErrCorrupt},
		{"createdAt_exponent", `{"type":"session","version":0,"id":"s1","createdAt":1.7e12,"delegationDepth":0}`, nil},
		{"createdAt_string", `{"type":"session","version":0,"id":"s1","createdAt":"1","delegationDepth":0}`, ErrCorrupt},
		{"delegationDepth_negative", `{"type":"session","version":0,"id":"s1","createdAt":1,"delegationDepth":-1}`, ErrCorrupt},
		{"empty_id", `{"type":"session","version":0,"id":"","createdAt":1,"delegationDepth":0}`, ErrCorrupt},
		{"id_not_string", `{"type":"session","version":0,"id":7,"createdAt":1,"delegationDepth":0}`, ErrCorrupt},
		{"version_negative", `{"type":"session","version":-1,"id":"s1","createdAt":1,"delegationDepth":0}`, ErrCorrupt},
		{"version_missing", `{"type":"session","id":"s1","createdAt":1,"delegationDepth":0}`, ErrCorrupt},
		{"version_5", `{"type":"session","version":5,"id":"s1","createdAt":1,"isSeeded":false,"delegationDepth":0}`, ErrUnsupportedFormat},
		// The version is judged before the shape: a newer dsh may change it.
		{"version_9_bad_shape", `{"type":"session","version":9,"brandNew":{}}`, ErrUnsupportedFormat},
		{"type_event", `{"type":"turn/start","version":0,"id":"s1","createdAt":1,"delegationDepth":0}`, ErrCorrupt},
		{"type_missing", `{"version":0,"id":"s1","createdAt":1,"delegationDepth":0}`, ErrCorrupt},
		{"not_object", `["session"]`, ErrCorrupt},
		{"not_json", `{"type":"session",`, ErrCorrupt},
		{"empty", ``, ErrCorrupt},
	} {
		t.Run(c.name, func(t *testing.T) {
			h, err := ParseHeader([]byte(c.line))
			if c.kind == nil {
				if err != nil {
					t.Fatalf("ParseHeader: %v", err)
				}
				// A valid header survives a write and a read.
				again, err := ParseHeader(h.AppendJSON(nil))
				if err != nil || !bytes.Equal(again.AppendJSON(nil), h.AppendJSON(nil)) {
					t.Fatalf("re-encoded %s: %+v, %v", h.AppendJSON(nil), again, err)
				}
				return
			}
			if !errors.Is(err, c.kind) {
				t.Fatalf("ParseHeader: %v, want %v", err, c.kind)
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("ParseHeader: %T is not *Error", err)
			}
		})
	}
}

func TestParseHeaderFields(t *testing.T) {
	h, err := ParseHeader([]byte(`{"type":"session","version":0,"id":"f","createdAt":5,"cwd":"/a","parentSession":"p","seedLength":19,"origin":"subagent","delegationDepth":2,"agentPreset":"explore"}`))
	if err != nil {
		t.Fatal(err)
	}
	if h.Version != 0 || h.ID != "f" || h.CreatedAt != 5 || h.Cwd != "/a" || h.ParentSession != "p" ||
		h.SeedLength == nil || *h.SeedLength != 19 || h.IsSeeded != nil || h.Origin != "subagent" ||
		h.DelegationDepth != 2 || h.AgentPreset != "explore" || !h.Seeded() {
		t.Fatalf("ParseHeader: %+v", h)
	}
	h, err = ParseHeader([]byte(`{"type":"session","version":3,"id":"g","createdAt":5,"isSeeded":true,"delegationDepth":0}`))
	if err != nil || h.IsSeeded == nil || !*h.IsSeeded || h.SeedLength != nil || !h.Seeded() {
		t.Fatalf("ParseHeader: %+v, %v", h, err)
	}
}

func TestParseHeaderUnsupportedMessage(t *testing.T) {
	_, err := ParseHeader([]byte(`{"type":"session","version":7}`))
	if err == nil || !strings.Contains(err.Error(), "written by a newer dsh") || !strings.Contains(err.Error(), "v7") {
		t.Fatalf("ParseHeader: %v", err)
	}
}

// TestHeaderAppendJSONMatchesDsh re-encodes every header dsh wrote in the
// fixtures and expects dsh's own bytes: same keys, same order.
func TestHeaderAppendJSONMatchesDsh(t *testing.T) {
	fixtures := fixture.Dir(t)
	files, _ := filepath.Glob(filepath.Join(fixtures, "dsh-0.1.0/expected/jsonl-none/*.raw.jsonl"))
	more, _ := filepath.Glob(filepath.Join(fixtures, "dsh-v2-v4/*/*/session.v*.jsonl"))
	files = append(files, more...)
	if len(files) < 15 {
		t.Fatalf("found %d fixture logs under %s", len(files), fixtures)
	}
	for _, f := range files {
		line := firstLine(t, f)
		h, err := ParseHeader(line)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if got := h.AppendJSON(nil); !bytes.Equal(got, line) {
			t.Errorf("%s:\n got %s\nwant %s", f, got, line)
		}
		if got, err := json.Marshal(h); err != nil || !bytes.Equal(got, line) {
			t.Errorf("%s: json.Marshal: %s, %v", f, got, err)
		}
		if err := ValidateHeader(h, h.ID); err != nil {
			t.Errorf("%s: ValidateHeader: %v", f, err)
		}
	}
}

func firstLine(t *testing.T, path string) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	line, err := bufio.NewReader(f).ReadBytes('\n')
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return bytes.TrimSuffix(line, []byte("\n"))
}

func TestValidateHeader(t *testing.T) {
	seed := int64(3)
	yes := true
	for _, c := range []struct {
		name string
		h    Header
		want string
		kind error
	}{
		{"v0", Header{Version: 0, ID: "a", CreatedAt: 1}, "a", nil},
		{"v4", Header{Version: 4, ID: "a", CreatedAt: 1, IsSeeded: &yes, Cwd: "/x"}, "", nil},
		{"id_mismatch", Header{Version: 0, ID: "a", CreatedAt: 1}, "b", ErrInvalid},
		{"v4_no_isSeeded", Header{Version: 4, ID: "a", CreatedAt: 1}, "", ErrInvalid},
		{"v4_seedLength", Header{Version: 4, ID: "a", CreatedAt: 1, IsSeeded: &yes, SeedLength: &seed}, "", ErrInvalid},
		{"v0_isSeeded", Header{Version: 0, ID: "a", CreatedAt: 1, IsSeeded: &yes}, "", ErrInvalid},
		{"v4_relative_cwd", Header{Version: 4, ID: "a", CreatedAt: 1, IsSeeded: &yes, Cwd: "x"}, "", ErrInvalid},
		{"bad_origin", Header{Version: 0, ID: "a", CreatedAt: 1, Origin: "fork"}, "", ErrInvalid},
		{"negative_createdAt", Header{Version: 0, ID: "a", CreatedAt: -5}, "", ErrInvalid},
		{"empty_id", Header{Version: 0, CreatedAt: 1}, "", ErrInvalid},
		{"newer", Header{Version: 5, ID: "a", CreatedAt: 1, IsSeeded: &yes}, "", ErrUnsupportedFormat},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := ValidateHeader(c.h, c.want)
			if c.kind == nil && err != nil || c.kind != nil && !errors.Is(err, c.kind) {
				t.Fatalf("ValidateHeader: %v, want %v", err, c.kind)
			}
			if c.kind == ErrInvalid && errors.Is(err, ErrCorrupt) {
				t.Fatalf("ValidateHeader: %v is also ErrCorrupt", err)
			}
		})
	}
}

func TestClassifyVersion(t *testing.T) {
	for v, want := range map[int64]VersionSupport{-1: VersionInvalid, 0: VersionOlder, 3: VersionOlder, 4: VersionCurrent, 5: VersionNewer, 1 << 40: VersionNewer} {
		if got := ClassifyVersion(v); got != want {
			t.Errorf("ClassifyVersion(%d) = %d, want %d", v, got, want)
		}
	}
}

func FuzzParseHeader(f *testing.F) {
	for _, s := range []string{
		`{"type":"session","version":0,"id":"s","createdAt":1,"delegationDepth":0,"seedLength":2}`,
		`{"type":"session","version":4,"id":"s","createdAt":1,"isSeeded":false,"delegationDepth":0,"cwd":"/a","origin":"subagent"}`,
		`{"type":"session","version":9}`,
		`{"type":"session","version":0,"id":"s","createdAt":-0,"delegationDepth":0}`,
		`{"type":"session","version":2,"id":"\ud83d\ude80","createdAt":1e3,"isSeeded":true,"delegationDepth":0}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		h, err := ParseHeader(line)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || !(errors.Is(err, ErrCorrupt) || errors.Is(err, ErrUnsupportedFormat)) {
				t.Fatalf("ParseHeader: %v is not a corrupt or unsupported *Error", err)
			}
			return
		}
		enc := h.AppendJSON(nil)
		again, err := ParseHeader(enc)
		if err != nil {
			t.Fatalf("re-parse of %s: %v", enc, err)
		}
		if !bytes.Equal(again.AppendJSON(nil), enc) {
			t.Fatalf("header changed on a round trip: %s then %s", enc, again.AppendJSON(nil))
		}
		if err := ValidateHeader(h, h.ID); err != nil {
			t.Fatalf("ValidateHeader of a parsed header %s: %v", enc, err)
		}
	})
}

func TestNewHeader(t *testing.T) {
	yes := true
	for _, c := range []struct {
		in     Header
		seeded *bool
		depth  int64
	}{
		{Header{Version: 4}, new(bool), 0},
		{Header{Version: 2, IsSeeded: &yes}, &yes, 0},
		{Header{Version: 0}, nil, 0},
		{Header{Version: 4, Origin: "subagent"}, new(bool), 1},
		{Header{Version: 0, Origin: "subagent", DelegationDepth: 3}, nil, 3},
	} {
		c.in.ID, c.in.CreatedAt = "a", 1
		got := NewHeader(c.in)
		if (got.IsSeeded == nil) != (c.seeded == nil) || got.IsSeeded != nil && *got.IsSeeded != *c.seeded || got.DelegationDepth != c.depth {
			t.Errorf("NewHeader(%+v) = %+v", c.in, got)
		}
		if err := ValidateHeader(got, "a"); err != nil {
			t.Errorf("NewHeader(%+v) does not validate: %v", c.in, err)
		}
	}
}
