package jsonl

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/dshctl/dshctl/internal/durable"
	"github.com/dshctl/dshctl/internal/jsonl/osfs"
	"github.com/dshctl/dshctl/internal/jsonl/zstdframe"
	"github.com/dshctl/dshctl/internal/seam"
)

// writer is the state of a write handle.
type writer struct {
	pending bool // a create not yet materialized
	lock    file // the flocked session.lock; nil while pending
	lockFI  fs.FileInfo
	// noteBefore is the note of the lock file before a write began (see
	// noteWriting).
	noteBefore []byte
	size       int64 // file size after the last durable write
	next       int64 // next seq
	// cut is where committed data ends; bytes [cut, size) are a torn or
	// uncommitted tail that the next append removes.
	cut int64
	// physEnd is the end of the last complete line or frame: [cut,
	// physEnd) is an uncommitted tail, [physEnd, size) a torn one.
	physEnd int64
	// salvage holds the committed lines of the zstd frame at cut that
	// precede an uncommitted record; the next append rewrites them.
	salvage []byte
	// repairs lists the tails this handle removed, for Repairs.
	repairs []seam.Repair
}

// Create reserves a new session. Nothing is written until the first
// Append or Flush; closing the handle before either erases the
// reservation.
func (s *Store) Create(ctx context.Context, h seam.Header, opts seam.CreateOptions) (seam.Handle, error) {
	if err := s.check(ctx, "create"); err != nil {
		return nil, err
	}
	invalid := func(format string, args ...any) error {
		return seam.Errorf(seam.ErrInvalid, "create", h.ID, seam.NoPos, format, args...)
	}
	if err := seam.CheckCreate(h, opts); err != nil {
		return nil, err
	}
	seg, err := EncodeSegment(h.ID)
	if err != nil {
		return nil, invalid("%v", err)
	}
	project, err := projectFolder(h.Cwd)
	if err != nil {
		return nil, invalid("%v", err)
	}
	hd := &handle{s: s, id: h.ID, access: seam.Write, hdr: h, inherited: opts.InheritedEventCount,
		dir: &sessionDir{id: h.ID, project: project, dir: filepath.Join(s.root, project, seg), live: -1},
		w:   &writer{pending: true}}
	if err := s.writers.Create(h.ID, hd); err != nil {
		return nil, err
	}
	if _, err := s.find("create", h.ID); !errors.Is(err, seam.ErrNotFound) {
		s.writers.Release(h.ID, hd)
		if errors.Is(err, ErrSymlink) {
			return nil, err // not a session, and nothing to write through
		}
		return nil, &seam.Error{Kind: seam.ErrAlreadyExists, Op: "create", ID: h.ID, Pos: seam.NoPos,
			Err: fmt.Errorf("session %q already exists", h.ID)}
	}
	return hd, nil
}

// pendingSnapshot describes a create that is not materialized yet.
func (h *handle) pendingSnapshot() seam.Snapshot {
	enc := h.s.Encoding()
	return seam.Snapshot{Header: h.hdr, Revision: "pending", Location: seam.Location{Backend: "jsonl",
		Path: filepath.Join(h.dir.dir, LogName(h.hdr.Version, enc)), Encoding: string(enc), Generation: h.hdr.Version}}
}

