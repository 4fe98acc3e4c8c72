package jsonl

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/dshctl/dshctl/internal/jsonl/zstdframe"
	"github.com/dshctl/dshctl/internal/seam"
)

var _ seam.LogVerifier = (*Store)(nil)

// VerifyLog checks the folder of session id and reads its live log once,
// front to back, telling v what it finds (seam.LogVerifier): the folder's
// layout, the header, every frame's structure and checksum, every record,
// and the torn tail with the complete records a torn zstd frame holds.
// Memory stays bounded by verify's buffers and the largest record it
// checks, whatever the log holds.
func (s *Store) VerifyLog(ctx context.Context, id string, v seam.LogVisitor) (seam.LogSummary, error) {
	var sum seam.LogSummary
	if err := s.check(ctx, "verify"); err != nil {
		return sum, err
	}
	seg, err := EncodeSegment(id)
	if err != nil {
		return sum, seam.Errorf(seam.ErrInvalid, "verify", id, seam.NoPos, "%v", err)
	}
	projects, err := s.sessionProjects(seg)
	if err != nil {
		return sum, &seam.Error{Kind: seam.ErrIO, Op: "verify", ID: id, Pos: seam.NoPos, Err: err}
	}
	switch len(projects) {
	case 0:
		return sum, seam.NotFound("verify", id)
	case 1:
	default:
		dirs := []string{filepath.Join(s.root, projects[0], seg), filepath.Join(s.root, projects[1], seg)}
		sum.Location = seam.Location{Backend: "jsonl", Path: dirs[0], Encoding: string(s.Encoding())}
		v.Finding(duplicateFinding(id, dirs[0], len(projects), dirs...))
		return sum, nil
	}
	fc, err := s.checkFolder(projects[0], seg)
	if err != nil {
		// The folder, as the log is unknown: a report of a folder that
		// cannot be read says where it is.
		sum.Location = seam.Location{Path: fc.dir}
		return sum, &seam.Error{Kind: seam.ErrIO, Op: "verify", ID: id, Pos: seam.NoPos, Err: err}
	}
	d := &fc.sessionDir
	d.id = id
	sum.Location = s.location(d)
	for _, f := range fc.findings {
		v.Finding(f)
	}
	if d.live < 0 {
		if len(fc.findings) > 0 {
			return sum, nil // the findings say why there is no log to read
		}
		return sum, seam.NotFound("verify", id)
	}
	l, err := s.openLog("verify", d, os.O_RDONLY)
	if err != nil {
		return sum, err
	}
	defer l.f.Close()
	st, err := l.f.Stat()
	if err != nil {
		return sum, seam.Wrap(l.ioError(err, -1), seam.ErrIO, "verify", id)
	}
	sum.Size = st.Size()
	out := newAsyncOut(v)
	w := &logWalk{ctx: ctx, s: s, l: l, d: d, v: out, size: sum.Size, ver: l.gen, max: l.lim.record}
	_, w.bulk = v.(junkVisitor)
	w.bulk = w.bulk && !verifyNoJunkRuns
	if verifyMaxRecord > 0 {
		w.max = verifyMaxRecord
	}
	if l.enc == Zstd {
		err = w.zstd(ctx)
	} else {
		err = w.plain(ctx)
	}
	out.close()
	sum.Frames, sum.Lines = w.frames, int64(w.lineNo)
	return sum, seam.Wrap(err, seam.ErrIO, "verify", id)
}

// sessionProjects returns the project folders that hold a folder named seg.
func (s *Store) sessionProjects(seg string) ([]string, error) {
	projects, err := s.fs.ReadDir(s.root)
	if err != nil {
		return nil, err
	}
	var found []string
	for _, p := range projects {
		if !p.IsDir() || !isProjectFolder(p.Name()) {
			continue
		}
		if fi, err := s.fs.Lstat(filepath.Join(s.root, p.Name(), seg)); err == nil && fi.IsDir() {
			found = append(found, p.Name())
		}
	}
	return found, nil
}

// logWalk is one front-to-back check of a log.
type logWalk struct {
	ctx  context.Context
	s    *Store
	l    *logFile
	d    *sessionDir
	v    walkOut
	size int64
	// ver is the format the body is read as: the header's, or the
	// file's generation when the header is not valid.
	ver    int
	stop   bool // the body cannot be read (a header of a newer format)
	lineNo int
	frames int64
	max    int64 // the record limit (verifyMaxRecord in tests)
	// bulk says the visitor takes runs of junk as counts; junk is the
	// length of the run of junk records the last record ended.
	bulk bool
	junk int
}

