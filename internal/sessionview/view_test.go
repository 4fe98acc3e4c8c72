package sessionview

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dshctl/dshctl/internal/inspect"
	"github.com/dshctl/dshctl/internal/seam"
	"github.com/dshctl/dshctl/internal/termui"
	"github.com/dshctl/dshctl/internal/verify"
)

func word(err error) string { return err.Error() }

// TestJSONPresence: every field is present; what is unknown is null.
func TestJSONPresence(t *testing.T) {
	unreadable := inspect.Session{Snapshot: seam.Snapshot{Header: seam.Header{ID: "x"}, SizeBytes: 7,
		Location: seam.Location{Backend: "jsonl", Path: "/s/x/session.jsonl"}}, State: inspect.StateError, Err: errors.New("bad")}
	b, err := json.Marshal(NewJSON(&unreadable, word))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"project", "version", "createdAt", "createdAtMs", "updatedAt", "eventCount", "blank", "openTurn", "lastPromptAt"} {
		if v, ok := m[k]; !ok || v != nil {
			t.Errorf("%s = %v (present %v), want null", k, v, ok)
		}
	}
	if m["error"] != "bad" || m["state"] != "error" || m["sizeBytes"] != float64(7) {
		t.Errorf("error, state, size: %s", b)
	}
	if gens, ok := m["location"].(map[string]any)["olderGenerations"].([]any); !ok || len(gens) != 0 {
		t.Errorf("olderGenerations is %v, want []", m["location"])
	}
}

func TestAddRows(t *testing.T) {
	s := inspect.Session{Snapshot: seam.Snapshot{Header: seam.Header{ID: "session-4f1c2a9e", Cwd: "/w", CreatedAt: 1785331618000,
		ParentSession: "p1", Origin: "subagent"}, EventCount: 3, SizeBytes: 2048,
		Location: seam.Location{Encoding: "zstd", Generation: 4}}, HeaderKnown: true, MetaKnown: true, State: inspect.StateDone}
	s.Meta.UpdatedAt = 1785331620765
	now := time.UnixMilli(1785331620765).Add(3 * time.Hour)
	var plain, human bytes.Buffer
	tp := termui.NewTable(&plain, false, 0, Columns...)
	AddRows(tp, []*inspect.Session{&s}, now)
	tp.Render()
	want := "session-4f1c2a9e\t/w\t2026-07-29T13:26:58.000Z\t2026-07-29T13:27:00.765Z\t3\t2048\tdone\tsubagent\tp1\t4\tzstd\n"
	if plain.String() != want {
		t.Errorf("plain row\n%q\nwant\n%q", plain.String(), want)
	}
	th := termui.NewTable(&human, true, 200, Columns...)
	if names := AddRows(th, []*inspect.Session{&s}, now); names[0] != "session-4f1" && !strings.HasPrefix("session-4f1c2a9e", names[0]) {
		t.Errorf("short name %q", names[0])
	}
	th.Render()
	if !strings.Contains(human.String(), "3h ago") || !strings.Contains(human.String(), "2.0 KiB") || !strings.Contains(human.String(), "subagent of p1") {
		t.Errorf("table for people:\n%s", human.String())
	}
}

// TestListFitsTheTerminal: list's table for people is never wider than
// the terminal at 60, 80 or 100 columns (review-spec 7): the project and
// parent are cut, then the format, parent and creation time left out.
func TestListFitsTheTerminal(t *testing.T) {
	now := time.UnixMilli(1785331620765).Add(120 * 24 * time.Hour)
	var rows []*inspect.Session
	for _, id := range []string{"session-5d6e7f80-9102-4a3b-8c4d-5e6f70819203", "session-6e7f8091-0213-4b4c-9d5e-6f7081920314"} {
		parent := ""
		if id[8] == '6' {
			parent = "session-5d6e7f80-9102-4a3b-8c4d-5e6f70819203"
		}
		s := inspect.Session{Snapshot: seam.Snapshot{Header: seam.Header{ID: id,
			Cwd: "/home/dev/projects/demo-app", CreatedAt: 1785331618000, ParentSession: parent}, EventCount: 113, SizeBytes: 108464,
			Location: seam.Location{Encoding: "zstd", Generation: 0}}, HeaderKnown: true, MetaKnown: true, State: inspect.StateDone}
		s.Meta.UpdatedAt = 1785331620765
		rows = append(rows, &s)
	}
	for _, c := range []struct {
		width int
		gone  []string
	}{{100, nil}, {80, []string{"FORMAT"}}, {60, []string{"FORMAT", "PARENT", "CREATED"}}} {
		var b bytes.Buffer
		tb := termui.NewTable(&b, true, c.width, Columns...)
		AddRows(tb, rows, now)
		if err := tb.Render(); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
		for _, l := range lines {
			if n := len([]rune(l)); n > c.width {
				t.Errorf("COLUMNS=%d: a line of %d columns:\n%s", c.width, n, b.String())
				break
			}
		}
		for _, col := range Columns {
			if gone := slices.Contains(c.gone, col); strings.Contains(lines[0], col) == gone {
				t.Errorf("COLUMNS=%d: column %s shown %v:\n%s", c.width, col, !gone, b.String())
			}
		}
	}
}

// TestVerifyJSONCounts: the counts of a log verify could not check are
// null (not known), and those of a checked log whose repair failed are
// kept, zero included.
func TestVerifyJSONCounts(t *testing.T) {
	checked := verify.LogState{Frames: 3, Lines: 20, Bytes: 4096, Events: 19, LastSeq: 18}
	for _, c := range []struct {
		name string
		r    verify.SessionReport
		want string
	}{
		{"not found", verify.SessionReport{ID: "x", Status: verify.StatusFailed, Err: errors.New("not found"), State: verify.LogState{LastSeq: -1}},
			`"eventCount":null,"lastSeq":null,"sizeBytes":null,"frames":null,"lines":null,`},
		{"repair failed", verify.SessionReport{ID: "x", Status: verify.StatusFailed, Err: errors.New("busy"), NotRepaired: true, State: checked},
			`"eventCount":19,"lastSeq":18,"sizeBytes":4096,"frames":3,"lines":20,`},
		{"clean and empty", verify.SessionReport{ID: "x", Status: verify.StatusClean, State: verify.LogState{Lines: 1, Bytes: 100, LastSeq: -1}},
			`"eventCount":0,"lastSeq":null,"sizeBytes":100,"frames":0,"lines":1,`},
	} {
		b, err := json.Marshal(NewVerifyJSON(&c.r))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), c.want) {
			t.Errorf("%s: %s\nwant %s", c.name, b, c.want)
		}
	}
}