// lockSession takes the session's cross-process write lock without
// waiting: flock(LOCK_EX|LOCK_NB) on session.lock, created if needed (and
// then given to the folder's owner, so that a root repair does not lock
// the owner out) and never deleted.
func (s *Store) lockSession(dir string) (file, fs.FileInfo, error) {
	path := filepath.Join(dir, lockName)
	f, err := s.fs.OpenFile(path, os.O_RDWR, 0)
	if errors.Is(err, fs.ErrNotExist) {
		f, err = s.fs.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		switch {
		case err == nil:
			if err = s.giveToFolder(f, dir); err != nil {
				f.Close()
				return nil, nil, err
			}
		case errors.Is(err, fs.ErrExist): // another writer made it meanwhile
			f, err = s.fs.OpenFile(path, os.O_RDWR, 0)
		}
	}
	if err != nil {
		return nil, nil, err
	}
	if err := f.TryLock(true); err != nil {
		f.Close()
		if errors.Is(err, errLockBusy) {
			return nil, nil, seam.ErrAlreadyOwned
		}
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// giveToFolder makes f, a file just created in dir, belong to dir's owner
// and group, so that a root repair does not lock the owner out.
func (s *Store) giveToFolder(f file, dir string) error {
	if !durable.CanChown() {
		return nil
	}
	fi, err := s.fs.Lstat(dir)
	if err != nil {
		return err
	}
	if err := durable.GiveTo(f, fi); err != nil {
		return fmt.Errorf("giving the new file to the owner of %s: %w", dir, err)
	}
	return nil
}

// mkdirSession makes the project and session folders of d where missing
// (0700, given to the owner of the folder they are made in), and reports
// whether it made the session folder and the project folder. A symbolic
// link, or anything but a folder, where one of them should be is refused:
// nothing is written through it.
func (s *Store) mkdirSession(d *sessionDir) (madeSession, madeProject bool, err error) {
	if err := durable.MkdirAll(s.fs, s.root, 0o700); err != nil {
		return false, false, err
	}
	project := filepath.Join(s.root, d.project)
	if madeProject, err = s.mkdirIn(project); err != nil {
		return false, false, err
	}
	madeSession, err = s.mkdirIn(d.dir)
	return madeSession, madeProject, err
}

// mkdirIn makes the folder dir unless it is one; see mkdirSession.
func (s *Store) mkdirIn(dir string) (bool, error) {
	fi, err := s.fs.Lstat(dir)
	switch {
	case err == nil && fi.IsDir():
		return false, nil
	case err == nil && fi.Mode()&fs.ModeSymlink != 0:
		return false, osfs.SymlinkError("mkdir", dir)
	case err == nil:
		return false, &fs.PathError{Op: "mkdir", Path: dir, Err: fmt.Errorf("%w (%s)", syscall.ENOTDIR, durable.TypeName(fi.Mode()))}
	case !errors.Is(err, fs.ErrNotExist):
		return false, err
	}
	if err := s.fs.Mkdir(dir, 0o700); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return s.mkdirIn(dir) // made meanwhile: check what it is
		}
		return false, err
	}
	if durable.CanChown() {
		parent, err := s.fs.Lstat(filepath.Dir(dir))
		if err != nil {
			return true, err
		}
		if uid, gid, ok := durable.Owner(parent); ok {
			if err := s.fs.Lchown(dir, uid, gid); err != nil {
				return true, fmt.Errorf("giving %s to the owner of its parent: %w", dir, err)
			}
		}
	}
	return true, nil
}

// removeStaleTemps removes the temp files (<log>.<12 hex digits>.tmp) that
// the read of d's folder found, left by a killed writer. It is called with
// the session lock held, so no writer of the session is running (one that
// ran when the folder was read has renamed or lost its file since), and a
// temp file is only ever a copy: the log it was to replace is intact until
// the rename. Failures are ignored; the files are debris, not data.
func removeStaleTemps(fsys fileSystem, d *sessionDir) {
	for _, name := range d.temps {
		fsys.Remove(filepath.Join(d.dir, name))
	}
}

