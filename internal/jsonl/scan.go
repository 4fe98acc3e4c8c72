package jsonl

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"sync"

	"github.com/dshctl/dshctl/internal/jsonl/zstdframe"
	"github.com/dshctl/dshctl/internal/seam"
)

// checkpointEvery is the spacing, in file bytes, of the resumable positions
// a handle remembers, so that Read(offset) does not start from the header.
const checkpointEvery = 1 << 20

// checkpoint is the state of a validated forward read at a record
// boundary: every record before it is committed.
type checkpoint struct {
	at     position
	next   int64
	marker seam.SeedMarker
}

// badRecord is the first record of an uncommitted tail.
type badRecord struct {
	off       int64 // decoded text offset (the file offset in a plain log)
	lineNo    int
	frame     int
	frameOff  int64 // file offset of its frame (zstd)
	frameText int64 // decoded offset of its frame's first byte
	cause     error
	relative  bool // lineNo and frame count from where the read started
}

// forwardEnd is the state of a forward read that reached the committed end.
type forwardEnd struct {
	next    int64 // the event count
	marker  seam.SeedMarker
	physEnd int64 // end of the complete lines or frames
	torn    int64 // bytes of the torn tail after physEnd
	bad     *badRecord
}

// cutOffset is the file offset where the uncommitted bytes start: the bad
// record's line (plain) or frame (zstd), or the torn tail.
func (e *forwardEnd) cutOffset() int64 {
	switch {
	case e.bad == nil:
		return e.physEnd
	case e.bad.frame >= 0:
		return e.bad.frameOff
	}
	return e.bad.off
}

// reader reads the body of one log under dsh's recoverable rules.
type reader struct {
	l       *logFile
	hdr     *seam.Header
	body    position // the first body record
	lenient bool     // serve unknown non-ignorable types
	// transient serves events whose payloads alias the read buffers, valid
	// until the next record is read (seam.ScanOptions.Transient).
	transient bool
	// onCheckpoint, if set, receives resumable positions as they pass.
	onCheckpoint func(checkpoint)
	// tail, if set, is the decoded last frame of the log at the size a
	// reverse read is given.
	tail *lastFrame
}

// start is the checkpoint before the first body record.
func (r *reader) start() checkpoint {
	return checkpoint{at: r.body}
}

// forward reads the body from cp to the committed end of a file of size
// bytes and calls fn with each committed event whose seq is at least from,
// until fn returns false (then done is false).
//
// The first record that is not a valid row continuing the seq (store.md 4,
// "Corruption that is not a torn tail") starts an uncommitted tail, which is
// not served, unless a later record is a turn/end: then committed data is
// damaged and the read fails with ErrCorrupt. Complete zstd frames that do
// not verify are ErrCorrupt wherever they are. A non-ignorable type outside
// the version's vocabulary is ErrUnsupportedFormat unless r.lenient.
func (r *reader) forward(ctx context.Context, cp checkpoint, size int64, b budget, from int64, fn func(*seam.Event) bool) (end forwardEnd, done bool, err error) {
	br, err := r.l.newBodyReader(ctx, cp.at, size, b)
	if err != nil {
		return end, false, err
	}
	defer br.close()
	v := r.hdr.Version
	cur := seam.Cursor{Next: cp.next}
	marker := cp.marker
	lastCP := cp.at.fileOff
	var records int64
	for {
		if err := ctx.Err(); err != nil {
			return end, false, err
		}
		rec, err := br.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return end, false, r.budgetError(err)
		}
		if records++; b.records > 0 && records > b.records {
			return end, false, r.budgetError(errBudget)
		}
		if rec.first && r.onCheckpoint != nil && rec.frameOff-lastCP >= checkpointEvery {
			lastCP = rec.frameOff
			r.onCheckpoint(checkpoint{at: position{fileOff: rec.frameOff, textOff: rec.frameText,
				lineNo: rec.lineNo - 1, frame: rec.frame, relative: cp.at.relative}, next: cur.Next, marker: marker})
		}
		decode := seam.DecodeRecord
		if r.transient {
			decode = seam.DecodeRecordAlias
		}
		var row seam.Record
		derr := rec.junk
		if derr == nil {
			row, derr = decode(rec.line[:len(rec.line)-1], v)
		}
		if derr == nil {
			derr = cur.Advance(&row)
		}
		if derr != nil {
			bad := badRecord{off: rec.off, lineNo: rec.lineNo, frame: rec.frame, frameOff: rec.frameOff,
				frameText: rec.frameText, cause: derr, relative: cp.at.relative}
			if err := r.uncommitted(ctx, br, &bad, cur.Next); err != nil {
				return end, false, err
			}
			end.bad = &bad
			break
		}
		events := row.Events()
		for i := range events {
			e := &events[i]
			if !r.lenient {
				if err := seam.CheckVocabulary(e, v); err != nil {
					return end, false, r.l.located(err, seam.ErrUnsupportedFormat,
						r.l.pos(rec.frameOff, cp.at.lineAt(rec.frame), cp.at.lineAt(rec.lineNo), e.Seq))
				}
			}
			marker.Observe(e)
			if e.Seq >= from && !fn(e) {
				return end, false, nil
			}
		}
	}
	end.next, end.marker, end.torn = cur.Next, marker, br.torn()
	end.physEnd = size - end.torn
	return end, true, nil
}

