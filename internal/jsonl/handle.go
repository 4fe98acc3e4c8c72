package jsonl

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"iter"
	"os"
	"slices"
	"sort"
	"sync"

	"github.com/dshctl/dshctl/internal/jsonl/osfs"
	"github.com/dshctl/dshctl/internal/seam"
)

// handle is an open session of a Store.
//
// Besides the open log it keeps caches that make repeated reads cheap, each
// owned by the handle, bounded, and dropped as soon as it no longer
// describes the log:
//   - win, the head and tail bytes read at open (at most headWindow +
//     tailWindow bytes, or smallLog for a small log), serves scans only
//     while the log's revision is the one it was read at, and is released
//     when that changes or the handle closes;
//   - tail, the decoded last frame found at open (at most tailFrameLimit
//     bytes), serves the first reverse scan under the same rule;
//   - snap, the Snapshot of the last head and tail read, is replaced when
//     the revision changes;
//   - cps, resumable positions, one per checkpointEvery bytes of validated
//     log: O(log size / 1 MiB) small values, reset when the log is replaced;
//   - stale, the logs the handle replaced (a read handle following a log a
//     writer renamed over its path, a writer's replaceTail) that a scan
//     still reads: each is closed when its last scan ends, so a long-lived
//     handle (cat -f) holds at most one log per scan in flight, never one
//     per replacement.
//
// Everything is released by Close.
type handle struct {
	s         *Store
	id        string
	access    seam.Access
	hdr       seam.Header
	inherited int64
	dir       *sessionDir

	mu     sync.Mutex
	closed bool
	log    *logFile     // nil while a create is pending
	body   position     // the first body record
	cps    []checkpoint // resumable positions, by seq
	w      *writer      // write state; nil for read handles

	// win holds the head and the tail of the log of a read handle as they
	// were at open, so that the first scans (list reads both ends) do not
	// read them again. It serves a scan only while the log's revision is
	// still winRev; winRefs counts the scans using it, plus one while the
	// handle keeps it.
	win     *windowFile
	winRev  string
	winRefs int

	// tail is the decoded last frame the open's tail search found, for the
	// first reverse scan, while the log's revision is still tailRev.
	tail    *lastFrame
	tailRev string

	// snap is the Snapshot of the log at revision snapRev.
	snap    seam.Snapshot
	snapRev string

	// readers counts the scans in flight on each log; stale holds the
	// replaced logs that some of them still read (see retireLocked).
	readers map[*logFile]int
	stale   []*logFile
}

var (
	_ seam.Handle    = (*handle)(nil)
	_ seam.RawReader = (*handle)(nil)
)

func (h *handle) ID() string                 { return h.id }
func (h *handle) Header() seam.Header        { return h.hdr }
func (h *handle) InheritedEventCount() int64 { return h.inherited }
func (h *handle) Access() seam.Access        { return h.access }

// Open opens a stored session. A read open checks the layout, the header
// and the tail (and, for a seeded v2+ header, finds the seed marker); the
// body is validated as it is read. A write open takes the session lock and
// validates the tail of the log from its last turn/end on, which decides
// the next seq and any torn or uncommitted tail to remove; damage to the
// committed records before it is left to a full read (verify) to report.
func (s *Store) Open(ctx context.Context, id string, access seam.Access) (seam.Handle, error) {
	if err := s.check(ctx, "open"); err != nil {
		return nil, err
	}
	if access == seam.Write {
		return s.openWrite(ctx, id)
	}
	if h, ok := s.writers.Pending(id); ok {
		return &handle{s: s, id: id, access: seam.Read, hdr: h.hdr, inherited: h.inherited, dir: h.dir}, nil
	}
	d, err := s.find("open", id)
	if err != nil {
		return nil, err
	}
	l, err := s.openLog("open", d, os.O_RDONLY)
	if err != nil {
		return nil, err
	}
	h, err := s.openRead(ctx, l, d)
	if err != nil {
		l.f.Close()
		return nil, seam.Wrap(err, seam.ErrIO, "open", id)
	}
	return h, nil
}

