package inspect

import (
	"context"
	"errors"
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