// uncommitted reads the records after the bad one and fails with ErrCorrupt
// if one of them is a turn/end: then the bad record was committed. Only
// the records that hold "turn/end" are looked at; the search for them
// skips the rest in bulk, so a tail of garbage (or of a GiB of empty
// lines) costs what searching its bytes costs.
func (r *reader) uncommitted(ctx context.Context, br bodyReader, bad *badRecord, next int64) error {
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		rec, err := br.nextWith(turnEndType)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return r.budgetError(err)
		}
		if !isTurnEnd(rec.line) {
			continue
		}
		what := "invalid committed record"
		if errors.Is(bad.cause, seam.ErrRecordSyntax) {
			what = "unparsable committed event"
		}
		if bad.relative {
			// A read from the tail knows where records are, not their lines.
			where := "at byte"
			if bad.frame >= 0 {
				where = "in the frame at byte"
			}
			return r.l.errorf(seam.ErrCorrupt, r.l.pos(bad.frameOff, -1, -1, next), "%s %s %d (a turn/end follows %s %d): %w",
				what, where, bad.frameOff, where, rec.frameOff, causeOf(bad.cause))
		}
		p := r.l.pos(bad.frameOff, bad.frame, bad.lineNo, next)
		return r.l.errorf(seam.ErrCorrupt, p, "%s at line %d (a turn/end follows at line %d): %w",
			what, bad.lineNo, rec.lineNo, causeOf(bad.cause))
	}
}

// causeOf strips the kind of a seam error, which the caller restates.
func causeOf(err error) error {
	var se *seam.Error
	if errors.As(err, &se) && se.Err != nil {
		return se.Err
	}
	return err
}

var turnEndType = []byte(`"turn/end"`)

// isTurnEnd reports whether a physical record is a turn/end event.
func isTurnEnd(line []byte) bool {
	if !bytes.Contains(line, turnEndType) {
		return false
	}
	var t struct {
		Type string `json:"type"`
	}
	return json.Unmarshal(line, &t) == nil && t.Type == "turn/end"
}

func (r *reader) budgetError(err error) error {
	if errors.Is(err, errBudget) {
		return &seam.Error{Kind: seam.ErrScanBudget, ID: r.l.id, Pos: r.l.pos(-1, -1, -1, -1)}
	}
	return err
}

