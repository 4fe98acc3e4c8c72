package jsonl

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/dshctl/dshctl/internal/durable"
	"github.com/dshctl/dshctl/internal/jsonl/zstdframe"
	"github.com/dshctl/dshctl/internal/seam"
)

var _ seam.Renumberer = (*Store)(nil)

// Renumber rewrites a log whose only damage is seqs that repeat (or go
// back): what two writers leave when both append from the same next seq
// (seam.Renumberer). Every record is kept, in the order the log holds
// them; the events get contiguous seqs from 0, and what an event cites by
// seq (sourceEventSeqs, a replace surfaceOp) follows the event it cited:
// a cited seq means the event of that seq in the run of records the
// citing one belongs to (its writer's own records), or else in the latest
// run before it that holds that seq. Records whose seqs and citations do
// not change are written back byte for byte; a changed packed row is
// written as its events. A zstd log keeps one frame per frame.
//
// It takes the session lock and refuses a session another process looks
// to be writing, as a write open does. It refuses (ErrCorrupt, nothing
// changed) a log with a torn or invalid record, a seq gap, an event type
// the format does not know, or a citation that the new numbering cannot
// place below the citing event. The whole log is copied to a backup file
// (fsynced) before the new log, written beside it and fsynced, is renamed
// over it, keeping its owner and mode; the folder is then fsynced. A log
// whose seqs do not repeat is left as it is. With DryRun nothing is
// written.
func (s *Store) Renumber(ctx context.Context, id string, o seam.RenumberOptions) (seam.RenumberResult, error) {
	var res seam.RenumberResult
	if err := s.check(ctx, "renumber"); err != nil {
		return res, err
	}
	h := &handle{s: s, id: id, access: seam.Write, w: &writer{}}
	if err := s.writers.Claim("renumber", id, h); err != nil {
		return res, err
	}
	defer s.writers.Release(id, h)
	defer func() {
		if h.w.lock != nil {
			h.w.lock.Close()
		}
		if h.log != nil {
			h.log.f.Close()
		}
	}()
	d, err := s.find("renumber", id)
	if err != nil {
		return res, err
	}
	lock, fi, err := s.lockSession(d.dir)
	if errors.Is(err, seam.ErrAlreadyOwned) {
		path := filepath.Join(d.dir, lockName)
		return res, &seam.Error{Kind: seam.ErrAlreadyOwned, Op: "renumber", ID: id, Pos: seam.PathPos(path),
			Err: s.lockHolder(path)}
	}
	if err != nil {
		return res, &seam.Error{Kind: seam.ErrIO, Op: "renumber", ID: id, Pos: seam.NoPos, Err: err}
	}
	h.w.lock, h.w.lockFI = lock, fi
	if d, err = s.inspect("renumber", id, d.project, filepath.Base(d.dir)); err != nil {
		return res, err
	}
	if d.live < 0 {
		return res, seam.NotFound("renumber", id)
	}
	h.dir = d
	l, err := s.openLog("renumber", d, os.O_RDWR|os.O_APPEND)
	if err != nil {
		return res, err
	}
	h.log = l
	st, err := l.f.Stat()
	if err != nil {
		return res, seam.Wrap(l.ioError(err, -1), seam.ErrIO, "renumber", id)
	}
	if !o.DryRun {
		if err := h.checkInUse(ctx, st); err != nil {
			return res, err
		}
	}
	size := st.Size()
	res.Path = l.path
	// A first pass plans (and refuses what it cannot renumber) writing
	// nothing; the second writes the new log beside the old one.
	rn := renumbering{}
	if err := h.renumberTo(ctx, size, &rn, io.Discard); err != nil {
		return res, seam.Wrap(err, seam.ErrCorrupt, "renumber", id)
	}
	res.Events, res.Renumbered, res.Overlaps, res.Cites, res.FirstSeq = rn.next, rn.moved, rn.overlaps, rn.cites, rn.first
	if rn.overlaps == 0 || o.DryRun {
		return res, nil
	}
	h.noteWriting()
	defer h.noteWrote()
	if res.Backup, err = s.backup(ctx, id, l, 0, size); err != nil {
		return res, seam.Wrap(err, seam.ErrIO, "renumber", id)
	}
	if err := h.replaceLog(ctx, size); err != nil {
		return res, seam.Wrap(err, seam.ErrIO, "renumber", id)
	}
	return res, nil
}

// renumbering is the state of a renumbering pass over a log.
type renumbering struct {
	v    int
	next int64 // the next new seq
	// runs are the runs of records whose seqs follow on, oldest first:
	// the old seqs [from, to) of each, now numbered from base.
	runs []seqRun
	// expect is the old seq that continues the current run.
	expect int64
	// Counts for the result: events whose seq changed, places where seqs
	// repeated, citations changed, the first seq that changed (-1: none).
	moved, cites int64
	overlaps     int
	first        int64
}

type seqRun struct{ from, to, base int64 }