func (w *logWalk) pos(off int64, frame int) seam.Pos {
	return w.l.pos(off, frame, w.lineNo, -1)
}

func (w *logWalk) finding(class seam.FindingClass, code string, p seam.Pos, format string, args ...any) {
	w.v.Finding(seam.Finding{Class: class, Code: code, Message: fmt.Sprintf(format, args...), Pos: p})
}

// damage reports err, an error of the log's readers, as damage.
func (w *logWalk) damage(code string, err error) {
	p := w.l.pos(-1, -1, -1, -1)
	var se *seam.Error
	if errors.As(err, &se) {
		p = se.Pos
	}
	w.finding(seam.ClassDamage, code, p, "%v", causeOf(err))
}

// header checks the header line (without its '\n') as readHeader does, but
// reports each problem on its own and goes on where it can.
func (w *logWalk) header(line []byte, p seam.Pos) {
	l := w.l
	h, err := seam.ParseHeader(line)
	v, ok := h.Version, err == nil
	if err != nil {
		v, ok = headerVersion(line)
	}
	if ok && v > l.gen && v <= seam.MaxVersion || errors.Is(err, seam.ErrUnsupportedFormat) {
		msg := fmt.Sprintf("log format v%d in %s, which holds format v%d: written by a newer dsh", v, filepath.Base(l.path), l.gen)
		if err != nil && errors.Is(err, seam.ErrUnsupportedFormat) {
			msg = causeOf(err).Error()
		}
		w.finding(seam.ClassDamage, "header-unsupported", p, "%s; the log's records are not checked", msg)
		w.v.Header(seam.Header{Version: l.gen}, false)
		w.stop = true
		return
	}
	if err != nil {
		w.finding(seam.ClassDamage, "header-invalid", p, "%v", causeOf(err))
		w.v.Header(seam.Header{Version: l.gen}, false)
		return
	}
	if h.Version != l.gen {
		w.finding(seam.ClassDamage, "header-version", p, "header version %d does not match the file's generation %d", h.Version, l.gen)
	}
	if h.ID != l.id {
		w.finding(seam.ClassDamage, "header-id", p, "header id %q does not match the session folder (id %q)", h.ID, l.id)
	}
	if err := w.s.checkProject(l, w.d, &h); err != nil {
		w.damage("project-folder", err)
	}
	w.v.Header(h, true)
}

// headerless reports a log without a complete header record; why, if
// not empty, says more.
func (w *logWalk) headerless(p seam.Pos, why string) {
	w.finding(seam.ClassDamage, "empty-log", p, "%s %s%s", errHeaderless, w.l.encName(), why)
	w.v.Header(seam.Header{Version: w.l.gen}, false)
}

// record checks one complete body line (with its '\n').
func (w *logWalk) record(line []byte, p seam.Pos) {
	w.v.record(line, p, w.ver)
	if w.bulk && isJunk(line) {
		w.junk++
	} else {
		w.junk = 0
	}
}

// junkRun says whether the records sent one by one end a run of junk long
// enough for the rest of it to be counted (junkRunAfter).
func (w *logWalk) junkRun() bool { return w.junk >= junkRunAfter }

// skippedJunk reports the records of a run of junk counted in bulk, the
// first at p.
func (w *logWalk) skippedJunk(p seam.Pos, records int64) {
	if records > 0 {
		w.v.BadRecords(p, records)
	}
}

// tooLong reports a line verify skips: a record not checked, which the
// commit rule cannot count as sound.
func (w *logWalk) tooLong(p seam.Pos, n int64) {
	// Over the reader's own limit, every reader stops at it: a repair
	// cannot read it either.
	w.v.BadRecord(p, &seam.NotCheckedError{Why: fmt.Sprintf("record of %d bytes, more than the %d bytes verify holds", n, w.max),
		OverLimit: n > w.l.lim.record}, false)
}