// reverse reads committed events from the end of a file of size bytes
// toward the first, calling fn with each event whose seq is below before
// (all when before is 0) until fn returns false. It serves exactly what a
// forward read serves (store.md 4): the committed events, never a record
// of an uncommitted tail, and it refuses only what a forward read refuses.
//
// A read from the end cannot tell a record uncommitted from the records
// after it: a bad record anywhere after the last turn/end starts the
// uncommitted tail. So a probe reads back first, serving nothing, to the
// record before the last turn/end (the whole log when there is none):
// when each record on the way is a valid row continuing the one before
// it, the log ends in committed data (or a torn tail), which is the
// common case and costs a read of the last turn. Otherwise the tail is
// damaged, and the committed end is found as a write open finds it: a
// forward read of the records from the last turn/end on (committedEnd).
// Below the committed end, every record must be a valid row that the one
// after it continues, and the first must start at seq 0: a bad record
// there is before a turn/end, damaged committed data (ErrCorrupt), as a
// forward read says too. The probe and the read each stay within b.
func (r *reader) reverse(ctx context.Context, size int64, b budget, before int64, fn func(*seam.Event) bool) error {
	var src io.ReaderAt
	if r.l.enc == Zstd {
		// A log the window holds whole is read from there; any other
		// through a block cache, which the probe and the read share, so
		// that the read finds the tail's blocks loaded. (The cache reads
		// such a log as one block, which its budget always allows, so the
		// two read alike.)
		if w, ok := r.l.f.(*windowFile); ok && w.whole() && w.size == size {
			src = w
		} else {
			c := newBlockCache(r.l.f, b.phys)
			defer c.release() // the decoded content is a copy
			src = c
		}
	}
	probe := reverseState{r: r, budget: b, src: src, probe: true}
	if err := probe.walk(ctx, size, size, nil); err != nil && (ctx.Err() != nil || errors.Is(err, seam.ErrScanBudget)) {
		return err
	}
	s := reverseState{r: r, before: before, fn: fn, budget: b, src: src}
	if probe.clean {
		return s.walk(ctx, size, size, nil)
	}
	end, err := r.committedEnd(ctx, size, b)
	if err != nil {
		return err
	}
	if bad := end.bad; bad != nil && bad.frame >= 0 && bad.off > bad.frameText {
		// The bad record's frame starts with committed records.
		return s.walk(ctx, size, bad.frameOff, &framePart{off: bad.frameOff, n: bad.off - bad.frameText})
	}
	return s.walk(ctx, size, end.cutOffset(), nil)
}

// committedEnd reads the records from the last turn/end on, as a write
// open does (tailStart), to where the committed records of a file of size
// bytes end. Errors are those of a forward read of them.
func (r *reader) committedEnd(ctx context.Context, size int64, b budget) (forwardEnd, error) {
	cp, err := r.tailStart(ctx, size, b.phys, false)
	if err != nil {
		return forwardEnd{}, r.budgetError(err)
	}
	fr := *r
	fr.transient = true // nothing is kept
	if cp.at.relative {
		fr.onCheckpoint = nil // its line and frame numbers are not the log's
	}
	end, _, err := fr.forward(ctx, cp, size, b, 0, func(*seam.Event) bool { return true })
	return end, err
}

// The tail search's event count is checked by a probe of up to
// statProbeBytes of the log's end, and corrected, where the probe finds the
// tail damaged, by a read of up to statExactBytes from the last turn/end on
// (see checkTail).
const (
	statProbeBytes = 1 << 20
	statExactBytes = 64 << 20
)

// checkTail checks t, what the tail search found in a file of size bytes:
// its last valid row is the last committed one unless a bad record before
// it starts an uncommitted tail (store.md 4), which only the records from
// the last turn/end on tell. The common tail, a valid row that continues
// the one before it back to the last turn/end, is all a probe of the end
// reads; a damaged one is read forward from the last turn/end, as reverse
// does, and t is moved back to the committed end. store.md 3 has the
// count found from the tail, never by reading the whole log: past either
// bound, or where that read fails (damage a full read reports), t stands.
//
// limit, if not nil, is the search's refusal of a record over the record
// limit that could be the last row (ErrRecordLimit): it stands unless the
// read from the last turn/end finds that record after the committed end.
func (r *reader) checkTail(ctx context.Context, size int64, t *tailInfo, limit error) error {
	if limit != nil {
		var se *seam.Error
		end, err := r.committedEnd(ctx, size, budgetFor(statExactBytes))
		if err != nil || !errors.As(limit, &se) || se.Pos.Offset < end.cutOffset() {
			return limit
		}
		t.next, t.commitEnd, t.vocab = end.next, end.cutOffset(), nil
		return nil
	}
	var src io.ReaderAt
	if r.l.enc == Zstd {
		c := newBlockCache(r.l.f, statProbeBytes)
		defer c.release()
		src = c
	}
	r.tail = t.frame
	probe := reverseState{r: r, budget: budgetFor(statProbeBytes), src: src, probe: true}
	err := probe.walk(ctx, size, size, nil)
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case probe.clean || errors.Is(err, seam.ErrScanBudget):
		return nil
	}
	end, err := r.committedEnd(ctx, size, budgetFor(statExactBytes))
	if err != nil {
		return ctx.Err()
	}
	if cut := end.cutOffset(); end.next != t.next || cut < t.commitEnd {
		// The row the search found is not committed, nor are its types
		// the log's to refuse.
		t.next, t.commitEnd, t.vocab = end.next, cut, nil
	}
	return nil
}