// mapSeq returns the new seq of old seq s cited from the run at index r:
// that run's event when it holds s, else the latest run before it that
// does.
func (rn *renumbering) mapSeq(s int64, r int) (int64, bool) {
	for i := r; i >= 0; i-- {
		if run := rn.runs[i]; run.from <= s && s < run.to {
			return run.base + s - run.from, true
		}
	}
	return 0, false
}

// record renumbers one record (line without its newline) and appends its
// new form to dst.
func (rn *renumbering) record(dst, line []byte) ([]byte, error) {
	rec, err := seam.DecodeRecord(line, rn.v)
	if err != nil {
		return dst, err
	}
	first := rec.FirstSeq()
	switch {
	case len(rn.runs) == 0 && first != 0:
		return dst, fmt.Errorf("the first event has seq %d, not 0", first)
	case len(rn.runs) == 0 || first < rn.expect:
		if len(rn.runs) > 0 {
			rn.overlaps++
		}
		rn.runs = append(rn.runs, seqRun{from: first, to: first, base: rn.next})
	case first > rn.expect:
		return dst, fmt.Errorf("seq gap: expected %d, got %d (a gap is not what two writers leave)", rn.expect, first)
	}
	r := len(rn.runs) - 1
	run := &rn.runs[r]
	events := rec.Events()
	changed := run.base != run.from
	for i := range events {
		e := &events[i]
		if err := seam.CheckVocabulary(e, rn.v); err != nil {
			return dst, err
		}
		run.to = e.Seq + 1
		old := e.Seq
		e.Seq = run.base + old - run.from
		if e.Seq != old {
			rn.moved++
			if rn.first < 0 || e.Seq < rn.first {
				rn.first = e.Seq
			}
		}
		if c, err := rn.cite(e, old, r); err != nil {
			return dst, err
		} else if c > 0 {
			changed = true
		}
	}
	rn.expect, rn.next = rec.NextSeq(), rn.next+int64(len(events))
	if !changed {
		return append(append(dst, line...), '\n'), nil
	}
	for i := range events {
		dst = appendRecord(dst, &events[i], rn.v)
	}
	return dst, nil
}

// cite moves what e (old seq old, of run r) cites to the new numbering and
// returns how many citations changed.
func (rn *renumbering) cite(e *seam.Event, old int64, r int) (int, error) {
	place := func(s int64) (int64, error) {
		if s == old {
			return e.Seq, nil
		}
		n, ok := rn.mapSeq(s, r)
		if !ok || n > e.Seq {
			return 0, fmt.Errorf("event seq %d (now %d) cites seq %d, which the renumbered log cannot place before it", old, e.Seq, s)
		}
		return n, nil
	}
	changed := 0
	for i, s := range e.SourceEventSeqs {
		n, err := place(s)
		if err != nil {
			return 0, err
		}
		if n != s {
			e.SourceEventSeqs[i], changed = n, changed+1
		}
	}
	if op := e.SurfaceOp; len(op) > 0 && op[0] == '{' {
		startKey, endKey := "start", "end"
		if rn.v >= 3 {
			startKey, endKey = "startSeq", "endSeq"
		}
		start, end, ok := replaceRange(op, startKey, endKey)
		if !ok {
			return 0, fmt.Errorf("event seq %d: surfaceOp is not a replace it can renumber", old)
		}
		ns, err1 := place(start)
		ne, err2 := place(end)
		if err := errors.Join(err1, err2); err != nil {
			return 0, err
		}
		if ns != start || ne != end {
			e.SurfaceOp = fmt.Appendf(nil, `{"op":"replace","%s":%d,"%s":%d}`, startKey, ns, endKey, ne)
			changed++
		}
	}
	rn.cites += int64(changed)
	return changed, nil
}

// replaceRange reads the start and end of a replace surfaceOp.
func replaceRange(op []byte, startKey, endKey string) (start, end int64, ok bool) {
	get := func(key string) (int64, bool) {
		k := []byte(`"` + key + `":`)
		i := bytes.Index(op, k)
		if i < 0 {
			return 0, false
		}
		rest := op[i+len(k):]
		j := 0
		for j < len(rest) && '0' <= rest[j] && rest[j] <= '9' {
			j++
		}
		n, err := strconv.ParseInt(string(rest[:j]), 10, 64)
		return n, err == nil
	}
	start, ok1 := get(startKey)
	end, ok2 := get(endKey)
	return start, end, ok1 && ok2
}

