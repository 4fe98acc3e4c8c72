package sessionview

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/dshctl/dshctl/internal/inspect"
	"github.com/dshctl/dshctl/internal/seam"
	"github.com/dshctl/dshctl/internal/termui"
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