// framePart is the first n decoded bytes of the frame at off: the
// committed records before the bad one in its frame.
type framePart struct {
	off, n int64
}

type reverseState struct {
	r        *reader
	before   int64
	fn       func(*seam.Event) bool
	accepted bool
	expect   int64 // the first seq of the record accepted last
	// expectPos is where that record is.
	expectPos seam.Pos
	budget    budget
	records   int64
	src       io.ReaderAt // a zstd log's bytes
	// probe serves nothing: it stops at the record before the first
	// turn/end it reads, and clean says whether every record it read was
	// a valid row continuing the one before it. An error ends it unclean.
	probe, turnEnd, clean bool
}

// walk reads the records of a file of size bytes that end at end, last to
// first; part, if set, is read first.
func (s *reverseState) walk(ctx context.Context, size, end int64, part *framePart) error {
	if s.r.l.enc == Zstd {
		return s.zstd(ctx, size, end, part)
	}
	return s.plain(ctx, end)
}

func (s *reverseState) plain(ctx context.Context, end int64) error {
	r := s.r
	bl := newBackLines(ctx, r.l.f, r.body.fileOff, end, tailBlock, s.budget.phys, r.l.lim.record)
	for first := true; ; first = false {
		if err := ctx.Err(); err != nil {
			return err
		}
		line, off, err := bl.prev()
		switch {
		case err == io.EOF:
			return s.atStart()
		case err != nil && !errors.Is(err, errLongLine):
			return r.budgetError(r.l.ioError(err, off))
		case first && !bl.term:
			continue // the torn tail
		case err != nil:
			// Too long to hold: a row the limit keeps from being read, or
			// junk below the committed end.
			ok, why, rerr := couldBeRow(r.l.f, off, bl.lineEnd-1)
			switch {
			case rerr != nil:
				return r.l.ioError(rerr, off)
			case ok:
				return r.l.longRecord(bl.lineEnd-off, r.l.pos(off, -1, -1, -1))
			}
			return r.l.located(notRow(bl.lineEnd-off, why), seam.ErrCorrupt, r.l.pos(off, -1, -1, -1))
		}
		if more, err := s.record(line[:len(line)-1], r.l.pos(off, -1, -1, -1)); err != nil || !more {
			return err
		}
	}
}

// record handles one physical record, last to first (an empty line stands
// for a run of them). It returns false when the walk should stop.
func (s *reverseState) record(line []byte, p seam.Pos) (bool, error) {
	if s.records++; s.budget.records > 0 && s.records > s.budget.records {
		return false, s.r.budgetError(errBudget)
	}
	if s.probe {
		return s.probeRecord(line), nil
	}
	l, v := s.r.l, s.r.hdr.Version
	if s.accepted && s.expect == 0 {
		// A record before seq 0: a forward read takes the first bad record
		// as the start of an uncommitted tail (or of damage), so the rows
		// served from seq 0 on are not what it serves.
		return false, l.errorf(seam.ErrCorrupt, p, "a record before the one at seq 0: the log does not start with its first event")
	}
	row, err := seam.DecodeRecord(line, v)
	if err != nil {
		return false, l.located(err, seam.ErrCorrupt, p)
	}
	if s.accepted && row.NextSeq() > s.expect {
		// The record after this one repeats its seqs: two writers appended
		// from the same next seq. That record is where the damage is.
		return false, l.located(&seam.OverlapError{Seq: s.expect, Want: row.NextSeq()}, seam.ErrCorrupt, s.expectPos)
	}
	if s.accepted && row.NextSeq() != s.expect {
		p.Seq = row.FirstSeq()
		return false, l.errorf(seam.ErrCorrupt, p, "seq gap: record ends at %d, the next starts at %d", row.NextSeq(), s.expect)
	}
	s.accepted, s.expect, s.expectPos = true, row.FirstSeq(), p
	s.expectPos.Seq = s.expect
	events := row.Events()
	for i := len(events) - 1; i >= 0; i-- {
		e := &events[i]
		if s.before > 0 && e.Seq >= s.before {
			continue
		}
		if !s.r.lenient {
			if err := seam.CheckVocabulary(e, v); err != nil {
				p.Seq = e.Seq
				return false, l.located(err, seam.ErrUnsupportedFormat, p)
			}
		}
		if !s.fn(e) {
			return false, nil
		}
	}
	return true, nil
}

