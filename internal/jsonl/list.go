package jsonl

import (
	"context"
	"fmt"
	"io/fs"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/dshctl/dshctl/internal/seam"
)

// List returns every session of the root, in path order. A folder that is
// a session but cannot be read (bad header, encoding mismatch, wrong
// project folder, duplicate id, a log file placed directly in a project
// folder, an empty log or a zstd log without a complete first frame) is an
// entry with Err. (Creates write a complete header before the log appears,
// so a header-less log is damage, not a create in progress.)
func (s *Store) List(ctx context.Context) ([]seam.Entry, error) {
	if err := s.check(ctx, "list"); err != nil {
		return nil, err
	}
	dirents, err := s.projectEntries()
	if err != nil {
		return nil, err
	}
	items := listItems(dirents)
	entries := make([]seam.Entry, len(dirents))
	if err := forEachEntry(ctx, len(dirents), func(i int) {
		entries[i], items[i].ok = s.listEntry(ctx, dirents[i])
	}); err != nil {
		return nil, err
	}
	resolveDuplicates(items, func(i int) *seam.Entry { return &entries[i] })
	var out []seam.Entry
	for i := range items {
		if items[i].ok {
			out = append(out, entries[i])
		}
	}
	for _, h := range pendingOnly(items, s.writers.PendingOwners()) {
		out = append(out, seam.Entry{Snapshot: h.pendingSnapshot()})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Snapshot.Location.Path < out[j].Snapshot.Location.Path })
	return out, nil
}

// listItem is what a listing knows of an entry of a project folder
// (a dirEntry) besides the entry itself.
type listItem struct {
	id  string // the folder's id; "" when it names none
	dup bool   // the id names folders in several project folders
	ok  bool   // a session (an entry List returns)
	// final says its entry, read in full, is what the listing reports:
	// one of several copies of an id, or one that cannot be read.
	final bool
}

// listItems returns the items of dirents: the ids their session folders
// name, and which of those several project folders name.
func listItems(dirents []dirEntry) []listItem {
	items := make([]listItem, len(dirents))
	count := map[string]int{}
	for i, de := range dirents {
		if de.err == nil && de.e.IsDir() {
			if id, err := DecodeSegment(de.e.Name()); err == nil {
				items[i].id = id
				count[id]++
			}
		}
	}
	for i := range items {
		items[i].dup = items[i].id != "" && count[items[i].id] > 1
	}
	return items
}

// resolveDuplicates settles the items marked dup, once each was read in
// full (entry(i) is its entry) and ok says which are sessions: an id whose
// folders hold more than one session is a duplicate, and each copy's
// entry gets the error; an id only one of them holds a session of is not
// a duplicate after all, and that item is final only when its entry has
// an error (else it is to be read as any other).
func resolveDuplicates(items []listItem, entry func(i int) *seam.Entry) {
	copies := map[string][]int{}
	for i := range items {
		if it := &items[i]; it.dup && it.ok {
			copies[it.id] = append(copies[it.id], i)
		}
	}
	for id, idx := range copies {
		if len(idx) == 1 {
			items[idx[0]].final = entry(idx[0]).Err != nil
			continue
		}
		for _, i := range idx {
			items[i].final = true
			e := entry(i)
			e.Err = duplicateIDError("list", id, e.Snapshot.Location.Path, len(idx))
		}
	}
}

// pendingOnly returns the creates of pending (the sessions this Store is
// creating) that the listing of items does not hold.
func pendingOnly(items []listItem, pending []*handle) []*handle {
	if len(pending) == 0 {
		return nil
	}
	listed := make(map[string]bool, len(items))
	for i := range items {
		if items[i].ok {
			listed[items[i].id] = true
		}
	}
	var out []*handle
	for _, p := range pending {
		if !listed[p.id] {
			out = append(out, p)
		}
	}
	return out
}

