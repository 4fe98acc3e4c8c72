package export

import (
	"cmp"
	"slices"

	"github.com/dshctl/dshctl/internal/seam"
)

// Descendants returns the ids of the sessions below root among entries
// (what seam.Service.List returned): the sessions whose parentSession is
// root, then theirs, recursively. The order is stable whatever order List
// used: depth first, each session followed by its own descendants, siblings
// by creation time, then id. Every session appears once and root never does,
// whatever cycles hostile headers form; an entry whose header could not be
// read names no parent and is left out, and a parent that is not in the
// store simply has no descendants to give.
func Descendants(entries []seam.Entry, root string) []string {
	return NewTree(entries).Descendants(root)
}

// Tree is the parent → children index of a store's sessions, built once
// for the descendants of any number of them.
type Tree struct {
	children map[string][]*seam.Header
}

// NewTree indexes entries (what seam.Service.List returned) by parent.
func NewTree(entries []seam.Entry) *Tree {
	children := map[string][]*seam.Header{}
	seen := map[string]bool{}
	for i := range entries {
		h := &entries[i].Snapshot.Header
		if h.ID == "" || h.ParentSession == "" || seen[h.ID] {
			continue
		}
		seen[h.ID] = true
		children[h.ParentSession] = append(children[h.ParentSession], h)
	}
	for _, kids := range children {
		slices.SortFunc(kids, func(a, b *seam.Header) int {
			return cmp.Or(cmp.Compare(a.CreatedAt, b.CreatedAt), cmp.Compare(a.ID, b.ID))
		})
	}
	return &Tree{children}
}

// Descendants is Descendants of the tree's entries.
func (t *Tree) Descendants(root string) []string {
	children := t.children
	var out []string
	visited := map[string]bool{root: true}
	// A stack of the sessions still to visit, the next one last: a deep
	// chain of sessions costs memory, never Go stack.
	stack := reversed(children[root])
	for len(stack) > 0 {
		h := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if visited[h.ID] {
			continue
		}
		visited[h.ID] = true
		out = append(out, h.ID)
		stack = append(stack, reversed(children[h.ID])...)
	}
	return out
}

func reversed(hs []*seam.Header) []*seam.Header {
	out := slices.Clone(hs)
	slices.Reverse(out)
	return out
}