// renumberTo reads the whole log (size bytes) and writes its renumbered
// form to out: the header as stored, then every record. Memory holds a
// record (plain) or a frame (zstd) at a time.
func (h *handle) renumberTo(ctx context.Context, size int64, rn *renumbering, out io.Writer) error {
	l := h.log
	dec, done := h.s.decs.once(ctx, l.lim.frame)
	hi, err := l.readHeader(size, dec)
	done()
	if err != nil {
		return err
	}
	*rn = renumbering{v: hi.hdr.Version, first: -1}
	h.hdr = hi.hdr
	head := make([]byte, hi.bodyOff)
	if _, err := l.f.ReadAt(head, 0); err != nil {
		return l.ioError(err, 0)
	}
	if _, err := out.Write(head); err != nil {
		return err
	}
	if l.enc == Zstd {
		return h.renumberZstd(ctx, size, hi.bodyOff, rn, out)
	}
	var lr lineReader
	var buf []byte
	lr.reset(io.NewSectionReader(l.f, hi.bodyOff, size-hi.bodyOff), l.lim.record)
	off := hi.bodyOff
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		line, n, err := lr.next()
		switch {
		case err == io.EOF && n == 0:
			return nil
		case err == io.EOF:
			return l.errorf(seam.ErrCorrupt, l.pos(off, -1, -1, -1), "a torn tail at byte %d: run 'verify --repair' first", off)
		case err != nil:
			return l.located(err, seam.ErrCorrupt, l.pos(off, -1, -1, -1))
		}
		if len(line) > 1 {
			if buf, err = rn.record(buf[:0], line[:len(line)-1]); err != nil {
				return l.located(err, seam.ErrCorrupt, l.pos(off, -1, -1, -1))
			}
			if _, err := out.Write(buf); err != nil {
				return err
			}
		}
		off += n
	}
}

func (h *handle) renumberZstd(ctx context.Context, size, bodyOff int64, rn *renumbering, out io.Writer) error {
	l := h.log
	d, err := l.decoder(ctx)
	if err != nil {
		return err
	}
	defer l.putDecoder(d)
	var text, frame []byte
	for f, err := range zstdframe.Frames(io.NewSectionReader(l.f, 0, size), size) {
		if err != nil {
			return l.errorf(seam.ErrCorrupt, l.pos(f.Offset, -1, -1, -1), "%v: run 'verify' (a torn final frame: 'verify --repair') first", err)
		}
		if f.Offset < bodyOff {
			continue
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if text, err = d.DecodeTo(&text, l.f, f, l.lim.frame); err != nil {
			return l.frameError(err, -1, 0)
		}
		frame = frame[:0]
		for rest := text; len(rest) > 0; {
			i := bytes.IndexByte(rest, '\n')
			if i < 0 {
				return l.errorf(seam.ErrCorrupt, l.pos(f.Offset, -1, -1, -1), "the frame at byte %d ends inside a record", f.Offset)
			}
			if i > 0 {
				if frame, err = rn.record(frame, rest[:i]); err != nil {
					return l.located(err, seam.ErrCorrupt, l.pos(f.Offset, -1, -1, -1))
				}
			}
			rest = rest[i+1:]
		}
		if _, err := out.Write(zstdframe.AppendFrame(nil, frame)); err != nil {
			return err
		}
	}
	return nil
}

// replaceLog writes the renumbered log beside the log (size bytes), fsyncs
// it, keeps the log's owner and mode, renames it over the log and fsyncs
// the folder. Until the rename the log is untouched.
func (h *handle) replaceLog(ctx context.Context, size int64) error {
	l, fsys := h.log, h.s.fs
	if free, err := fsys.FreeSpace(filepath.Dir(l.path)); err == nil && free < size {
		return l.ioError(fmt.Errorf("renumbering rewrites the log: that needs about %d bytes free in %s, and %d are (the log is unchanged)",
			size, filepath.Dir(l.path), free), -1)
	}
	var suffix [6]byte
	if _, err := rand.Read(suffix[:]); err != nil {
		return l.ioError(err, -1)
	}
	tmp := l.path + "." + hex.EncodeToString(suffix[:]) + ".tmp"
	f, err := fsys.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
	if err != nil {
		return l.ioError(fmt.Errorf("rewriting the log: %w", err), -1)
	}
	fi, err := l.f.Stat()
	if err == nil {
		err = durable.KeepOwner(f, fi)
	}
	if err == nil {
		bw := bufio.NewWriterSize(fileWriter{f}, 1<<20)
		var rn renumbering
		if err = h.renumberTo(ctx, size, &rn, bw); err == nil {
			err = bw.Flush()
		}
	}
	if err == nil {
		err = f.Sync()
	}
	var st fs.FileInfo
	if err == nil {
		st, err = f.Stat()
	}
	if err == nil {
		// A writer that takes no lock may have appended meanwhile: the
		// rename would drop it.
		if err = h.checkUnchanged("renumber", size); err != nil {
			f.Close()
			fsys.Remove(tmp)
			return err
		}
		err = fsys.Rename(tmp, l.path)
	}
	if err != nil {
		f.Close()
		fsys.Remove(tmp)
		return l.ioError(fmt.Errorf("rewriting the log renumbered (the log is unchanged): %w", err), -1)
	}
	old := *l
	l.f = f
	h.w.size = st.Size()
	late := h.saveLate(ctx, "renumber", &old, size)
	old.f.Close()
	if err := syncDir(fsys, filepath.Dir(l.path)); err != nil {
		return l.ioError(fmt.Errorf("the log was renumbered, but a crash may still undo it: %w", err), -1)
	}
	return late
}

// fileWriter is a file as an io.Writer whose short writes are errors.
type fileWriter struct{ f file }

func (w fileWriter) Write(p []byte) (int, error) {
	if err := writeAll(w.f, p); err != nil {
		return 0, err
	}
	return len(p), nil
}