// probeRecord is record for the probe.
func (s *reverseState) probeRecord(line []byte) bool {
	if s.accepted && s.expect == 0 {
		return false // a record before seq 0
	}
	row, err := seam.DecodeRecordAlias(line, s.r.hdr.Version)
	if err != nil || s.accepted && row.NextSeq() != s.expect {
		return false
	}
	if s.turnEnd {
		// The row before the last turn/end continues it: every bad record
		// is before it, and makes the log corrupt.
		s.clean = true
		return false
	}
	s.accepted, s.expect, s.turnEnd = true, row.FirstSeq(), isTurnEnd(line)
	return true
}

// zstd walks the frames from the tail with the backward frame search, each
// frame decoded whole (so memory is bounded by the largest frame, and the
// frame limit bounds that), from the frames that end at end (a frame end)
// of a file of size bytes; part, if set, is read first.
func (s *reverseState) zstd(ctx context.Context, size, end int64, part *framePart) error {
	l := s.r.l
	d, err := l.decoder(ctx)
	if err != nil {
		return err
	}
	defer l.putDecoder(d)
	src := s.src
	start := d.Decoded()
	// capFor sets the decoder's limit for the next frame: the decoded
	// budget bounds each frame's decoding too, so a frame past what is
	// left of it is not decoded to the end. fail turns a frame's error
	// into the scan's.
	capFor := func() (capN int64, fail func(error) error, err error) {
		capN, byBudget := s.budget.frameCap(l.lim.frame, d.Decoded()-start)
		if capN == 0 {
			return 0, nil, s.r.budgetError(errBudget)
		}
		d.SetLimit(capN)
		return capN, func(err error) error {
			if byBudget && errors.Is(err, zstdframe.ErrTooLarge) {
				return s.r.budgetError(errBudget)
			}
			return s.r.budgetError(l.frameError(err, -1, 0))
		}, nil
	}
	if part != nil {
		capN, fail, err := capFor()
		if err != nil {
			return err
		}
		f, err := zstdframe.ParseFrame(src, part.off, size)
		if err != nil {
			return fail(err)
		}
		content, err := d.DecodeAll(src, f, capN)
		if err != nil {
			return fail(err)
		}
		if int64(len(content)) < part.n {
			return l.errorf(seam.ErrCorrupt, l.pos(f.Offset, -1, -1, -1), "frame at byte %d changed while it was read", f.Offset)
		}
		if more, err := s.frame(content[:part.n], f); err != nil || !more {
			return err
		}
	}
	// One Reverse for the scan: each step is LastFrame(src, end), the
	// search sharing the bytes, magics and frames of the steps before.
	var content []byte
	keep := l.lim.frame
	if s.probe {
		keep = min(keep, tailFrameLimit)
	}
	rv, err := zstdframe.NewReverse(src, size, zstdframe.LastOptions{Decoder: d, KeepContent: keep, Content: &content})
	if err != nil {
		return err
	}
	defer rv.Close()
	consumed := int64(0)
	for end > s.r.body.fileOff {
		if err := ctx.Err(); err != nil {
			return err
		}
		capN, fail, err := capFor()
		if err != nil {
			return err
		}
		var last zstdframe.Last
		if t := s.r.tail; t != nil && end == size && t.size == size {
			// The open's tail search found and verified this frame.
			last, content = t.last, t.content
		} else if last, err = rv.LastFrame(end); err != nil {
			return fail(err)
		}
		if end < size && last.Torn.Size != 0 {
			return l.errorf(seam.ErrCorrupt, l.pos(last.Torn.Offset, -1, -1, -1), "invalid frame at byte %d", last.Torn.Offset)
		}
		if last.Torn.Size != 0 {
			// The forward read's rule (zstdReader.tornFrame).
			if err := l.checkTorn(src, d, last.Torn.Offset, size, 0, -1); err != nil {
				return s.r.budgetError(err)
			}
		}
		f := last.Frame
		if f.Offset < s.r.body.fileOff {
			return s.atStart()
		}
		// The budget counts the frames covered, as a forward scan does;
		// the cache bounds the reads of the search itself.
		if consumed += f.Size; s.budget.phys > 0 && consumed > s.budget.phys {
			return s.r.budgetError(errBudget)
		}
		if content == nil && s.probe {
			// A frame too large for the probe to hold (tailFrameLimit)
			// is streamed.
			more, err := s.probeFrame(d, src, f)
			if err != nil || !more {
				return err
			}
			end = f.Offset
			continue
		}
		if content == nil {
			// Verified but not kept (the search keeps up to the frame
			// limit): DecodeAll reports why.
			if content, err = d.DecodeAll(src, f, capN); err != nil {
				return fail(err)
			}
		}
		if more, err := s.frame(content, f); err != nil || !more {
			return err
		}
		end = f.Offset
	}
	return s.atStart()
}

