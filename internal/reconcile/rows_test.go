package reconcile

import (
	"slices"
	"testing"
)

// TestRowSetTurns: a turn's rows are found wherever they stand, also when
// rows of another turn come between them (a late row, a reordered answer).
func TestRowSetTurns(t *testing.T) {
	user := func(turn, text string) Chunk {
		return Chunk{TurnID: turn, Role: RoleUser, Type: "text", text: text}
	}
	tool := func(turn, text string) Chunk {
		return Chunk{TurnID: turn, Role: RoleAssistant, Type: "tool_result", text: text}
	}
	rows := newRowSet([]Chunk{
		user("t1", "a"), tool("t1", "out a"),
		user("t2", "b"), tool("t2", "out b"),
		user("t1", "a"), tool("t1", "out a"), // t1 again, after t2
		user("t3", "c"),
	})
	tests := []struct {
		turn, text string
		users      int
		tools      int
		content    bool
	}{
		{"t1", "a", 2, 2, true}, // a tool result contains the text
		{"t1", "out a", 0, 2, true},
		{"t2", "b", 1, 1, true},
		{"t2", "a", 0, 0, true},
		{"t3", "c", 1, 0, false},
		{"t4", "c", 0, 0, false},
		{"", "a", 0, 0, false},
	}
	for _, tt := range tests {
		if got := rows.userCount(tt.turn, tt.text); got != tt.users {
			t.Errorf("userCount(%q, %q) = %d, want %d", tt.turn, tt.text, got, tt.users)
		}
		if got := rows.toolCount(tt.turn, tt.text); got != tt.tools {
			t.Errorf("toolCount(%q, %q) = %d, want %d", tt.turn, tt.text, got, tt.tools)
		}
		if got := rows.hasContent(tt.turn); got != tt.content {
			t.Errorf("hasContent(%q) = %v, want %v", tt.turn, got, tt.content)
		}
	}
	if got, want := rows.turnList(), []string{"t1", "t2", "t3"}; !slices.Equal(got, want) {
		t.Errorf("turnList() = %q, want %q", got, want)
	}
	var none *rowSet
	if none.userCount("t1", "a") != 0 || emptyRows.hasContent("t1") {
		t.Error("an empty set has rows")
	}
}
