package seam

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestVocabulary(t *testing.T) {
	v0 := Vocabulary(0)
	if len(v0) != 48 {
		t.Fatalf("v0 knows %d types, want 48", len(v0))
	}
	if !slices.Equal(Vocabulary(1), v0) {
		t.Fatal("v1 vocabulary differs from v0")
	}
	v4Added := strings.Fields(`tool/ptc-dispatch tool/ptc-dispatch-start assistant/attempt developer/message
		deliverables/presented feedback/message-delete feedback/message-put image/offload model/selection
		session-log-deepseek/delivery-accepted subagent/catalog subagent/model-selection-policy workspace/changes`)
	for _, c := range []struct {
		v              int
		removed, added []string
	}{
		{2, []string{"assistant/chunk"}, nil},
		{3, nil, []string{"system/message"}},
		{4, []string{"tool/code-dispatch", "tool/code-dispatch-start"}, v4Added},
	} {
		prev, cur := Vocabulary(c.v-1), Vocabulary(c.v)
		var removed, added []string
		for _, typ := range prev {
			if !slices.Contains(cur, typ) {
				removed = append(removed, typ)
			}
		}
		for _, typ := range cur {
			if !slices.Contains(prev, typ) {
				added = append(added, typ)
			}
		}
		slices.Sort(c.removed)
		slices.Sort(c.added)
		if !slices.Equal(removed, c.removed) || !slices.Equal(added, c.added) {
			t.Errorf("v%d: removed %v, added %v; want removed %v, added %v", c.v, removed, added, c.removed, c.added)
		}
		for _, typ := range cur {
			if !KnownType(c.v, typ) {
				t.Errorf("KnownType(%d, %q) = false", c.v, typ)
			}
		}
	}
	if !slices.IsSorted(Vocabulary(4)) {
		t.Error("Vocabulary is not sorted")
	}
	for _, v := range []int{-1, MaxVersion + 1} {
		if Vocabulary(v) != nil || KnownType(v, "turn/start") {
			t.Errorf("version %d has a vocabulary", v)
		}
	}
}

func TestIsSurfaceType(t *testing.T) {
	for _, c := range []struct {
		typ  string
		from int // first version where it is a surface event; -1 never
	}{
		{"user/message", 0}, {"assistant/message", 0}, {"tool/result", 0},
		{"system/message", 3}, {"developer/message", -1}, {"tool/call", -1},
	} {
		for v := 0; v <= MaxVersion; v++ {
			if got, want := IsSurfaceType(v, c.typ), c.from >= 0 && v >= c.from; got != want {
				t.Errorf("IsSurfaceType(%d, %q) = %v", v, c.typ, got)
			}
		}
	}
}

func TestCheckVocabulary(t *testing.T) {
	for _, c := range []struct {
		v    int
		e    Event
		kind error
	}{
		{0, Event{Type: "tool/code-dispatch"}, nil},
		{4, Event{Type: "tool/code-dispatch"}, ErrUnsupportedFormat},
		{4, Event{Type: "tool/ptc-dispatch"}, nil},
		{2, Event{Type: "system/message"}, ErrUnsupportedFormat},
		{3, Event{Type: "system/message"}, nil},
		{4, Event{Type: "roleplay/opened", Seq: 3}, ErrUnsupportedFormat},
		{4, Event{Type: "roleplay/opened", Ignorable: true}, nil},
	} {
		err := CheckVocabulary(&c.e, c.v)
		if c.kind == nil && err != nil || c.kind != nil && !errors.Is(err, c.kind) {
			t.Errorf("CheckVocabulary(v%d, %q): %v, want %v", c.v, c.e.Type, err, c.kind)
		}
	}
	err := CheckVocabulary(&Event{Type: "roleplay/opened", Seq: 3}, 4)
	var e *Error
	if !errors.As(err, &e) || e.Pos.Seq != 3 || !strings.Contains(err.Error(), `"roleplay/opened"`) {
		t.Fatalf("CheckVocabulary: %v does not name the type and seq", err)
	}
}