// isStaleTemp reports whether name is a temp file of replaceTail or
// create: a log name, a dot, 12 lowercase hex digits and ".tmp".
func isStaleTemp(name string) bool {
	base, ok := strings.CutSuffix(name, ".tmp")
	if !ok || len(base) < 13 || base[len(base)-13] != '.' {
		return false
	}
	for _, c := range base[len(base)-12:] {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	_, _, ok = ParseLogName(base[:len(base)-13])
	return ok
}

// openWrite claims id, takes its lock and reads the tail of the log that
// decides where an append goes (see tailStart).
func (s *Store) openWrite(ctx context.Context, id string) (seam.Handle, error) {
	h := &handle{s: s, id: id, access: seam.Write, w: &writer{}}
	if err := s.writers.Claim("open", id, h); err != nil {
		return nil, err
	}
	if err := s.loadWriter(ctx, h); err != nil {
		if h.w.lock != nil {
			h.w.lock.Close()
		}
		if h.log != nil {
			h.log.f.Close()
		}
		s.writers.Release(id, h)
		return nil, seam.Wrap(err, seam.ErrIO, "open", id)
	}
	return h, nil
}

func (s *Store) loadWriter(ctx context.Context, h *handle) error {
	d, err := s.find("open", h.id)
	if err != nil {
		return err
	}
	h.dir = d
	lock, fi, err := s.lockSession(d.dir)
	if errors.Is(err, seam.ErrAlreadyOwned) {
		path := filepath.Join(d.dir, lockName)
		return &seam.Error{Kind: seam.ErrAlreadyOwned, Op: "open", ID: h.id, Pos: seam.PathPos(path),
			Err: s.lockHolder(path)}
	}
	if err != nil {
		return &seam.Error{Kind: seam.ErrIO, Op: "open", ID: h.id, Pos: seam.NoPos, Err: err}
	}
	h.w.lock, h.w.lockFI = lock, fi
	// The folder read before the lock may be stale: a writer that held the
	// lock may have migrated the log to a new generation meanwhile, and an
	// append to the old one would land where nobody reads. Under the lock
	// it cannot change: read it again.
	if d, err = s.inspect("open", h.id, d.project, filepath.Base(d.dir)); err != nil {
		return err
	}
	if d.live < 0 {
		return seam.NotFound("open", h.id)
	}
	h.dir = d
	removeStaleTemps(s.fs, d)
	l, err := s.openLog("open", d, os.O_RDWR|os.O_APPEND)
	if err != nil {
		return err
	}
	h.log = l
	st, err := l.f.Stat()
	if err != nil {
		return l.ioError(err, -1)
	}
	if err := h.checkInUse(ctx, st); err != nil {
		return err
	}
	size := st.Size()
	dec, done := s.decs.once(ctx, l.lim.frame)
	hi, err := l.readHeader(size, dec)
	done()
	if err != nil {
		return err
	}
	if err := s.checkProject(l, d, &hi.hdr); err != nil {
		return err
	}
	h.hdr = hi.hdr
	h.body = hi.body()
	// Only the tail is read: from the last turn/end on, what a full read
	// would decide is decided the same way (see tailStart).
	r := h.reader(false)
	cp, err := r.tailStart(ctx, size, 0, true)
	if err != nil {
		return err
	}
	if err := r.checkChain(ctx, cp); err != nil {
		return err
	}
	if cp.at.relative {
		r.onCheckpoint = nil
	}
	end, _, err := r.forward(ctx, cp, size, budget{}, 0, func(*seam.Event) bool { return true })
	if err != nil {
		return err
	}
	if h.inherited, err = end.marker.Result(&h.hdr); err != nil {
		if !cp.at.relative || !h.hdr.Seeded() {
			return l.located(err, seam.ErrCorrupt, l.pos(0, -1, 1, -1))
		}
		// A seeded log whose marker is before the tail: find it as a read
		// open does.
		if h.inherited, err = h.findInherited(ctx, size); err != nil {
			return err
		}
	}
	if cp.at.relative {
		// Later scans of the handle (the open turn of --close-interrupted)
		// start from there too, not from the header.
		h.cps = append(h.cps, cp)
	}
	h.w.size, h.w.next, h.w.cut, h.w.physEnd = size, end.next, end.cutOffset(), end.physEnd
	if b := end.bad; b != nil && b.frame >= 0 && b.off > b.frameText {
		if h.w.salvage, err = l.frameText(b.frameOff, size, b.off-b.frameText); err != nil {
			return err
		}
	}
	return nil
}

// frameText returns the first n decoded bytes of the frame at off.
func (l *logFile) frameText(off, size, n int64) ([]byte, error) {
	f, err := zstdframe.ParseFrame(l.f, off, size)
	if err != nil {
		return nil, l.frameError(err, -1, 0)
	}
	d, err := zstdframe.NewDecoder()
	if err != nil {
		return nil, l.ioError(err, off)
	}
	defer d.Close()
	content, err := d.DecodeAll(l.f, f, n)
	if err != nil && !errors.Is(err, zstdframe.ErrTooLarge) {
		return nil, l.frameError(err, -1, 0)
	}
	if err != nil {
		rd, err := d.NewReader(l.f, f)
		if err != nil {
			return nil, l.frameError(err, -1, 0)
		}
		content = make([]byte, n)
		if _, err := io.ReadFull(rd, content); err != nil {
			return nil, l.frameError(err, -1, 0)
		}
	}
	return content[:n], nil
}

// writable checks that h is an open write handle.
func (h *handle) writable(op string) error {
	return seam.CheckWritable(op, h.id, h.closed, h.access)
}

// Append validates the batch, removes a torn or uncommitted tail (keeping
// its bytes in a backup file), writes the batch as one zstd frame (or its
// lines) with O_APPEND and fsyncs. On a failed write the file is cut back,
// so a retry never leaves a seq gap.
func (h *handle) Append(ctx context.Context, events []seam.Event) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.writable("append"); err != nil {
		return err
	}
	batch, err := seam.PrepareBatch(h.id, h.hdr.Version, h.w.next, events)
	if err != nil {
		return err
	}
	if len(batch) == 0 {
		return nil
	}
	var lines []byte
	for i := range batch {
		lines = appendRecord(lines, &batch[i], h.hdr.Version)
	}
	if h.w.pending {
		err = h.materialize(lines, int64(len(batch)))
	} else {
		h.noteWriting()
		err = h.appendLines(ctx, lines, int64(len(batch)))
	}
	h.noteWrote()
	return seam.Wrap(err, seam.ErrIO, "append", h.id)
}

