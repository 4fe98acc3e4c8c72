package reconcile

import (
	"strings"
	"sync"
)

// rowSet is one answer of the chunk endpoint, indexed by turn once, so that
// the policies and the checker ask "does turn T hold this text" without
// decoding or scanning rows again. It never changes after it is made; the
// index is built on first use and shared by every replay of the record.
type rowSet struct {
	list []Chunk

	once   sync.Once
	byTurn map[string]*turnRows
	turns  []string // the turns of list, in row order
}

// turnRows is what the rows of one turn show.
type turnRows struct {
	user    []string // texts of its user rows
	tool    []string // texts of its tool_result rows
	other   []int    // its other rows, by index: their text is only read for reports
	content bool     // it has a row that is not a user row: the turn is written
}

var emptyRows = &rowSet{}

func newRowSet(list []Chunk) *rowSet {
	if len(list) == 0 {
		return emptyRows
	}
	return &rowSet{list: list}
}

func (r *rowSet) index() {
	r.once.Do(func() {
		r.byTurn = make(map[string]*turnRows, 4)
		for i := range r.list {
			c := &r.list[i]
			tr := r.byTurn[c.TurnID]
			if tr == nil {
				tr = &turnRows{}
				r.byTurn[c.TurnID] = tr
				r.turns = append(r.turns, c.TurnID)
			}
			switch {
			case c.Role == RoleUser:
				tr.user = append(tr.user, c.shown())
			case c.Type == "tool_result":
				tr.tool = append(tr.tool, c.shown())
			default:
				tr.other = append(tr.other, i)
			}
			if c.Role != RoleUser {
				tr.content = true
			}
		}
	})
}

func (r *rowSet) turn(t string) *turnRows {
	if r == nil || len(r.list) == 0 {
		return nil
	}
	r.index()
	return r.byTurn[t]
}

// userCount counts the user rows of turn whose text, or one of its
// continuation parts, is text.
func (r *rowSet) userCount(turn, text string) int {
	tr := r.turn(turn)
	if tr == nil {
		return 0
	}
	n := 0
	for _, u := range tr.user {
		if joinedHas(u, text) {
			n++
		}
	}
	return n
}

func (r *rowSet) hasUserText(turn, text string) bool { return r.userCount(turn, text) > 0 }

// representsUser reports whether a user row of turn holds every
// continuation part of text: a live row joining several queued messages is
// represented by the turn's user row that joins them (and maybe more).
func (r *rowSet) representsUser(turn, text string) bool {
	tr := r.turn(turn)
	if tr == nil {
		return false
	}
	for _, u := range tr.user {
		if joinedHasAll(u, text) {
			return true
		}
	}
	return false
}

// toolCount counts the tool_result rows of turn that contain text.
func (r *rowSet) toolCount(turn, text string) int {
	tr := r.turn(turn)
	if tr == nil || text == "" {
		return 0
	}
	n := 0
	for _, s := range tr.tool {
		if strings.Contains(s, text) {
			n++
		}
	}
	return n
}

func (r *rowSet) hasToolText(turn, text string) bool { return r.toolCount(turn, text) > 0 }

// hasContent reports whether turn has a row that is not a user row: the
// server writes a sealed turn's rows in one batch.
func (r *rowSet) hasContent(turn string) bool {
	tr := r.turn(turn)
	return tr != nil && tr.content
}

// showsContent reports whether a row of turn that is not a user row shows text.
func (r *rowSet) showsContent(turn, text string) bool {
	tr := r.turn(turn)
	if tr == nil || text == "" {
		return false
	}
	for _, s := range tr.tool {
		if strings.Contains(s, text) {
			return true
		}
	}
	for _, i := range tr.other {
		if strings.Contains(r.list[i].shown(), text) {
			return true
		}
	}
	return false
}

// startsInside reports whether the rows begin inside turn t, after its
// user row: what t wrote first is older than the window.
func (r *rowSet) startsInside(t string) bool {
	return r != nil && len(r.list) > 0 && r.list[0].TurnID == t && r.list[0].Role != RoleUser
}

// first returns the turn of the oldest row, or "".
func (r *rowSet) first() string {
	if r == nil || len(r.list) == 0 {
		return ""
	}
	return r.list[0].TurnID
}

// turnList returns the turns of the rows, in row order.
func (r *rowSet) turnList() []string {
	if r == nil || len(r.list) == 0 {
		return nil
	}
	r.index()
	return r.turns
}

// joinedHasAll reports whether every continuation part of text is a part of joined.
func joinedHasAll(joined, text string) bool {
	if joinedHas(joined, text) {
		return true
	}
	if !strings.Contains(text, continuationSep) {
		return false
	}
	for _, part := range strings.Split(text, continuationSep) {
		if !joinedHas(joined, part) {
			return false
		}
	}
	return true
}

// joinedHas reports whether text is joined, or one of its continuation parts.
func joinedHas(joined, text string) bool {
	if joined == text {
		return true
	}
	if !strings.Contains(joined, continuationSep) {
		return false
	}
	for rest := joined; ; {
		part, after, found := strings.Cut(rest, continuationSep)
		if part == text {
			return true
		}
		if !found {
			return false
		}
		rest = after
	}
}