func (s *Store) openRead(ctx context.Context, l *logFile, d *sessionDir) (*handle, error) {
	ht, err := s.readHeadTail(ctx, l, d)
	if err != nil {
		return nil, err
	}
	h, err := s.openReadWith(ctx, l, d, &ht.hi, ht.size, tailVocabulary(l, &ht.tail))
	if err == nil {
		h.tail, h.tailRev = ht.tail.frame, ht.rev
		h.snap, h.snapRev = s.snapshotOf(d, &ht), ht.rev
	}
	return h, err
}

// openReadWith makes a read handle of the log l of d, whose header is hi,
// whose size was size and whose last row's vocabulary check gave vocab.
func (s *Store) openReadWith(ctx context.Context, l *logFile, d *sessionDir, hi *headerInfo, size int64, vocab error) (*handle, error) {
	h := &handle{s: s, id: d.id, access: seam.Read, hdr: hi.hdr, dir: d, log: l,
		body: hi.body()}
	if vocab != nil && !s.opts.AllowUnknownTypes {
		return nil, vocab
	}
	var err error
	if h.inherited, err = h.findInherited(ctx, size); err != nil {
		return nil, err
	}
	return h, nil
}

// findInherited returns the inherited event count: the header's seedLength
// (v0/v1), or the seq of the first session/end-seed {inherited:true}
// marker of a seeded v2+ log. A full forward Scan checks that the last
// marker agrees.
func (h *handle) findInherited(ctx context.Context, size int64) (int64, error) {
	if h.hdr.Version < 2 || !h.hdr.Seeded() {
		var m seam.SeedMarker
		return m.Result(&h.hdr)
	}
	var m seam.SeedMarker
	found := false
	r := h.reader(true)
	r.onCheckpoint = nil // a lenient read must not leave checkpoints for strict ones
	_, _, err := r.forward(ctx, r.start(), size, budget{}, 0, func(e *seam.Event) bool {
		if e.Type != "session/end-seed" {
			return true
		}
		m.Observe(e)
		_, err := m.Result(&h.hdr)
		found = err == nil
		return !found
	})
	if err != nil {
		return 0, err
	}
	n, err := m.Result(&h.hdr)
	if err != nil {
		return 0, h.log.located(err, seam.ErrCorrupt, h.log.pos(0, -1, 1, -1))
	}
	return n, nil
}

// reader returns a reader of h's log; lenient serves unknown types.
func (h *handle) reader(lenient bool) *reader {
	return &reader{l: h.log, hdr: &h.hdr, body: h.body, lenient: lenient, onCheckpoint: h.addCheckpoint}
}

func (h *handle) addCheckpoint(cp checkpoint) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if n := len(h.cps); n == 0 || h.cps[n-1].next < cp.next {
		h.cps = append(h.cps, cp)
	}
}

// checkpointFor returns the latest remembered position at or before seq.
func (h *handle) checkpointFor(seq int64) checkpoint {
	h.mu.Lock()
	defer h.mu.Unlock()
	i := sort.Search(len(h.cps), func(i int) bool { return h.cps[i].next > seq })
	if i == 0 {
		return checkpoint{at: h.body}
	}
	return h.cps[i-1]
}

// use checks that h is open and returns the log (nil while pending) and
// the size of the file to read.
func (h *handle) use(op string) (*logFile, int64, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	l, _, size, err := h.useLocked(op)
	return l, size, err
}

// useScan is use for a scan: the log it returns reads from the handle's
// window while the log is unchanged; done must be called after the scan.
// The log stays open until done, even if the handle replaces it meanwhile.
func (h *handle) useScan(op string) (l *logFile, size int64, done func(), err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	done = func() {}
	l, fi, size, err := h.useLocked(op)
	if err != nil || l == nil {
		return l, size, done, err
	}
	h.acquireLocked(l)
	done = func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.releaseLocked(l)
	}
	if h.win == nil && h.tail == nil {
		return l, size, done, nil
	}
	rev := ""
	if fi != nil {
		rev = revision(fi)
	}
	if h.tail != nil && (fi == nil || rev != h.tailRev) {
		h.tail = nil // the log changed: the frame may no longer be the last
	}
	if h.win == nil {
		return l, size, done, nil
	}
	if fi == nil || rev != h.winRev {
		h.unrefWindowLocked() // the log changed: the window is stale
		h.win = nil
		return l, size, done, nil
	}
	w := h.win
	h.winRefs++
	lw := *l
	lw.f = w
	return &lw, size, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.winRefs--
		if h.winRefs == 0 {
			w.release()
		}
		h.releaseLocked(l)
	}, nil
}