// appendRecord appends the physical line of e in format v: v2+ logs store
// sourceEventSeqs range-encoded.
func appendRecord(dst []byte, e *seam.Event, v int) []byte {
	if v < 2 || e.SourceEventSeqs == nil {
		return append(e.AppendJSON(dst), '\n')
	}
	c := *e
	c.SourceEventSeqs = nil
	dst = c.AppendJSON(dst)
	dst = append(dst[:len(dst)-1], `,"sourceEventSeqs":`...)
	dst = seam.AppendSourceSeqsV2(dst, e.SourceEventSeqs)
	return append(dst, '}', '\n')
}

// appendLines appends lines holding n events to the stored log.
func (h *handle) appendLines(ctx context.Context, lines []byte, n int64) error {
	l, w := h.log, h.w
	if err := h.checkOwnership("append"); err != nil {
		return err
	}
	if len(w.salvage) > 0 {
		// The frame at cut holds committed records before the first
		// uncommitted one: write them back as a frame of their own, then
		// the batch's frame, without ever truncating them away.
		content := zstdframe.AppendFrame(nil, w.salvage)
		return h.replaceTail(ctx, "append", zstdframe.AppendFrame(content, lines), n)
	}
	if w.cut < w.size {
		if _, err := h.removeTail(ctx, "append"); err != nil {
			return err
		}
	}
	payload := lines
	if l.enc == Zstd {
		payload = zstdframe.AppendFrame(nil, lines)
	}
	// The last point to stop: once the write starts it is finished (or cut
	// back), never left half done.
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := h.write(payload); err != nil {
		return err
	}
	w.next += n
	return nil
}

