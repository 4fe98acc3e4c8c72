package jsonl

import (
	"context"
	"os"

	"github.com/dshctl/dshctl/internal/seam"
)

var _ seam.OpenLister = (*Store)(nil)

// ListOpen visits the entries List returns, each readable one with a read
// handle made from the same open of its log that read its head and tail
// (seam.OpenLister): the handle keeps that window and the decoded last
// frame for its first scans, while the log's revision holds (each scan
// checks it with one fstat, as any read handle does, for freshness). The
// entries are read on a small worker pool, which also runs visit; each
// handle is closed when visit returns.
//
// An id named by session folders in more than one project folder is a
// duplicate (List reports every copy with Err) unless only one of them is a
// session: such folders are read without a handle during the pass and
// visited after it, once the duplicates are known.
func (s *Store) ListOpen(ctx context.Context, found func(n int), visit func(seam.Entry, seam.Handle, error)) error {
	if err := s.check(ctx, "list"); err != nil {
		return err
	}
	dirents, err := s.projectEntries()
	if err != nil {
		return err
	}
	items := listItems(dirents)
	pending := s.writers.PendingOwners()
	if found != nil {
		found(len(items) + len(pending))
	}
	dups := make([]*seam.Entry, len(items)) // the entries of dup items, read in full
	if err := forEachEntry(ctx, len(items), func(i int) {
		it, de := &items[i], dirents[i]
		if it.dup {
			en, ok := s.listEntry(ctx, de)
			dups[i], it.ok = &en, ok
			return
		}
		it.ok = s.visitEntry(ctx, de, visit)
	}); err != nil {
		return err
	}
	resolveDuplicates(items, func(i int) *seam.Entry { return dups[i] })
	for i := range items {
		switch it := &items[i]; {
		case !it.dup || !it.ok:
		case it.final:
			visit(*dups[i], nil, nil)
		default:
			// Not a duplicate after all: read it again, with a handle.
			it.ok = s.visitEntry(ctx, dirents[i], visit)
		}
	}
	for _, p := range pendingOnly(items, pending) {
		h, err := s.Open(ctx, p.id, seam.Read)
		visit(seam.Entry{Snapshot: p.pendingSnapshot()}, h, err)
		if h != nil {
			h.Close()
		}
	}
	return ctx.Err()
}

// visitEntry reads one entry of a project folder as List does and, when it
// is a readable session, makes a read handle from the same open of its log;
// it calls visit unless the entry is not a session (then ok is false).
func (s *Store) visitEntry(ctx context.Context, de dirEntry, visit func(seam.Entry, seam.Handle, error)) (ok bool) {
	project, e := de.project, de.e
	if de.err != nil || !e.IsDir() {
		en, ok := s.listEntry(ctx, de)
		if ok {
			visit(en, nil, nil)
		}
		return ok
	}
	id, derr := DecodeSegment(e.Name())
	d, err := s.inspect("list", id, project, e.Name())
	if err == nil && d.live < 0 || derr != nil || err != nil {
		en, ok := s.unreadFolderEntry(project, e, id, d, derr, err)
		if ok {
			visit(en, nil, nil)
		}
		return ok
	}
	snap, h, err, openErr := s.snapshotOpen(ctx, d)
	if err != nil {
		visit(seam.Entry{Snapshot: snap, Err: err}, nil, nil)
		return true
	}
	if h == nil {
		visit(seam.Entry{Snapshot: snap}, nil, openErr)
		return true
	}
	visit(seam.Entry{Snapshot: snap}, h, nil)
	h.Close()
	return true
}

// snapshotOpen is snapshot for ListOpen: it also returns a read handle of
// the log it opened, holding the window and the decoded last frame it read,
// or the error a read Open would report (openErr).
func (s *Store) snapshotOpen(ctx context.Context, d *sessionDir) (snap seam.Snapshot, h *handle, err, openErr error) {
	snap = seam.Snapshot{Header: seam.Header{ID: d.id}, Location: s.location(d)}
	l, err := s.openLog("list", d, os.O_RDONLY)
	if err != nil {
		return snap, nil, err, nil
	}
	ht, w, err := s.readHeadTailWindow(ctx, l, d)
	snap.SizeBytes, snap.Revision = ht.size, ht.rev
	if err != nil {
		if w != nil {
			w.release()
		}
		l.f.Close()
		return snap, nil, seam.Wrap(err, seam.ErrIO, "list", d.id), nil
	}
	snap = s.snapshotOf(d, &ht)
	h, err = s.openReadWith(ctx, l, d, &ht.hi, ht.size, tailVocabulary(l, &ht.tail, ht.hi.hdr.Version))
	if err != nil {
		w.release()
		l.f.Close()
		return snap, nil, nil, seam.Wrap(err, seam.ErrIO, "open", d.id)
	}
	h.win, h.winRev, h.winRefs = w, ht.rev, 1
	h.tail, h.tailRev = ht.tail.frame, ht.rev
	h.snap, h.snapRev = snap, ht.rev
	return snap, h, nil, nil
}

// tailVocabulary checks the types of the last committed row.
func tailVocabulary(l *logFile, t *tailInfo, v int) error {
	if t.last == nil {
		return nil
	}
	for _, e := range t.last.Events() {
		if err := seam.CheckVocabulary(&e, v); err != nil {
			return l.located(err, seam.ErrUnsupportedFormat, t.lastPos)
		}
	}
	return nil
}