// listEntry reads one entry of a project folder; ok is false for entries
// that are not sessions.
func (s *Store) listEntry(ctx context.Context, de dirEntry) (seam.Entry, bool) {
	if de.err != nil {
		return s.badFolderEntry(de), true
	}
	project, e := de.project, de.e
	path := filepath.Join(s.root, project, e.Name())
	if e.Type()&fs.ModeSymlink != 0 {
		if !segmentOK(e.Name()) && !isFlatLog(e.Name()) {
			return seam.Entry{}, false
		}
		return s.badFolderEntry(dirEntry{project: project, e: e, err: symlinkFolderError("list", "", path)}), true
	}
	if !e.IsDir() {
		if !isFlatLog(e.Name()) {
			return seam.Entry{}, false
		}
		// The entry is named by the file, which is all there is to name
		// it by: the id in its header is not trusted to a flat file.
		return seam.Entry{
			Snapshot: seam.Snapshot{Header: seam.Header{ID: e.Name()},
				Location: seam.Location{Backend: "jsonl", Path: path, Encoding: string(s.Encoding())}},
			Err: seam.Errorf(seam.ErrCorrupt, "list", "", seam.PathPos(path),
				"log file placed directly in a project folder (old flat layout)"),
		}, true
	}
	id, derr := DecodeSegment(e.Name())
	d, err := s.inspect("list", id, project, e.Name())
	if derr == nil && err == nil && d.live >= 0 {
		snap, err := s.snapshot(ctx, "list", d)
		return seam.Entry{Snapshot: snap, Err: err}, true
	}
	return s.unreadFolderEntry(project, e, id, d, derr, err)
}

// badFolderEntry is the entry of a folder the store cannot read, or will
// not (a symbolic link): named by the folder, with de.err.
func (s *Store) badFolderEntry(de dirEntry) seam.Entry {
	path := filepath.Join(s.root, de.project)
	name := de.project
	if de.e != nil {
		path, name = filepath.Join(path, de.e.Name()), de.e.Name()
		if id, err := DecodeSegment(name); err == nil {
			name = id
		}
	}
	return seam.Entry{
		Snapshot: seam.Snapshot{Header: seam.Header{ID: name},
			Location: seam.Location{Backend: "jsonl", Path: path, Encoding: string(s.Encoding())}},
		Err: seam.Wrap(de.err, seam.ErrIO, "list", ""),
	}
}

// unreadFolderEntry is listEntry for a session folder whose log is not
// read: its name is not an encoded id (derr), reading it failed (err) or
// it holds no log (then it is not listed).
func (s *Store) unreadFolderEntry(project string, e fs.DirEntry, id string, d *sessionDir, derr, err error) (seam.Entry, bool) {
	path := filepath.Join(s.root, project, e.Name())
	if err == nil && d.live < 0 {
		return seam.Entry{}, false
	}
	if derr != nil {
		return seam.Entry{
			Snapshot: seam.Snapshot{Header: seam.Header{ID: e.Name()},
				Location: seam.Location{Backend: "jsonl", Path: path, Encoding: string(s.Encoding())}},
			Err: &seam.Error{Kind: seam.ErrCorrupt, Op: "list", Pos: seam.PathPos(path), Err: derr},
		}, true
	}
	return seam.Entry{Snapshot: seam.Snapshot{Header: seam.Header{ID: id}, Location: s.location(d)}, Err: err}, true
}

// isFlatLog tells whether name, an entry of a project folder that is not
// a directory, is a log file of the old flat layout: any *.jsonl or
// *.jsonl.zstd (store.md 1 makes it an error, not something to skip).
func isFlatLog(name string) bool {
	return strings.HasSuffix(name, ".jsonl") || strings.HasSuffix(name, ".jsonl.zstd")
}

// segmentOK tells whether name decodes to a session id.
func segmentOK(name string) bool {
	_, err := DecodeSegment(name)
	return err == nil
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
			out = append(out, dirEntry{project: p.Name(), err: &seam.Error{Kind: seam.ErrIO, Op: "list", Pos: seam.PathPos(path), Err: err}})
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
	return seam.Errorf(seam.ErrCorrupt, op, id, seam.PathPos(path), "%s", msg)
}