// write appends payload at w.cut and fsyncs, or cuts the file back.
func (h *handle) write(payload []byte) error {
	l, w := h.log, h.w
	err := writeAll(l.f, payload)
	if err == nil {
		err = l.f.Sync()
	}
	if err != nil {
		if terr := l.f.Truncate(w.cut); terr != nil {
			w.size = -1 // unknown: checkOwnership fails from now on
			return l.ioError(errors.Join(err, fmt.Errorf("cutting the log back to %d bytes: %w", w.cut, terr)), w.cut)
		}
		w.size = w.cut
		if serr := l.f.Sync(); serr != nil {
			err = errors.Join(err, fmt.Errorf("syncing the log cut back to %d bytes: %w", w.cut, serr))
		}
		return l.ioError(err, w.cut)
	}
	w.size = w.cut + int64(len(payload))
	w.cut, w.physEnd = w.size, w.size
	return nil
}

func truncateSync(f file, size int64) error {
	if err := f.Truncate(size); err != nil {
		return err
	}
	return f.Sync()
}

// checkOwnership fails with ErrOwnershipLost when the lock file was
// replaced or the log changed behind the handle.
func (h *handle) checkOwnership(op string) error {
	l, w := h.log, h.w
	lost := func(why string) error {
		return &seam.Error{Kind: seam.ErrOwnershipLost, Op: op, ID: h.id, Pos: l.pos(-1, -1, -1, -1), Err: errors.New(why)}
	}
	fi, err := h.s.fs.Lstat(filepath.Join(h.dir.dir, lockName))
	if err != nil || !os.SameFile(fi, w.lockFI) {
		return lost("session.lock was removed or replaced")
	}
	st, err := l.f.Stat()
	if err != nil {
		return l.ioError(err, -1)
	}
	if st.Size() != w.size {
		return lost(fmt.Sprintf("the log is %d bytes, not the %d this handle wrote", st.Size(), w.size))
	}
	return nil
}

// removeTail copies the bytes [cut, size) to a backup file outside the
// store, fsyncs it, then truncates the log to cut and fsyncs. It returns
// the repairs it made. It never removes committed records: a zstd tail
// that starts inside a frame goes through replaceTail.
func (h *handle) removeTail(ctx context.Context, op string) ([]seam.Repair, error) {
	l, w := h.log, h.w
	path, err := h.s.backup(ctx, h.id, l, w.cut, w.size)
	if err != nil {
		return nil, err
	}
	if err := h.describeBackup(path); err != nil {
		return nil, err
	}
	// Saving took a while: a writer that takes no lock may have appended
	// meanwhile, which the cut would drop.
	if err := h.checkUnchanged(op, w.size); err != nil {
		h.s.fs.Remove(noteName(path))
		h.s.fs.Remove(path)
		return nil, err
	}
	if err := truncateSync(l.f, w.cut); err != nil {
		return nil, l.ioError(fmt.Errorf("removing the tail after byte %d: %w", w.cut, err), w.cut)
	}
	reps := h.noteRepairs(path)
	w.size, w.physEnd = w.cut, w.cut
	return reps, nil
}

// noteRepairs records the removal of [cut, size), saved to backup, as the
// handle's repairs (see tailRepairs).
func (h *handle) noteRepairs(backup string) []seam.Repair {
	reps := h.tailRepairs(backup)
	h.w.repairs = append(h.w.repairs, reps...)
	return reps
}

// tailRepairs describes the removal of [cut, size), saved to backup: an
// uncommitted tail [cut, physEnd) and a torn one [physEnd, size).
func (h *handle) tailRepairs(backup string) []seam.Repair {
	w := h.w
	var reps []seam.Repair
	if w.physEnd > w.cut {
		reps = append(reps, seam.Repair{Path: h.log.path, Offset: w.cut, Bytes: w.physEnd - w.cut,
			Kind: seam.RepairUncommitted, Backup: backup, Rewritten: int64(len(w.salvage))})
	}
	if w.size > max(w.physEnd, w.cut) {
		from := max(w.physEnd, w.cut)
		reps = append(reps, seam.Repair{Path: h.log.path, Offset: from, Bytes: w.size - from,
			Kind: seam.RepairTorn, Backup: backup})
	}
	return reps
}