// probeFrame is the probe of the records of the frame f, too large to
// hold: it streams them forward once and works out what reading them
// backward would find. It returns false when the probe should stop.
func (s *reverseState) probeFrame(d *zstdframe.Decoder, src io.ReaderAt, f zstdframe.Frame) (bool, error) {
	l, v := s.r.l, s.r.hdr.Version
	rd, err := d.NewReader(src, f)
	if err != nil {
		return false, err
	}
	var lr lineReader
	lr.reset(rd, l.lim.record)
	var (
		n           int64 // records read
		first, next int64 // the first seq of the first record, the next seq after the last
		valid       bool  // the last record is a valid row
		// ok says every record from the one before the last turn/end on
		// (from the first when there is none) is a valid row continuing
		// the one before it; te that the frame holds such a turn/end,
		// and teFirst that it is the frame's first record.
		ok, te, teFirst bool
	)
	for {
		line, size, err := lr.next()
		if err == io.EOF {
			if size > 0 {
				return false, l.errorf(seam.ErrCorrupt, l.pos(f.Offset, -1, -1, -1), "frame at byte %d does not end on a record boundary", f.Offset)
			}
			break
		}
		if err != nil {
			return false, err
		}
		if s.records++; s.budget.records > 0 && s.records > s.budget.records {
			return false, s.r.budgetError(errBudget)
		}
		row, derr := seam.DecodeRecordAlias(line[:len(line)-1], v)
		cont := derr == nil && valid && row.FirstSeq() == next
		switch {
		case n == 0:
			ok = derr == nil
			first = row.FirstSeq()
			te, teFirst = ok && isTurnEnd(line), ok && isTurnEnd(line)
		case derr == nil && isTurnEnd(line):
			ok, te, teFirst = cont, true, false
		default:
			ok = ok && cont
		}
		valid, next = derr == nil, row.NextSeq()
		n++
	}
	switch {
	case n == 0:
		return true, nil
	case s.accepted && (s.expect == 0 || !valid || next != s.expect):
		return false, nil // a record before seq 0, or one the next does not continue
	case s.turnEnd:
		s.clean = true // this frame's last row is the one before the turn/end
		return false, nil
	case !ok:
		return false, nil
	case te && !teFirst:
		s.clean = true
		return false, nil
	}
	s.accepted, s.expect, s.turnEnd = true, first, te
	return true, nil
}

// frame handles the records of content, the decoded text of the frame f
// (or the part of it read), last to first. It returns false when the walk
// should stop.
func (s *reverseState) frame(content []byte, f zstdframe.Frame) (bool, error) {
	l := s.r.l
	if len(content) > 0 && content[len(content)-1] != '\n' {
		return false, l.errorf(seam.ErrCorrupt, l.pos(f.Offset, -1, -1, -1), "frame at byte %d does not end on a record boundary", f.Offset)
	}
	for len(content) > 0 {
		var line []byte
		if k := trailingNewlines(content); k > 1 || len(content) == 1 {
			// A run of empty lines (k-1 of them, or all k when they
			// start the frame), taken as one record.
			if k == len(content) {
				content = nil
			} else {
				content = content[:len(content)-k+1]
			}
			line = blankLine[:0]
		} else {
			i := bytes.LastIndexByte(content[:len(content)-1], '\n')
			line = content[i+1 : len(content)-1]
			content = content[:i+1]
			if int64(len(line)) > l.lim.record {
				return false, l.longRecord(int64(len(line))+1, l.pos(f.Offset, -1, -1, -1))
			}
		}
		if more, err := s.record(line, l.pos(f.Offset, -1, -1, -1)); err != nil || !more {
			return false, err
		}
	}
	return true, nil
}