// plain checks a plain log: the header line, then each line (a run of
// empty lines as one, with its first line's position).
func (w *logWalk) plain(ctx context.Context) error {
	l := w.l
	src := &section{ctx: ctx, r: l.f, end: w.size}
	var lr lineReader
	lr.reset(src, w.max)
	lr.ra = src
	var off int64
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		line, n, err := lr.next()
		if err != nil && err != io.EOF && !errors.Is(err, errLongLine) {
			return l.ioError(err, off)
		}
		if err == io.EOF {
			if w.lineNo == 0 {
				w.headerless(w.l.pos(0, -1, 1, -1), "")
			} else if n > 0 {
				w.v.TornTail(l.pos(off, -1, w.lineNo+1, -1), n)
			}
			return nil
		}
		w.lineNo++
		p := w.pos(off, -1)
		switch {
		case line == nil && w.lineNo > 1:
			// Too long to hold: the byte check of its ends may tell it
			// is no row, which needs none of its bytes.
			w.junk = 0
			ok, why, rerr := couldBeRow(l.f, off, off+n-1)
			switch {
			case rerr != nil:
				return l.ioError(rerr, off)
			case ok:
				w.tooLong(p, n)
			case !w.stop:
				w.v.BadRecord(p, notRow(n, why), false)
			}
		case line == nil:
			w.junk = 0
			w.tooLong(p, n)
			if w.lineNo == 1 {
				w.finding(seam.ClassDamage, "header-invalid", p, "header line longer than %d bytes", maxHeaderLine)
				w.v.Header(seam.Header{Version: l.gen}, false)
			}
		case w.lineNo == 1 && len(line)-1 > maxHeaderLine:
			// Within what verify holds, beyond what readers take.
			w.finding(seam.ClassDamage, "header-invalid", p, "header line longer than %d bytes", maxHeaderLine)
			w.v.Header(seam.Header{Version: l.gen}, false)
		case w.lineNo == 1:
			w.header(line[:len(line)-1], p)
		case !w.stop:
			w.record(line, p)
		}
		w.lineNo += int(lineCount(line, n)) - 1
		off += n
		if w.junkRun() {
			records, lines, k := lr.skipJunk(ctx)
			w.skippedJunk(l.pos(off, -1, w.lineNo+1, -1), records)
			w.lineNo += int(lines)
			off += k
		}
	}
}

// zstd checks a zstd log frame by frame.
func (w *logWalk) zstd(ctx context.Context) error {
	l := w.l
	d, err := l.decoder(ctx)
	if err != nil {
		return err
	}
	defer l.putDecoder(d)
	sc := zstdframe.NewScanner(l.f, 0, w.size, d)
	defer sc.Close()
	for frame := 0; ; frame++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		f, err := sc.Next()
		if err == io.EOF {
			if frame == 0 {
				w.headerless(l.pos(0, 0, -1, -1), "")
			}
			return nil
		}
		var fe *zstdframe.Error
		if err != nil && !errors.As(err, &fe) {
			return l.ioError(err, f.Offset)
		}
		switch {
		case err == nil:
			w.frames++
			if !f.HasChecksum {
				w.finding(seam.ClassIrregular, "frame-checksum-missing", l.pos(f.Offset, frame, -1, -1),
					"frame at byte %d has no content checksum: dsh writes one on every frame, and its content cannot be verified", f.Offset)
			}
			if err := w.frame(sc, f, frame); err != nil {
				return err
			}
		case errors.Is(err, zstdframe.ErrSkippable):
			w.finding(seam.ClassDamage, "skippable-frame", l.pos(f.Offset, frame, -1, -1),
				"skippable frame of %d bytes at byte %d: dsh rejects any frame magic other than 0xFD2FB528", f.Size, f.Offset)
			if frame == 0 {
				w.headerless(l.pos(0, 0, -1, -1), "")
			}
		case errors.Is(err, zstdframe.ErrTorn):
			if done, err := w.torn(sc, d, f, frame); done || err != nil {
				return err
			}
		default:
			if done, err := w.badFrame(sc, f, frame, l.frameError(err, frame, 0)); done || err != nil {
				return err
			}
		}
	}
}