// replaceTail replaces the bytes [cut, size) of the log with content (whole
// frames), which holds n new events, so that no failure point loses a
// committed record: the removed bytes are backed up first; then the log's
// first cut bytes and content are written to a new temp file beside it
// (mode 0600, exclusive create), fsynced, renamed over the log and the
// directory fsynced. Until the rename the log is untouched; after it the
// log holds everything. The session lock is on session.lock, so the rename
// keeps it. Only a zstd tail that starts inside a frame pays this copy.
func (h *handle) replaceTail(ctx context.Context, op string, content []byte, n int64) error {
	return h.replaceTailWith(ctx, op, int64(len(content)), func(w io.Writer) (int64, error) {
		_, err := w.Write(content)
		return n, err
	})
}

// replaceTailWith is replaceTail with the new content written by body
// (which returns the events it wrote), size bytes or more of it.
func (h *handle) replaceTailWith(ctx context.Context, op string, size int64, body func(io.Writer) (int64, error)) error {
	l, w, fsys := h.log, h.w, h.s.fs
	// The copy needs room for the whole log up to the tail: check first,
	// rather than fail with a full disk halfway.
	need := w.cut + size
	if free, err := fsys.FreeSpace(filepath.Dir(l.path)); err == nil && free < need {
		return l.ioError(fmt.Errorf("removing the uncommitted tail rewrites the log: that needs %d bytes free in %s, and %d are (the log is unchanged)",
			need, filepath.Dir(l.path), free), w.cut)
	}
	backup, err := h.s.backup(ctx, h.id, l, w.cut, w.size)
	if err != nil {
		return err
	}
	if err := h.describeBackup(backup); err != nil {
		return err
	}
	var suffix [6]byte
	if _, err := rand.Read(suffix[:]); err != nil {
		return l.ioError(err, w.cut)
	}
	tmp := l.path + "." + hex.EncodeToString(suffix[:]) + ".tmp"
	f, err := fsys.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
	if err != nil {
		return l.ioError(fmt.Errorf("rewriting the log: %w", err), w.cut)
	}
	// The new log keeps the old one's mode, owner and group: a repair run
	// as root must not take the session from its owner.
	fi, err := l.f.Stat()
	if err == nil {
		err = durable.KeepOwner(f, fi)
	}
	if err == nil {
		err = osfs.CopyRange(ctx, f, l.f, 0, w.cut)
	}
	var n int64
	cw := &countWriter{w: f}
	if err == nil {
		bw := bufio.NewWriterSize(cw, streamBuffer)
		if n, err = body(bw); err == nil {
			err = bw.Flush()
		}
	}
	if err == nil {
		err = f.Sync()
	}
	if err == nil {
		// The copy took a while: a writer that takes no lock may have
		// appended meanwhile, which the rename would drop.
		if err = h.checkUnchanged(op, w.size); err != nil {
			f.Close()
			fsys.Remove(tmp)
			return err
		}
		err = fsys.Rename(tmp, l.path)
	}
	if err != nil {
		f.Close()
		fsys.Remove(tmp)
		return l.ioError(fmt.Errorf("rewriting the log without its tail after byte %d (the log is unchanged): %w", w.cut, err), w.cut)
	}
	// The renamed file is the log now: its descriptor, opened O_APPEND,
	// replaces the old one. Scans of this handle still reading the old
	// one keep it until the handle closes.
	late := h.saveLate(ctx, op, l, w.size)
	nl := *l
	nl.f = f
	h.retireLocked(l)
	h.log = &nl
	h.noteRepairs(backup)
	w.size = w.cut + cw.n
	w.cut, w.physEnd, w.salvage = w.size, w.size, nil
	w.next += n
	if err := syncDir(fsys, filepath.Dir(l.path)); err != nil {
		return l.ioError(fmt.Errorf("the log was rewritten with the batch, but a crash may still undo it: %w", err), -1)
	}
	return late
}

// writeAll writes p to f; a short write is an error.
func writeAll(f file, p []byte) error {
	m, err := f.Write(p)
	if err == nil && m != len(p) {
		err = errors.New("short write")
	}
	return err
}