// atStart checks, once the walk has gone back to the first body record,
// that the records it accepted begin the log at seq 0: a forward read
// takes a first record that does not as the start of an uncommitted tail
// (or of damage), never as committed, so a reverse read that served it
// must not end as if all were well. A probe that got there read a log
// without a turn/end, every record valid: it is clean if the first is at
// seq 0.
func (s *reverseState) atStart() error {
	if s.probe {
		s.clean = !s.accepted || s.expect == 0
		return nil
	}
	if s.accepted && s.expect != 0 {
		l := s.r.l
		return l.errorf(seam.ErrCorrupt, l.pos(s.r.body.fileOff, -1, -1, s.expect),
			"seq gap: the first record starts at seq %d, not 0", s.expect)
	}
	return nil
}

// blockCache is the io.ReaderAt under the reverse scan. It reads the file
// in aligned blocks of cacheBlockSize and keeps the last cacheBlocks of
// them: Reverse's lazy reads below what it has loaded (8 KiB and up)
// become one read per block, and DecodeAll of a frame too large to keep
// rereads from memory whatever of it is still in those blocks. It does not
// make the backward search read each byte once: Reverse keeps the bytes it
// read itself. It counts the bytes read from the file and fails with
// errBudget past limit of them (0: no limit).
type blockCache struct {
	r      io.ReaderAt
	blocks [cacheBlocks]cachedBlock
	clock  int
	n      int64
	limit  int64
}

type cachedBlock struct {
	idx  int64
	data []byte // nil when empty
	used int
}

const (
	cacheBlockSize = 64 << 10
	cacheBlocks    = 8
)

func newBlockCache(r io.ReaderAt, limit int64) *blockCache {
	return &blockCache{r: r, limit: limit}
}

// cacheBlockPool recycles the blocks of blockCache.
var cacheBlockPool = sync.Pool{New: func() any {
	b := make([]byte, cacheBlockSize)
	return &b
}}

// release gives c's blocks back; c and what it returned must not be used
// afterwards.
func (c *blockCache) release() {
	for i := range c.blocks {
		if b := &c.blocks[i]; b.data != nil {
			d := b.data[:cap(b.data)]
			cacheBlockPool.Put(&d)
			b.data = nil
		}
	}
}

func (c *blockCache) ReadAt(p []byte, off int64) (int, error) {
	n := 0
	for n < len(p) {
		b, err := c.block((off + int64(n)) / cacheBlockSize)
		if err != nil {
			return n, err
		}
		i := (off + int64(n)) % cacheBlockSize
		if i >= int64(len(b)) {
			return n, io.EOF
		}
		n += copy(p[n:], b[i:])
	}
	return n, nil
}

func (c *blockCache) block(idx int64) ([]byte, error) {
	c.clock++
	victim := 0
	for i := range c.blocks {
		b := &c.blocks[i]
		if b.data != nil && b.idx == idx {
			b.used = c.clock
			return b.data, nil
		}
		if b.used < c.blocks[victim].used {
			victim = i
		}
	}
	if c.limit > 0 && c.n >= c.limit {
		return nil, errBudget
	}
	b := &c.blocks[victim]
	if b.data == nil {
		b.data = (*cacheBlockPool.Get().(*[]byte))[:cacheBlockSize]
	}
	b.data = b.data[:cacheBlockSize]
	n, err := c.r.ReadAt(b.data, idx*cacheBlockSize)
	if err != nil && err != io.EOF {
		// Put a slice of its own, whole: &b.data would see the nil below.
		d := b.data[:cap(b.data)]
		cacheBlockPool.Put(&d)
		b.data = nil
		return nil, err
	}
	c.n += int64(n)
	b.data, b.idx, b.used = b.data[:n], idx, c.clock
	return b.data, nil
}
