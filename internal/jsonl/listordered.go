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
	items, heads, err := s.headEntries(ctx, dirents)
	if err != nil {
		return err
	}
	at := compactHeads(items, &heads)
	for k, p := range pendingOnly(items, s.writers.PendingOwners()) {
		at = append(at, len(items)+k)
		heads = append(heads, seam.Entry{Snapshot: p.pendingSnapshot()})
	}
	perm := order(heads)
	if err := seam.CheckOrder(perm, len(heads)); err != nil {
		return err
	}
	refs := visitRefs(items, heads, at, perm)
	return forEachEntry(ctx, len(refs), func(pos int) {
		s.visitRef(ctx, dirents, len(items), &refs[pos], func(e seam.Entry, h seam.Handle, err error) { visit(pos, e, h, err) })
	})
}

// headEntries is the first pass of ListOpenOrdered: the entry of each of
// dirents from its log's header (in full, as ListOpen resolves them, for
// an id named in several project folders), by dirent.
func (s *Store) headEntries(ctx context.Context, dirents []dirEntry) ([]listItem, []seam.Entry, error) {
	items := listItems(dirents)
	heads := make([]seam.Entry, len(dirents))
	if err := forEachEntry(ctx, len(items), func(i int) {
		it := &items[i]
		if it.dup {
			heads[i], it.ok = s.listEntry(ctx, dirents[i])
			return
		}
		heads[i], it.ok = s.headEntry(ctx, dirents[i])
	}); err != nil {
		return nil, nil, err
	}
	resolveDuplicates(items, func(i int) *seam.Entry { return &heads[i] })
	return items, heads, nil
}

// compactHeads keeps in *heads the entries of the items that are sessions,
// in order, and returns the index in items of each.
func compactHeads(items []listItem, heads *[]seam.Entry) []int {
	var at []int
	n := 0
	for i := range items {
		if items[i].ok {
			at = append(at, i)
			(*heads)[n] = (*heads)[i]
			n++
		}
	}
	clear((*heads)[n:])
	*heads = (*heads)[:n]
	return at
}

// headRef is what a visit of ListOpenOrdered needs of its head, so that
// the headers are not held (one per session) until the end.
type headRef struct {
	i        int         // the index in items, or len(items)+k for pending k
	id, path string      // for a session gone since the first pass
	entry    *seam.Entry // a pending session's or one visited as it is
}

// visitRefs returns the refs of heads in the order perm gives; at is the
// index in items of each head.
func visitRefs(items []listItem, heads []seam.Entry, at, perm []int) []headRef {
	refs := make([]headRef, len(perm))
	for pos, j := range perm {
		hd := &heads[j]
		r := headRef{i: at[j], id: hd.Snapshot.Header.ID, path: hd.Snapshot.Location.Path}
		if r.i >= len(items) || items[r.i].final {
			e := *hd
			r.entry = &e
		}
		refs[pos] = r
	}
	return refs
}

// visitRef reads the session of r as ListOpen does and passes it to v;
// n is the number of items of the first pass.
func (s *Store) visitRef(ctx context.Context, dirents []dirEntry, n int, r *headRef, v func(seam.Entry, seam.Handle, error)) {
	switch {
	case r.i >= n:
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
			nil, seam.Errorf(seam.ErrNotFound, "list", r.id, seam.PathPos(r.path), "session removed while listing"))
	}
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