// Repairs returns the torn or uncommitted tails this write handle removed
// before its appends, oldest first; nil for a read handle. It implements
// seam.TailRepairer.
func (h *handle) Repairs() []seam.Repair {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.w == nil {
		return nil
	}
	return slices.Clone(h.w.repairs)
}

// ErrNoBackupDir fails a repair of a store opened without
// Options.BackupDir: removed bytes are always kept, so without a place for
// them nothing is removed.
var ErrNoBackupDir = seam.ErrNoBackupDir

// backup copies [from, to) of l to <backup dir>/<safe id>/<time>-<from>.bin
// and fsyncs it and its directory.
func (s *Store) backup(ctx context.Context, id string, l *logFile, from, to int64) (string, error) {
	if s.opts.BackupDir == "" {
		return "", l.ioError(ErrNoBackupDir, from)
	}
	dir := filepath.Join(s.opts.BackupDir, SafeName(id))
	if err := durable.MkdirAll(s.fs, dir, 0o700); err != nil {
		return "", l.ioError(fmt.Errorf("backup directory: %w", err), from)
	}
	name := fmt.Sprintf("%s-%d.bin", time.Now().UTC().Format("20060102T150405.000000000Z"), from)
	path := filepath.Join(dir, name)
	f, err := s.fs.CreateIn(dir, name, 0o600)
	if err != nil {
		return "", l.ioError(fmt.Errorf("backup: %w", err), from)
	}
	err = osfs.CopyRange(ctx, f, l.f, from, to)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = syncDir(s.fs, dir)
	}
	if err != nil {
		s.fs.Remove(path)
		return "", l.ioError(fmt.Errorf("backup %s: %w", path, err), from)
	}
	return path, nil
}

// materialize writes a created session: a temp file holding the header
// (its own frame in zstd) and the first batch, fsynced, published with
// link(2) so that a racing creator gets ErrAlreadyExists, then the temp is
// unlinked and the directory fsynced.
func (h *handle) materialize(lines []byte, n int64) error {
	return h.materializeWith(func(w io.Writer) (int64, error) {
		var err error
		switch {
		case len(lines) == 0:
		case h.s.Encoding() == Zstd:
			_, err = w.Write(zstdframe.AppendFrame(nil, lines))
		default:
			_, err = w.Write(lines)
		}
		return n, err
	})
}