// acquireLocked counts a scan of l.
func (h *handle) acquireLocked(l *logFile) {
	if h.readers == nil {
		h.readers = map[*logFile]int{}
	}
	h.readers[l]++
}

// releaseLocked ends a scan of l; a replaced log is closed with its last
// scan.
func (h *handle) releaseLocked(l *logFile) {
	if h.readers[l]--; h.readers[l] > 0 {
		return
	}
	delete(h.readers, l)
	if i := slices.Index(h.stale, l); i >= 0 {
		h.stale = slices.Delete(h.stale, i, i+1)
		l.f.Close()
	}
}

// retireLocked disposes of l, a log the handle no longer reads: closed now
// when no scan reads it, else kept until the last one ends. A closed handle
// closes its stale logs itself.
func (h *handle) retireLocked(l *logFile) {
	if h.readers[l] == 0 {
		l.f.Close()
		return
	}
	h.stale = append(h.stale, l)
}

// tailFor returns the decoded last frame for a scan of a log of size
// bytes, nil if there is none for that state of the log. useScan dropped
// it if the log's revision changed.
func (h *handle) tailFor(size int64) *lastFrame {
	h.mu.Lock()
	defer h.mu.Unlock()
	if t := h.tail; t != nil && t.size == size {
		return t
	}
	return nil
}

// unrefWindowLocked drops the handle's reference to its window.
func (h *handle) unrefWindowLocked() {
	if h.win == nil {
		return
	}
	h.winRefs--
	if h.winRefs == 0 {
		h.win.release()
	}
	h.win = nil
}

// useLocked is use with h.mu held; fi is the log's state when a read
// handle's log was stat'ed.
func (h *handle) useLocked(op string) (*logFile, fs.FileInfo, int64, error) {
	if h.closed {
		return nil, nil, 0, &seam.Error{Kind: seam.ErrHandleClosed, Op: op, ID: h.id, Pos: seam.NoPos}
	}
	if h.log == nil && h.w == nil {
		if err := h.attach(op); err != nil {
			return nil, nil, 0, err
		}
	}
	if h.log == nil {
		return nil, nil, 0, nil
	}
	if h.w != nil {
		return h.log, nil, h.w.size, nil
	}
	fi, err := h.log.f.Stat()
	if err != nil {
		return nil, nil, 0, seam.Wrap(h.log.ioError(err, -1), seam.ErrIO, op, h.id)
	}
	if osfs.Links(fi) == 0 {
		// The log was replaced (a writer rewrote it without an uncommitted
		// tail and renamed it over the old one) or removed: follow the path.
		if nfi, ok := h.reopenLocked(op); ok {
			fi = nfi
		}
	}
	return h.log, fi, fi.Size(), nil
}

// reopenLocked replaces the log of a read handle by the file now at its
// path, if that holds the same session; the old one stays open for the
// scans still using it, until Close.
func (h *handle) reopenLocked(op string) (fs.FileInfo, bool) {
	l, err := h.s.openLog(op, h.dir, os.O_RDONLY)
	if err != nil {
		return nil, false
	}
	fi, err := l.f.Stat()
	var hi headerInfo
	if err == nil {
		dec, done := h.s.decs.once(context.Background(), l.lim.frame)
		hi, err = l.readHeader(fi.Size(), dec)
		done()
	}
	if err != nil || hi.hdr.ID != h.id || hi.hdr.Version != h.hdr.Version || hi.hdr.CreatedAt != h.hdr.CreatedAt {
		l.f.Close()
		return nil, false
	}
	h.retireLocked(h.log)
	h.log = l
	h.body = hi.body()
	h.cps = nil
	return fi, true
}