// torn handles a frame the end of the file cuts: the torn final frame, with
// the complete records it holds, unless a complete frame follows it (then
// its structure is damaged).
func (w *logWalk) torn(sc *zstdframe.Scanner, d *zstdframe.Decoder, f zstdframe.Frame, frame int) (done bool, err error) {
	l := w.l
	at, found, err := sc.Resync(f.Offset + 1)
	if err != nil {
		return true, l.ioError(err, f.Offset)
	}
	if found {
		w.finding(seam.ClassDamage, "frame-structure", l.pos(f.Offset, frame, -1, -1),
			"frame at byte %d runs past the end of the file, but a complete frame follows at byte %d: the %d bytes in between are not a valid frame",
			f.Offset, at, at-f.Offset)
		if frame == 0 {
			w.headerless(l.pos(0, 0, -1, -1), "")
		}
		return false, nil
	}
	p := l.pos(f.Offset, frame, -1, -1)
	if frame == 0 {
		w.headerless(p, "") // no log at all, rather than a log with a torn tail
		return true, nil
	}
	if !w.stop {
		rd, err := d.Salvage(l.f, zstdframe.Torn{Offset: f.Offset, Size: f.Size})
		if err == nil {
			lineNo := w.lineNo
			w.v.BeginUnit(p)
			err = w.lines(rd, f.Offset, frame, false)
			w.v.EndUnit(seam.UnitTorn)
			w.lineNo = lineNo // its lines are not the log's
		}
		var fe *zstdframe.Error
		if err != nil && !errors.As(err, &fe) {
			return true, err
		}
	}
	w.v.TornTail(p, f.Size)
	return true, nil
}

// badFrame reports a frame whose structure is invalid and looks for the
// next frame that verifies.
func (w *logWalk) badFrame(sc *zstdframe.Scanner, f zstdframe.Frame, frame int, cause error) (done bool, err error) {
	l := w.l
	at, found, err := sc.Resync(f.Offset + 1)
	if err != nil {
		return true, l.ioError(err, f.Offset)
	}
	if frame == 0 && !found {
		w.headerless(l.pos(0, 0, -1, -1), fmt.Sprintf(": %v, and no valid frame follows", causeOf(cause)))
		return true, nil
	}
	what := fmt.Sprintf("no valid frame follows: the %d bytes to the end of the file are not checked", w.size-f.Offset)
	if found {
		what = fmt.Sprintf("the %d bytes up to the next valid frame, at byte %d, are not a frame", at-f.Offset, at)
	}
	w.finding(seam.ClassDamage, "frame-structure", l.pos(f.Offset, frame, -1, -1), "%v; %s", causeOf(cause), what)
	if frame == 0 {
		w.headerless(l.pos(0, 0, -1, -1), "")
	}
	return !found, nil
}