// materializeWith is materialize with the body after the header written
// by body, which returns the events it wrote.
func (h *handle) materializeWith(body func(io.Writer) (int64, error)) error {
	s, d := h.s, h.dir
	exists := func() error {
		return &seam.Error{Kind: seam.ErrAlreadyExists, Op: "create", ID: h.id, Pos: seam.NoPos,
			Err: fmt.Errorf("session %q already exists", h.id)}
	}
	madeSession, madeProject, err := s.mkdirSession(d)
	if err != nil {
		return &seam.Error{Kind: seam.ErrIO, Op: "create", ID: h.id, Pos: seam.NoPos, Err: err}
	}
	lock, lockFI, err := s.lockSession(d.dir)
	if errors.Is(err, seam.ErrAlreadyOwned) {
		return exists()
	}
	if err != nil {
		return &seam.Error{Kind: seam.ErrIO, Op: "create", ID: h.id, Pos: seam.NoPos, Err: err}
	}
	ok, unpublished := false, false
	defer func() {
		if ok {
			return
		}
		// A create that failed before it published its log (a full disk,
		// say) leaves no empty session folder behind: the folders it made
		// go, if they hold nothing but its lock. Nobody else can use that
		// lock: it is held, and no log was ever published next to it.
		if madeSession && unpublished {
			s.fs.Remove(filepath.Join(d.dir, lockName))
			s.fs.Remove(d.dir)
			if madeProject {
				s.fs.Remove(filepath.Join(s.root, d.project))
			}
		}
		lock.Close()
	}()
	if cur, err := s.inspect("create", h.id, d.project, filepath.Base(d.dir)); err != nil || cur.live >= 0 {
		return exists() // a racing creator published first: its lock stays
	}
	unpublished = true
	gen, enc := h.hdr.Version, s.Encoding()
	final := filepath.Join(d.dir, LogName(gen, enc))
	headerLine := append(h.hdr.AppendJSON(nil), '\n')
	content := headerLine
	if enc == Zstd {
		content = zstdframe.AppendFrame(nil, headerLine)
	}
	bodyOff := int64(len(content))
	var n, size int64
	write := func(f file) error {
		if err := s.giveToFolder(f, d.dir); err != nil {
			return err
		}
		cw := &countWriter{w: f}
		bw := bufio.NewWriterSize(cw, streamBuffer)
		bw.Write(content)
		var err error
		if n, err = body(bw); err != nil {
			return err
		}
		err = bw.Flush()
		size = cw.n
		return err
	}
	var suffix [6]byte
	if _, err := rand.Read(suffix[:]); err != nil {
		return &seam.Error{Kind: seam.ErrIO, Op: "create", ID: h.id, Pos: seam.NoPos, Err: err}
	}
	tmp := final + "." + hex.EncodeToString(suffix[:]) + ".tmp"
	l := &logFile{path: final, id: h.id, enc: enc, gen: gen, decs: &s.decs, lim: s.lim}
	if err := writeNewWith(s.fs, tmp, write); err != nil {
		return l.ioError(err, 0)
	}
	err = s.fs.Link(tmp, final)
	s.fs.Remove(tmp)
	if errors.Is(err, fs.ErrExist) {
		unpublished = false
		return exists()
	}
	if err != nil {
		return l.ioError(err, 0)
	}
	unpublished = false
	for dir := d.dir; ; dir = filepath.Dir(dir) {
		if err := syncDir(s.fs, dir); err != nil {
			return l.ioError(err, 0)
		}
		if dir == s.root || filepath.Dir(dir) == dir {
			break
		}
	}
	f, err := s.fs.OpenFile(final, os.O_RDWR|os.O_APPEND, 0)
	if err != nil {
		return l.ioError(err, 0)
	}
	l.f = f
	ok = true
	d.live = gen
	h.log = l
	h.body = position{fileOff: bodyOff, textOff: int64(len(headerLine)), lineNo: 1, frame: 1}
	h.w = &writer{lock: lock, lockFI: lockFI, size: size, cut: size, next: n}
	s.writers.EndPending(h.id, h)
	return nil
}

// writeNew writes content to a new file (O_EXCL, 0600) and fsyncs it;
// prepare, when set, is called first with the new file.
func writeNew(fsys fileSystem, path string, content []byte, prepare func(file) error) error {
	return writeNewWith(fsys, path, func(f file) error {
		if prepare != nil {
			if err := prepare(f); err != nil {
				return err
			}
		}
		return writeAll(f, content)
	})
}

// writeNewWith is writeNew with the content written by write.
func writeNewWith(fsys fileSystem, path string, write func(file) error) error {
	f, err := fsys.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	err = write(f)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		fsys.Remove(path)
	}
	return err
}

// Flush is a durability barrier. Appends are durable when they return, so
// it only materializes a created session that has no event yet.
func (h *handle) Flush(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.writable("flush"); err != nil {
		return err
	}
	if h.w.pending {
		err := h.materialize(nil, 0)
		h.noteWrote() // a create without events is dshctl's write too
		return seam.Wrap(err, seam.ErrIO, "flush", h.id)
	}
	return nil
}

// closeWriter releases the session lock; a pending create leaves nothing.
func (h *handle) closeWriter(w *writer) error {
	if w == nil || w.lock == nil {
		return nil
	}
	return w.lock.Close()
}

// Flush materializes every open write handle of the store and joins their
// errors.
func (s *Store) Flush(ctx context.Context) error {
	var errs []error
	for _, h := range s.writers.Owners() {
		if err := h.Flush(ctx); err != nil && !errors.Is(err, seam.ErrHandleClosed) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Close marks the store closed; later calls on it fail. Handles stay
// usable until they are closed.
func (s *Store) Close() error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.decs.close()
	return nil
}
