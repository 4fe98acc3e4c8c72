package reconcile

import (
	"bytes"
	"hash/maphash"
	"slices"
	"strings"
)

// rowSet is one answer of the chunk endpoint: at most a window of 100 rows,
// whose user and tool_result rows carry their text, worked out once when
// they were decoded or written. The policies and the checker scan it; it
// never changes after it is made and is shared by every replay of a record.
type rowSet struct {
	list  []Chunk
	turns []string // the turns of list, in row order
	// spans[k]: every row of turns[k] is in list[spans[k].lo:spans[k].hi],
	// so that a look for a turn's rows reads that turn's, not all 100.
	spans []span
}

type span struct{ lo, hi int }

var emptyRows = &rowSet{}

func newRowSet(list []Chunk) *rowSet {
	if len(list) == 0 {
		return emptyRows
	}
	r := &rowSet{list: list}
	for i := range list {
		t, k := list[i].TurnID, len(r.turns)-1
		if k < 0 || r.turns[k] != t {
			if k = slices.Index(r.turns, t); k < 0 {
				r.turns, r.spans = append(r.turns, t), append(r.spans, span{i, i})
				k = len(r.turns) - 1
			}
		}
		r.spans[k].hi = i + 1
	}
	return r
}

// of returns the rows from the first of turn to its last: rows of other
// turns may stand between them.
func (r *rowSet) of(turn string) []Chunk {
	if r == nil {
		return nil
	}
	for k, t := range r.turns {
		if t == turn {
			return r.list[r.spans[k].lo:r.spans[k].hi]
		}
	}
	return nil
}

// rows returns the rows; a nil set (no answer applied yet) has none.
func (r *rowSet) rows() []Chunk {
	if r == nil {
		return nil
	}
	return r.list
}

// userCount counts the user rows of turn whose text, or one of its
// continuation parts, is text.
func (r *rowSet) userCount(turn, text string) int {
	n := 0
	for i, list := 0, r.of(turn); i < len(list); i++ {
		if c := &list[i]; c.TurnID == turn && c.Role == RoleUser && joinedHas(c.shown(), text) {
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
	for i, list := 0, r.of(turn); i < len(list); i++ {
		if c := &list[i]; c.TurnID == turn && c.Role == RoleUser && joinedHasAll(c.shown(), text) {
			return true
		}
	}
	return false
}

// toolCount counts the tool_result rows of turn that contain text.
func (r *rowSet) toolCount(turn, text string) int {
	if text == "" {
		return 0
	}
	n := 0
	for i, list := 0, r.of(turn); i < len(list); i++ {
		if c := &list[i]; c.TurnID == turn && c.Role != RoleUser && c.Type == "tool_result" && strings.Contains(c.shown(), text) {
			n++
		}
	}
	return n
}

func (r *rowSet) hasToolText(turn, text string) bool { return r.toolCount(turn, text) > 0 }

// hasContent reports whether turn has a row that is not a user row: the
// server writes a sealed turn's rows in one batch.
func (r *rowSet) hasContent(turn string) bool {
	for i, list := 0, r.of(turn); i < len(list); i++ {
		if c := &list[i]; c.TurnID == turn && c.Role != RoleUser {
			return true
		}
	}
	return false
}

// showsContent reports whether a row of turn that is not a user row shows text.
func (r *rowSet) showsContent(turn, text string) bool {
	if text == "" {
		return false
	}
	for i, list := 0, r.of(turn); i < len(list); i++ {
		if c := &list[i]; c.TurnID == turn && c.Role != RoleUser && strings.Contains(c.shown(), text) {
			return true
		}
	}
	return false
}

// startsInside reports whether the rows begin inside turn t, after its
// user row: what t wrote first is older than the window.
func (r *rowSet) startsInside(t string) bool {
	list := r.rows()
	return len(list) > 0 && list[0].TurnID == t && list[0].Role != RoleUser
}

// first returns the turn of the oldest row, or "".
func (r *rowSet) first() string {
	if list := r.rows(); len(list) > 0 {
		return list[0].TurnID
	}
	return ""
}

// turnList returns the turns of the rows, in row order.
func (r *rowSet) turnList() []string {
	if r == nil {
		return nil
	}
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

// rowCache remembers the rows a trace's chunk answers held, by their bytes:
// every answer is the last 100 rows, so most of them were in the answer
// before. A row seen before is neither checked nor decoded again, and its
// decoded form is shared. It holds each distinct row once.
type rowCache map[uint64]Chunk

var rowSeed = maphash.MakeSeed()

// known returns the decoded row whose bytes are el.
func (c rowCache) known(el []byte) (Chunk, bool) {
	if c == nil || len(el) == 0 || el[0] != '{' {
		return Chunk{}, false
	}
	row, ok := c[maphash.Bytes(rowSeed, el)]
	return row, ok && bytes.Equal(row.Raw, el)
}

// keep remembers a decoded row.
func (c rowCache) keep(row Chunk) {
	if c != nil && len(row.Raw) > 0 {
		c[maphash.Bytes(rowSeed, row.Raw)] = row
	}
}
