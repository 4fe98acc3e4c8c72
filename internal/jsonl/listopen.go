package jsonl

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"

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
	type item struct {
		id    string      // the folder's id; "" when it names none
		dup   bool        // the id names folders in several project folders
		ok    bool        // a session (an entry List returns)
		entry *seam.Entry // a duplicate's, read without a handle
	}
	items := make([]item, len(dirents))
	for i, id := range folderIDs(dirents) {
		items[i].id, items[i].dup = id.id, id.dup
	}
	pending := s.writers.PendingOwners()
	if found != nil {
		found(len(items) + len(pending))
	}
	if err := forEachEntry(ctx, len(items), func(i int) {
		it, de := &items[i], dirents[i]
		if it.dup {
			en, ok := s.listEntry(ctx, de)
			it.entry, it.ok = &en, ok
			return
		}
		it.ok = s.visitEntry(ctx, de, visit)
	}); err != nil {
		return err
	}
	// The folders of ids named more than once, as List reports them.
	seen := map[string][]int{}
	for i := range items {
		if it := &items[i]; it.dup && it.ok {
			seen[it.id] = append(seen[it.id], i)
		}
	}
	for id, idx := range seen {
		if len(idx) == 1 {
			it := &items[idx[0]]
			if it.entry.Err == nil {
				// Not a duplicate after all: read it again, with a handle.
				it.ok = s.visitEntry(ctx, dirents[idx[0]], visit)
			} else {
				visit(*it.entry, nil, nil)
			}
			continue
		}
		for _, i := range idx {
			en := *items[i].entry
			en.Err = duplicateIDError("list", id, en.Snapshot.Location.Path, len(idx))
			visit(en, nil, nil)
		}
	}
pend:
	for _, p := range pending {
		for i := range items {
			if items[i].ok && items[i].id == p.id {
				continue pend
			}
		}
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

// folderID is the id a folder of the root names ("" when none), and
// whether other project folders name it too.
type folderID struct {
	id  string
	dup bool
}

// folderIDs are the ids the session folders of dirents name.
func folderIDs(dirents []dirEntry) []folderID {
	ids := make([]folderID, len(dirents))
	count := map[string]int{}
	for i, de := range dirents {
		if de.err == nil && de.e.IsDir() {
			if id, err := DecodeSegment(de.e.Name()); err == nil {
				ids[i].id = id
				count[id]++
			}
		}
	}
	for i := range ids {
		ids[i].dup = ids[i].id != "" && count[ids[i].id] > 1
	}
	return ids
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

// dirEntry is an entry of a project folder, or a project folder that
// cannot be listed (e nil, err set) or a session folder that will not be
// read (err set).
type dirEntry struct {
	project string
	e       fs.DirEntry
	err     error
}

// projectEntries returns the entries of the project folders of the root:
// what List and ListOpen read. A project folder that cannot be read, or
// is a symbolic link, is an entry of its own with err, so that one bad
// folder never hides the rest of the store.
func (s *Store) projectEntries() ([]dirEntry, error) {
	projects, err := s.fs.ReadDir(s.root)
	if err != nil {
		return nil, &seam.Error{Kind: seam.ErrIO, Op: "list", Pos: seam.NoPos, Err: err}
	}
	var out []dirEntry
	for _, p := range projects {
		if !isProjectFolder(p.Name()) {
			continue
		}
		path := filepath.Join(s.root, p.Name())
		if p.Type()&fs.ModeSymlink != 0 {
			out = append(out, dirEntry{project: p.Name(), err: symlinkFolderError("list", "", path)})
			continue
		}
		if !p.IsDir() {
			continue
		}
		entries, err := s.fs.ReadDir(path)
		if err != nil {
			out = append(out, dirEntry{project: p.Name(), err: &seam.Error{Kind: seam.ErrIO, Op: "list", Pos: seam.Pos{Path: path, Offset: -1, Frame: -1, Line: -1, Seq: -1}, Err: err}})
			continue
		}
		for _, e := range entries {
			out = append(out, dirEntry{project: p.Name(), e: e})
		}
	}
	return out, nil
}

// listWorkers is how many entries List and ListOpen read at a time.
func listWorkers() int { return 2 * runtime.GOMAXPROCS(0) }

// forEachEntry calls work(i) for each i in [0, n) on listWorkers
// goroutines (each entry costs a few small reads and some decoding), until
// ctx is done; it returns ctx's error. The workers take indexes from a
// shared counter: a channel send per entry would cost a goroutine switch.
func forEachEntry(ctx context.Context, n int, work func(i int)) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(n, listWorkers()) {
		wg.Go(func() {
			for ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				work(i)
			}
		})
	}
	wg.Wait()
	return ctx.Err()
}

// duplicateIDError reports an id named by session folders in n project
// folders, at path; dirs, when given, are two of those folders.
func duplicateIDError(op, id, path string, n int, dirs ...string) error {
	msg := fmt.Sprintf("session id found in %d project folders", n)
	if len(dirs) == 2 {
		msg += fmt.Sprintf(": %s and %s", dirs[0], dirs[1])
	}
	return seam.Errorf(seam.ErrCorrupt, op, id, seam.Pos{Path: path, Offset: -1, Frame: -1, Line: -1, Seq: -1}, "%s", msg)
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
