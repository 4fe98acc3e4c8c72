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
		id    string // the folder's id; "" when it names none
		dup   bool   // the id names folders in several project folders
		ok    bool   // a session (an entry List returns)
		final bool   // heads' entry is what ListOpen visits: visit it as it is
	}
	items := make([]item, len(dirents))
	heads := make([]seam.Entry, len(dirents)) // by dirent, then compacted
	for i, id := range folderIDs(dirents) {
		items[i].id, items[i].dup = id.id, id.dup
	}
	if err := forEachEntry(ctx, len(items), func(i int) {
		it := &items[i]
		if it.dup {
			heads[i], it.ok = s.listEntry(ctx, dirents[i])
			it.final = true
			return
		}
		heads[i], it.ok = s.headEntry(ctx, dirents[i])
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
			items[idx[0]].final = heads[idx[0]].Err != nil
			continue
		}
		for _, i := range idx {
			heads[i].Err = duplicateIDError("list", id, heads[i].Snapshot.Location.Path, len(idx))
		}
	}
	var at []int // the index in items of each head, len(items)+k for pending k
	n := 0
	for i := range items {
		if items[i].ok {
			at = append(at, i)
			heads[n] = heads[i]
			n++
		}
	}
	clear(heads[n:])
	heads = heads[:n]
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
	// What the visits need of each head, in the order of the visits, so
	// that the headers are not held (one per session) until the end.
	type ref struct {
		i        int         // as in at
		id, path string      // for a session gone since the first pass
		entry    *seam.Entry // a pending session's or one visited as it is
	}
	refs := make([]ref, len(perm))
	for pos, j := range perm {
		hd := &heads[j]
		r := ref{i: at[j], id: hd.Snapshot.Header.ID, path: hd.Snapshot.Location.Path}
		if r.i >= len(items) || items[r.i].final {
			e := *hd
			r.entry = &e
		}
		refs[pos] = r
	}
	return forEachEntry(ctx, len(refs), func(pos int) {
		v := func(e seam.Entry, h seam.Handle, err error) { visit(pos, e, h, err) }
		r := &refs[pos]
		switch {
		case r.i >= len(items):
			h, err := s.Open(ctx, r.id, seam.Read)
			v(*r.entry, h, err)
			if h != nil {
				h.Close()
			}
		case r.entry != nil:
			v(*r.entry, nil, nil)
		case !s.visitEntry(ctx, dirents[r.i], v):
			// Gone since the first pass.
			v(seam.Entry{Snapshot: seam.Snapshot{Header: seam.Header{ID: r.id}, Location: seam.Location{Backend: "jsonl", Path: r.path}}},
				nil, seam.Errorf(seam.ErrNotFound, "list", r.id, seam.Pos{Path: r.path, Offset: -1, Frame: -1, Line: -1, Seq: -1}, "session removed while listing"))
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