// frame checks the content of a complete frame.
func (w *logWalk) frame(sc *zstdframe.Scanner, f zstdframe.Frame, frame int) error {
	l := w.l
	p := l.pos(f.Offset, frame, -1, -1)
	content, rd, err := sc.Content()
	if err != nil {
		return w.frameFailed(err, f, frame)
	}
	if content == nil {
		if frame == 0 {
			// A header frame too large to hold (dsh's is a few hundred
			// bytes): a header line too long, or records after it.
			long, line, rest, err := headerLineTooLong(rd)
			var more int64
			if err == nil {
				more, err = io.Copy(io.Discard, rd)
			}
			if err != nil {
				return w.frameFailed(err, f, frame)
			}
			w.lineNo++
			if long {
				w.finding(seam.ClassDamage, "header-invalid", p, "header line longer than %d bytes", maxHeaderLine)
				w.v.Header(seam.Header{Version: l.gen}, false)
				return nil
			}
			w.header(line, p)
			w.finding(seam.ClassDamage, "header-frame", p,
				"first frame is not exactly one header line: it holds %d more bytes of records", int64(rest)+more)
			return nil
		}
		w.v.BeginUnit(p)
		err := w.lines(rd, f.Offset, frame, true)
		var fe *zstdframe.Error
		if err != nil && !errors.As(err, &fe) {
			w.v.EndUnit(seam.UnitDamaged)
			return err
		}
		if err != nil {
			w.v.EndUnit(seam.UnitDamaged)
			return w.frameFailed(err, f, frame)
		}
		w.v.EndUnit(seam.UnitComplete)
		return nil
	}
	first := true
	w.junk = 0
	for len(content) > 0 {
		i := bytes.IndexByte(content, '\n')
		if i < 0 {
			w.lineNo++
			if frame == 0 && first {
				w.finding(seam.ClassDamage, "header-frame", p, "first frame is not exactly one header line: it does not end with a newline")
				w.v.Header(seam.Header{Version: l.gen}, false)
				return nil
			}
			w.finding(seam.ClassDamage, "record-boundary", w.pos(f.Offset, frame),
				"frame at byte %d does not end on a record boundary", f.Offset)
			return nil
		}
		line := content[:i+1]
		content = content[i+1:]
		w.lineNo++
		switch {
		case frame == 0 && first && i > maxHeaderLine:
			w.finding(seam.ClassDamage, "header-invalid", p, "header line longer than %d bytes", maxHeaderLine)
			w.v.Header(seam.Header{Version: l.gen}, false)
			if len(content) > 0 {
				w.finding(seam.ClassDamage, "header-frame", p,
					"first frame is not exactly one header line: it holds %d more bytes of records", len(content))
			}
		case frame == 0 && first:
			w.header(line[:i], w.pos(f.Offset, frame))
			if len(content) > 0 {
				w.finding(seam.ClassDamage, "header-frame", p,
					"first frame is not exactly one header line: it holds %d more bytes of records", len(content))
			}
		case int64(i) > w.max:
			// Over the record limit: not checked, as in a plain log or a
			// streamed frame, though it is in memory, since every reader
			// refuses it (seam.ErrLimit).
			w.junk = 0
			w.tooLong(w.pos(f.Offset, frame), int64(i+1))
		case !w.stop:
			w.record(line, w.pos(f.Offset, frame))
		}
		first = false
		if w.junkRun() {
			records, k := skipJunkIn(content)
			w.skippedJunk(l.pos(f.Offset, frame, w.lineNo+1, -1), records)
			w.lineNo += int(records)
			content = content[k:]
		}
	}
	if frame == 0 && first {
		w.finding(seam.ClassDamage, "header-frame", p, "first frame is empty: it must hold exactly the header line")
		w.v.Header(seam.Header{Version: l.gen}, false)
	}
	return nil
}

// frameFailed reports a complete frame whose content fails to decode or to
// match its checksum; err is an I/O failure otherwise.
func (w *logWalk) frameFailed(err error, f zstdframe.Frame, frame int) error {
	var fe *zstdframe.Error
	if !errors.As(err, &fe) {
		return w.l.ioError(err, f.Offset)
	}
	code := "frame-checksum"
	switch {
	case errors.Is(err, zstdframe.ErrTooLarge) && fe.ContentLimit() > 0:
		code = "frame-too-large" // over the frame limit: not checked
	case errors.Is(err, zstdframe.ErrTooLarge):
		code = "frame-window" // past what any reader here decodes
	case !errors.Is(err, zstdframe.ErrChecksum):
		code = "frame-corrupt"
	}
	w.damage(code, w.l.frameError(err, frame, 0))
	if frame == 0 {
		w.v.Header(seam.Header{Version: w.l.gen}, false)
	}
	return nil
}

// lines checks the records of a frame streamed from rd (a run of empty
// lines as one). complete says the frame is complete (a torn frame's
// content may end mid-record, which is the cut, not a problem). The error
// is rd's.
func (w *logWalk) lines(rd io.Reader, off int64, frame int, complete bool) error {
	var lr lineReader
	lr.reset(rd, w.max)
	w.junk = 0
	for n := 0; ; n++ {
		if n%1024 == 0 {
			if err := w.ctx.Err(); err != nil {
				return err
			}
		}
		line, size, err := lr.next()
		if err != nil && err != io.EOF && !errors.Is(err, errLongLine) {
			return err
		}
		if err == io.EOF {
			if complete && size > 0 {
				w.lineNo++
				w.finding(seam.ClassDamage, "record-boundary", w.pos(off, frame),
					"frame at byte %d does not end on a record boundary", off)
			}
			return nil
		}
		w.lineNo++
		if line == nil {
			w.junk = 0
			w.tooLong(w.pos(off, frame), size)
			continue
		}
		if !w.stop {
			w.record(line, w.pos(off, frame))
		}
		w.lineNo += int(lineCount(line, size)) - 1
		if w.junkRun() {
			records, lines, _ := lr.skipJunk(w.ctx)
			w.skippedJunk(w.l.pos(off, frame, w.lineNo+1, -1), records)
			w.lineNo += int(lines)
		}
	}
}
