package jsonl

import (
	"context"
	"os"
	"runtime"

	"github.com/dshctl/dshctl/internal/seam"
)

// listWorkers is how many entries List reads at a time.
func listWorkers() int { return 2 * runtime.GOMAXPROCS(0) }

// openHint is what List learned about a readable session: where its live
// log is and what its head and tail hold. A read Open of that session by
// the same store uses it instead of searching the project folders and
// reading the head and the tail again, if the log's revision (device,
// inode, size, mtime, ctime) is still the one List saw; any change, such
// as an Append by any handle or process, sends Open down the full path. A
// hint is used once and replaced by the next List, so it never outlives
// the listing it came from.
type openHint struct {
	d    *sessionDir
	hi   headerInfo
	size int64
	rev  string
	// vocab is the error a strict reader reports for the last row's
	// types, nil when they are known.
	vocab error
	// tail is the decoded last frame, nil when it was not kept (see
	// hintFrameBudget).
	tail *lastFrame
}

// hintFrameBudget bounds the decoded last frames that one List keeps in
// its hints, so that the reverse scan of a hinted handle (list's metadata)
// does not decode the last frame again. Sessions past it get hints without
// a frame.
const hintFrameBudget = 32 << 20

// newOpenHint returns the hint of a session List read successfully.
func (s *Store) newOpenHint(snap seam.Snapshot, ht *headTail) *openHint {
	l := &logFile{path: snap.Location.Path, id: ht.d.id, enc: s.Encoding(), gen: ht.d.live}
	return &openHint{d: ht.d, hi: ht.hi, size: ht.size, rev: ht.rev, vocab: tailVocabulary(l, &ht.tail, ht.hi.hdr.Version), tail: ht.tail.frame}
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

// setOpenHints replaces the store's hints.
func (s *Store) setOpenHints(hints map[string]*openHint) {
	s.mu.Lock()
	s.hints = hints
	s.mu.Unlock()
}

// takeHint removes and returns the hint for id, nil if there is none.
func (s *Store) takeHint(id string) *openHint {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.hints[id]
	if c != nil {
		delete(s.hints, id)
	}
	return c
}

// openHinted opens a read handle from c. ok is false when the log changed
// since List read it, or anything fails: the caller then takes the full
// path, which reports the failure as it should.
func (s *Store) openHinted(ctx context.Context, c *openHint) (*handle, bool) {
	l, err := s.openLog("open", c.d, os.O_RDONLY)
	if err != nil {
		return nil, false
	}
	fi, err := l.f.Stat()
	if err != nil || revision(fi) != c.rev {
		l.f.Close()
		return nil, false
	}
	h, err := s.openReadWith(ctx, l, c.d, &c.hi, c.size, c.vocab)
	if err != nil {
		l.f.Close()
		return nil, false
	}
	// The caller came from a listing and reads the ends of the log next
	// (list's metadata): read them once.
	if w, err := newWindowFile(l.f, c.size); err == nil {
		h.win, h.winRev, h.winRefs = w, c.rev, 1
	}
	h.tail, h.tailRev = c.tail, c.rev
	return h, true
}
