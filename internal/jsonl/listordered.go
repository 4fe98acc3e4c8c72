package jsonl

import (
	"context"
	"os"

	"github.com/dshctl/dshctl/internal/seam"
)

var _ seam.OrderedLister = (*Store)(nil)

// ListOpenOrdered is ListOpen in an order the caller picks from the
// sessions' headers (seam.OrderedLister): a first pass reads the folders
// of the root and the first line (plain) or frame (zstd) of each live log;
// the second reads each session as ListOpen does, in that order, on the
// same worker pool. The folders of an id named in several project folders
// are read in full by the first pass and resolved as ListOpen resolves
// them.
func (s *Store) ListOpenOrdered(ctx context.Context, order func([]seam.Entry) []int, visit func(int, seam.Entry, seam.Handle, error)) error {
	if err := s.check(ctx, "list"); err != nil {
		return err
	}
	dirents, err := s.projectEntries()
	if err != nil {
		return err
	}
	type item struct {
		id    string     // the folder's id; "" when it names none
		dup   bool       // the id names folders in several project folders
		ok    bool       // a session (an entry List returns)
		final bool       // entry is what ListOpen visits: visit it as it is
		entry seam.Entry // until it moves to heads
	}
	items := make([]item, len(dirents))
	count := map[string]int{}
	for i, de := range dirents {
		if de.err == nil && de.e.IsDir() {
			if id, err := DecodeSegment(de.e.Name()); err == nil {
				items[i].id = id
				count[id]++
			}
		}
	}
	if err := forEachEntry(ctx, len(items), func(i int) {
		it := &items[i]
		if it.dup = it.id != "" && count[it.id] > 1; it.dup {
			it.entry, it.ok = s.listEntry(ctx, dirents[i])
			it.final = true
			return
		}
		it.entry, it.ok = s.headEntry(ctx, dirents[i])
	}); err != nil {
		return err
	}
	// The folders of ids named more than once, as ListOpen reports them.
	seen := map[string][]int{}
	for i := range items {
		if it := &items[i]; it.dup && it.ok {
			seen[it.id] = append(seen[it.id], i)
		}
	}
	for id, idx := range seen {
		if len(idx) == 1 {
			// Not a duplicate after all: read with a handle, unless it
			// cannot be read.
			items[idx[0]].final = items[idx[0]].entry.Err != nil
			continue
		}
		for _, i := range idx {
			items[i].entry.Err = duplicateIDError("list", id, items[i].entry.Snapshot.Location.Path, len(idx))
		}
	}
	var (
		at    []int // the index in items of each entry, len(items)+k for pending k
		heads []seam.Entry
	)
	for i := range items {
		if items[i].ok {
			at = append(at, i)
			heads = append(heads, items[i].entry)
		}
		items[i].entry = seam.Entry{} // heads holds it
	}
	pending := s.pendingHandles()
pend:
	for k, p := range pending {
		for i := range items {
			if items[i].ok && items[i].id == p.id {
				continue pend
			}
		}
		at = append(at, len(items)+k)
		heads = append(heads, seam.Entry{Snapshot: p.pendingSnapshot()})
	}
	perm := order(heads)
	if err := seam.CheckOrder(perm, len(heads)); err != nil {
		return err
	}
	return forEachEntry(ctx, len(perm), func(pos int) {
		v := func(e seam.Entry, h seam.Handle, err error) { visit(pos, e, h, err) }
		head := &heads[perm[pos]]
		i := at[perm[pos]]
		switch {
		case i >= len(items):
			h, err := s.Open(ctx, head.Snapshot.Header.ID, seam.Read)
			v(*head, h, err)
			if h != nil {
				h.Close()
			}
		case items[i].final:
			v(*head, nil, nil)
		case !s.visitEntry(ctx, dirents[i], v):
			// Gone since the first pass.
			v(*head, nil, seam.Errorf(seam.ErrNotFound, "list", head.Snapshot.Header.ID,
				seam.Pos{Path: head.Snapshot.Location.Path, Offset: -1, Frame: -1, Line: -1, Seq: -1}, "session removed while listing"))
		}
	})
}

// headEntry is listEntry reading no more of a session's log than its
// header; ok is false for entries that are not sessions.
func (s *Store) headEntry(ctx context.Context, de dirEntry) (seam.Entry, bool) {
	if de.err != nil || !de.e.IsDir() {
		return s.listEntry(ctx, de)
	}
	project, e := de.project, de.e
	id, derr := DecodeSegment(e.Name())
	d, err := s.inspect("list", id, project, e.Name())
	if err == nil && d.live < 0 || derr != nil || err != nil {
		return s.unreadFolderEntry(project, e, id, d, derr, err)
	}
	snap := seam.Snapshot{Header: seam.Header{ID: d.id}, Location: s.location(d)}
	l, err := s.openLog("list", d, os.O_RDONLY)
	if err != nil {
		return seam.Entry{Snapshot: snap, Err: err}, true
	}
	defer l.f.Close()
	fi, err := l.f.Stat()
	if err != nil {
		return seam.Entry{Snapshot: snap, Err: seam.Wrap(l.ioError(err, -1), seam.ErrIO, "list", d.id)}, true
	}
	dec, done := s.decs.once(ctx, l.lim.frame)
	defer done()
	hi, err := l.readHeader(fi.Size(), dec)
	if err == nil {
		err = s.checkProject(l, d, &hi.hdr)
	}
	if err != nil {
		return seam.Entry{Snapshot: snap, Err: seam.Wrap(err, seam.ErrIO, "list", d.id)}, true
	}
	snap.Header = hi.hdr
	return seam.Entry{Snapshot: snap}, true
}
