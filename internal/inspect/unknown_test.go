package inspect

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/dshctl/dshctl/internal/seam"
)

// TestUnknownTypesCountedOnce: the head and the tail scans of a short log
// meet the same events; each unknown one is counted once.
func TestUnknownTypesCountedOnce(t *testing.T) {
	events := []seam.Event{
		ev(0, 1, "plugin/thing", `{}`),
		ev(1, 2, "turn/start", `{"turn":1}`),
		ev(2, 3, "turn/end", `{"turn":1,"reason":{"kind":"completed"}}`),
	}
	u := newUnknownTypes(4)
	if _, err := ReadMeta(context.Background(), u.watch(newFake(1, 4, events...)), MetaOptions{}); err != nil {
		t.Fatal(err)
	}
	err := u.err(seam.Snapshot{Header: seam.Header{ID: "s"}}, true)
	var ut *UnknownTypesError
	if !errors.As(err, &ut) || ut.Types["plugin/thing"] != 1 || ut.First != 0 || !ut.Partial || !errors.Is(err, seam.ErrUnsupportedFormat) {
		t.Fatalf("unknown types: %#v", err)
	}
	// Ignorable events and known types are no refusal.
	ignorable := ev(0, 1, "plugin/thing", `{}`)
	ignorable.Ignorable = true
	u = newUnknownTypes(4)
	if _, err := ReadMeta(context.Background(), u.watch(newFake(1, 4, ignorable, events[1], events[2])), MetaOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := u.err(seam.Snapshot{}, true); err != nil {
		t.Fatalf("an ignorable event refused: %v", err)
	}
}

// TestUnknownTypesRefusal: the refusal names the types, with counts only
// when the whole log was read, at the first such event.
func TestUnknownTypesRefusal(t *testing.T) {
	ut := &UnknownTypesError{ID: "s", Version: 4, Types: map[string]int64{"b/x": 2, "a/y": 1}, First: 7, Path: "/l"}
	if got := strings.Join(ut.Counted(), ", "); got != `"a/y" (1), "b/x" (2)` {
		t.Errorf("counted %s", got)
	}
	err := ut.Refusal("cat")
	want := `cat "s": unsupported session log: dsh refuses this log: event types "a/y" (1), "b/x" (2) are unknown to format v4 and not ignorable (a plugin's, or a newer dsh's) (seq 7, /l)`
	if !errors.Is(err, seam.ErrUnsupportedFormat) || err.Error() != want {
		t.Errorf("refusal\n%v\nwant\n%s", err, want)
	}
	one := &UnknownTypesError{ID: "s", Version: 0, Types: map[string]int64{"p/q": 5}, First: 0, Partial: true}
	if got := one.Refusal("read").Error(); !strings.Contains(got, `event type "p/q" is unknown to format v0`) {
		t.Errorf("partial refusal %s", got)
	}
}