// attach opens the log of a read handle that was opened on a pending
// create, once the create is materialized, so the handle sees what the
// writer appended.
func (h *handle) attach(op string) error {
	if _, ok := h.s.writers.Pending(h.id); ok {
		return nil
	}
	d, err := h.s.find(op, h.id)
	if errors.Is(err, seam.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	l, err := h.s.openLog(op, d, os.O_RDONLY)
	if err != nil {
		return err
	}
	fi, err := l.f.Stat()
	if err != nil {
		l.f.Close()
		return seam.Wrap(l.ioError(err, -1), seam.ErrIO, op, h.id)
	}
	dec, done := h.s.decs.once(context.Background(), l.lim.frame)
	defer done()
	hi, err := l.readHeader(fi.Size(), dec)
	if err != nil {
		l.f.Close()
		return seam.Wrap(err, seam.ErrIO, op, h.id)
	}
	h.log, h.dir = l, d
	h.body = hi.body()
	return nil
}

// Read returns the committed events from seq offset on, at most length of
// them (all when length < 0).
func (h *handle) Read(ctx context.Context, offset, length int64) ([]seam.Event, error) {
	if offset < 0 {
		return nil, seam.Errorf(seam.ErrInvalid, "read", h.id, seam.NoPos, "negative offset %d", offset)
	}
	var out []seam.Event
	if length == 0 {
		if _, _, err := h.use("read"); err != nil {
			return nil, err
		}
		return []seam.Event{}, nil
	}
	for e, err := range h.Scan(ctx, seam.ScanOptions{From: offset}) {
		if err != nil {
			return nil, err
		}
		out = append(out, e)
		if length > 0 && int64(len(out)) == length {
			break
		}
	}
	if out == nil {
		out = []seam.Event{}
	}
	return out, nil
}

// Scan streams committed events. Forward scans validate what they read (a
// complete one also checks the v2+ seed-marker rule); reverse scans read
// from the tail with the same backward search as Stat. Errors end the
// stream.
func (h *handle) Scan(ctx context.Context, opts seam.ScanOptions) iter.Seq2[seam.Event, error] {
	return func(yield func(seam.Event, error) bool) {
		fail := func(err error) { yield(seam.Event{}, seam.Wrap(err, seam.ErrIO, "read", h.id)) }
		if opts.From < 0 {
			fail(seam.Errorf(seam.ErrInvalid, "read", h.id, seam.NoPos, "negative seq %d", opts.From))
			return
		}
		l, size, release, err := h.useScan("read")
		if err != nil || l == nil {
			if err != nil {
				fail(err)
			}
			return
		}
		defer release()
		r := h.reader(h.s.opts.AllowUnknownTypes)
		r.l = l
		emit := func(e *seam.Event) bool { return yield(*e, nil) }
		if opts.Reverse {
			r.tail = h.tailFor(size)
			if err := r.reverse(ctx, size, budgetFor(opts.MaxBytes), opts.From, emit); err != nil {
				fail(err)
			}
			return
		}
		r.transient = opts.Transient
		cp := h.checkpointFor(opts.From)
		end, done, err := r.forward(ctx, cp, size, budgetFor(opts.MaxBytes), opts.From, emit)
		switch {
		case err != nil:
			fail(err)
		case done && !cp.at.relative:
			// A scan from the write open's tail checkpoint has not seen the
			// markers before it, so only a scan from the start checks them.
			if n, err := end.marker.Result(&h.hdr); err != nil {
				fail(l.located(err, seam.ErrCorrupt, l.pos(0, -1, 1, -1)))
			} else if n != h.inherited {
				fail(l.errorf(seam.ErrCorrupt, l.pos(-1, -1, -1, n), "the last seed marker is at seq %d, the first at %d", n, h.inherited))
			}
		}
	}
}

// Raw streams the physical records of the live log as stored, header
// included, up to the torn tail.
func (h *handle) Raw(ctx context.Context) iter.Seq2[seam.RawRecord, error] {
	return func(yield func(seam.RawRecord, error) bool) {
		fail := func(err error) { yield(seam.RawRecord{}, seam.Wrap(err, seam.ErrIO, "raw", h.id)) }
		l, size, release, err := h.useScan("raw")
		if err != nil || l == nil {
			if err != nil {
				fail(err)
			}
			return
		}
		defer release()
		br, err := l.newBodyReader(ctx, position{}, size, budget{})
		if err != nil {
			fail(err)
			return
		}
		defer br.close()
		for {
			if err := ctx.Err(); err != nil {
				fail(err)
				return
			}
			rec, err := br.next()
			if err == io.EOF {
				return
			}
			if err != nil {
				fail(err)
				return
			}
			if rec.junk != nil {
				// Too long to hold, and no row: said, not given.
				raw := seam.RawRecord{Offset: rec.off, Events: 1, Unread: rec.overLimit, Size: rec.size}
				if !yield(raw, nil) {
					return
				}
				continue
			}
			raw := seam.RawRecord{Line: rec.line, Offset: rec.off, Events: rawEvents(rec.line, rec.off, h.hdr.Version)}
			if rec.frame >= 0 {
				raw.Group = &seam.RecordGroup{Index: rec.frame, Offset: rec.frameOff, Size: rec.frameSize}
			}
			if rec.lines > 1 {
				// A run of empty lines: as many records, in slices of
				// them, without a record per line.
				for n := rec.size; n > 0; {
					k := min(n, int64(len(newlineRun)))
					raw.Line = newlineRun[:k:k]
					if !yield(raw, nil) {
						return
					}
					raw.Offset += k
					n -= k
				}
				continue
			}
			if !yield(raw, nil) {
				return
			}
		}
	}
}

// newlineRun is the slice Raw serves runs of empty lines from.
var newlineRun = bytes.Repeat([]byte{'\n'}, 64<<10)

// packedMark is in every packed row: the type of each kind ends so.
var packedMark = []byte(`-chunks"`)

// rawEvents is the number of events the record line at text offset off of
// a version-v log stands for (seam.RawRecord.Events): none for the header,
// which starts the text, the members of a packed row (v0/v1), else one.
// Only lines that may be packed rows are decoded.
func rawEvents(line []byte, off int64, v int) int {
	if off == 0 {
		return 0
	}
	if v < 2 && bytes.Contains(line, packedMark) {
		if r, err := seam.DecodeRecord(bytes.TrimSuffix(line, []byte{'\n'}), v); err == nil && r.Packed != nil {
			return len(r.Packed.Parts)
		}
	}
	return 1
}

// Snapshot returns the metadata of the log as h reads it now
// (seam.Handle): a read handle's from the head and the tail of the log it
// reads, read again only when the log's revision changed since the last
// time; a write handle's from the state its appends left.
func (h *handle) Snapshot(ctx context.Context) (seam.Snapshot, error) {
	if err := ctx.Err(); err != nil {
		return seam.Snapshot{}, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	l, fi, _, err := h.useLocked("stat")
	switch {
	case err != nil:
		return seam.Snapshot{}, err
	case l == nil:
		return h.pendingSnapshot(), nil
	case h.w != nil:
		return h.writerSnapshot(l)
	}
	if rev := revision(fi); rev == h.snapRev {
		return h.snap, nil
	}
	ht, err := h.s.readHeadTail(ctx, l, h.dir)
	if err != nil {
		return seam.Snapshot{}, seam.Wrap(err, seam.ErrIO, "stat", h.id)
	}
	h.snap, h.snapRev = h.s.snapshotOf(h.dir, &ht), ht.rev
	return h.snap, nil
}

// writerSnapshot is Snapshot for a write handle, whose state is known
// without reading: the lock keeps every other writer out.
func (h *handle) writerSnapshot(l *logFile) (seam.Snapshot, error) {
	fi, err := l.f.Stat()
	if err != nil {
		return seam.Snapshot{}, seam.Wrap(l.ioError(err, -1), seam.ErrIO, "stat", h.id)
	}
	w := h.w
	snap := seam.Snapshot{Header: h.hdr, Revision: revision(fi), EventCount: w.next, SizeBytes: fi.Size(), Location: h.s.location(h.dir)}
	snap.Location.UncommittedBytes = max(w.physEnd-w.cut, 0)
	snap.Location.TornBytes = max(fi.Size()-max(w.physEnd, w.cut), 0)
	return snap, nil
}

// Close releases the handle; a write handle releases ownership and, for a
// create that was never materialized, the pending id.
func (h *handle) Close() error {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil
	}
	h.closed = true
	l, w, stale := h.log, h.w, h.stale
	if w != nil {
		h.s.writers.EndPending(h.id, h) // a closing create is not a session
	}
	h.stale = nil
	h.unrefWindowLocked()
	h.tail = nil
	h.mu.Unlock()
	var errs []error
	for _, o := range stale {
		o.f.Close()
	}
	if w != nil || h.access == seam.Write {
		errs = append(errs, h.closeWriter(w))
		h.s.writers.Release(h.id, h)
	}
	if l != nil {
		errs = append(errs, l.f.Close())
	}
	if err := errors.Join(errs...); err != nil {
		return seam.Wrap(err, seam.ErrIO, "close", h.id)
	}
	return nil
}
