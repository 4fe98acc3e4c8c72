package jsonl

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/dshctl/dshctl/internal/procfd"
	"github.com/dshctl/dshctl/internal/seam"
)

// The note dshctl keeps in session.lock (whose content nothing else reads:
// the lock is the flock on it) says what it last did to the log: "dshctl
// wrote REVISION" once a write is done, "dshctl writing PID" while one is
// under way (so that a write killed midway is still known as its own).
var (
	noteWrote   = []byte("dshctl wrote ")
	noteWriting = []byte("dshctl writing ")
)

// checkInUse refuses, before anything is written, a session that another
// process looks to be writing (Options.ProbeWriters, InUseWindow): one
// that has the log open for writing, or whose log, fi, changed moments ago
// and not by dshctl. It runs under the session lock, which dshctl's own
// writers take, so a change it did not note is another writer's.
func (h *handle) checkInUse(ctx context.Context, fi fs.FileInfo) error {
	s, l := h.s, h.log
	cannotTell := false
	if s.opts.ProbeWriters {
		hs, err := procfd.Writers(ctx, l.path)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		cannotTell = errors.Is(err, procfd.ErrCannotTell)
		if err == nil && len(hs) > 0 {
			return inUse(h.id, l.path, &seam.InUseError{PID: hs[0].PID, Command: hs[0].Command, Path: l.path, AnyAccess: hs[0].AnyAccess})
		}
	}
	if s.opts.InUseWindow <= 0 {
		return nil
	}
	age := time.Since(fi.ModTime())
	if age >= s.opts.InUseWindow {
		return nil
	}
	note := h.readNote()
	if bytes.HasPrefix(note, noteWriting) || bytes.Equal(note, append(noteWrote, revision(fi)...)) {
		return nil
	}
	return inUse(h.id, l.path, &seam.InUseError{Path: l.path, ChangedAgo: max(age, 0), CannotTell: cannotTell})
}

func inUse(id, path string, cause *seam.InUseError) error {
	return &seam.Error{Kind: seam.ErrAlreadyOwned, Op: "open", ID: id, Pos: seam.PathPos(path), Err: cause}
}

// readNote returns the note in the session's lock file, without its
// newline; nil when there is none.
func (h *handle) readNote() []byte {
	buf := make([]byte, 256)
	n, _ := h.w.lock.ReadAt(buf, 0)
	line, _, _ := bytes.Cut(buf[:n], []byte{'\n'})
	return line
}

// noteWriting records in the lock file that a write of this handle is
// under way, keeping the note it replaces for noteWrote. The note is a
// hint for checkInUse, not data: a failure to note is ignored (the next
// write open may then take the change for another writer's, which --force
// overrides).
func (h *handle) noteWriting() {
	w := h.w
	if w == nil || w.lock == nil {
		return
	}
	w.noteBefore = h.readNote()
	h.putNote(fmt.Appendf(append([]byte{}, noteWriting...), "%d", os.Getpid()))
}

// noteWrote records in the lock file that the write is done, with the
// log's revision then, when the log is the size the write left it
// (w.size). When it is not, another writer changed the log too (or the
// write was given up because it had), and that change must not pass for
// dshctl's own: the note from before the write is put back.
func (h *handle) noteWrote() {
	w := h.w
	if w == nil || w.lock == nil || h.log == nil {
		return
	}
	note := w.noteBefore
	if fi, err := h.s.fs.Stat(h.log.path); err == nil && fi.Size() == w.size {
		note = append(append([]byte{}, noteWrote...), revision(fi)...)
	}
	h.putNote(note)
}

// putNote replaces the note in the lock file with note.
func (h *handle) putNote(note []byte) {
	lock := h.w.lock
	if lock.Truncate(0) == nil && len(note) > 0 {
		lock.WriteAt(append(note, '\n'), 0)
	}
}

// checkUnchanged fails, with nothing written, when the log is no longer
// size bytes: a writer that takes no lock (dsh 0.1.0) appended to it after
// the write open, and what dshctl was about to do (cut the log, or rename a
// rewritten copy over it) would drop what it wrote.
func (h *handle) checkUnchanged(op string, size int64) error {
	l := h.log
	st, err := l.f.Stat()
	if err != nil {
		return l.ioError(err, -1)
	}
	if st.Size() == size {
		return nil
	}
	return &seam.Error{Kind: seam.ErrAlreadyOwned, Op: op, ID: h.id, Pos: seam.Pos{Path: l.path, Offset: size, Frame: -1, Line: -1, Seq: -1},
		Err: &seam.InUseError{Path: l.path, Wrote: st.Size() - size}}
}

// saveLate saves what another process appended to old, the log that a
// rename just replaced, after checkUnchanged found it size bytes: those
// bytes are in no log now. It returns the error that says so and where
// they are (nil when there are none).
func (h *handle) saveLate(ctx context.Context, op string, old *logFile, size int64) error {
	st, err := old.f.Stat()
	if err != nil || st.Size() <= size {
		return nil
	}
	n := st.Size() - size
	backup, err := h.s.backup(ctx, h.id, old, size, st.Size())
	if err != nil {
		return &seam.Error{Kind: seam.ErrOwnershipLost, Op: op, ID: h.id, Pos: old.pos(size, -1, -1, -1),
			Err: fmt.Errorf("another process appended %d bytes to the log as dshctl replaced it, and saving them failed: %w", n, err)}
	}
	return &seam.Error{Kind: seam.ErrOwnershipLost, Op: op, ID: h.id, Pos: old.pos(size, -1, -1, -1),
		Err: fmt.Errorf("another process appended %d bytes to the log as dshctl replaced it: they are not in the log, and are saved to %s", n, backup)}
}
