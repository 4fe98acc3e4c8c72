package inspect

import (
	"context"
	"reflect"
	"testing"
)

func TestExactStats(t *testing.T) {
	events := fixtureEvents(t, "session-4f1c2a9e-8b3d-4e6f-a1c2-7d9e0b1f2a3c")
	s, err := ExactStats(context.Background(), newFake(0, 0, events...))
	if err != nil {
		t.Fatal(err)
	}
	want := Stats{
		Events: 113,
		ByType: map[string]int64{"turn/start": 3, "step/start": 5, "user/message": 3, "session/title": 1,
			"request/header": 2, "request/context": 2, "assistant/chunk": 79, "assistant/message": 5,
			"tool/call": 2, "tool/result": 2, "step/end": 5, "turn/end": 3, "todo/write": 1},
		Turns:        3,
		TurnEnds:     map[string]int64{"completed": 2, "aborted": 1},
		FirstTime:    1785331618512,
		LastTime:     1785331621082,
		LastPromptAt: 1785331620765,
	}
	if !reflect.DeepEqual(s, want) {
		t.Errorf("stats =\n%+v\nwant\n%+v", s, want)
	}

	s, err = ExactStats(context.Background(), newFake(0, 0, fixtureEvents(t, openTailID)...))
	if err != nil {
		t.Fatal(err)
	}
	if s.OpenTurn == nil || s.OpenTurn.Turn != 2 || s.Events != 39 || s.Turns != 2 {
		t.Errorf("open-tail stats = %+v", s)
	}

	s, err = ExactStats(context.Background(), newFake(0, 0))
	if err != nil || s.Events != 0 || s.FirstTime != 0 || s.OpenTurn != nil {
		t.Errorf("empty stats = %+v, %v", s, err)
	}
}

func TestExactStatsError(t *testing.T) {
	h := newFake(0, 0, fixtureEvents(t, openTailID)...)
	h.FailAt = 10
	s, err := ExactStats(context.Background(), h)
	if err == nil || s.Events != 10 {
		t.Errorf("stats = %+v, err %v; want the 10 events before the failure and an error", s, err)
	}
}
