package jsonl

import (
	"bytes"
	"context"
	"errors"
	"io"

	"github.com/dshctl/dshctl/internal/jsonl/zstdframe"
	"github.com/dshctl/dshctl/internal/seam"
)

// chainWindow is how far before the start of its tail a write open checks
// that the log's seqs go up (see checkChain): bytes of a plain log file,
// or of a zstd one, whose frames are decoded to be checked (about ten
// times their size).
const (
	chainWindow     = 256 << 10
	chainWindowZstd = 64 << 10
)

// checkChain checks the records before cp, the tail start of a write open,
// back to chainWindow bytes before it: each must end at the seq the record
// after it starts with, or before it. A record whose seqs the next one
// repeats (or goes back before) is what two writers leave when both append
// from the same next seq — dsh 0.1.0 takes no lock and does not re-read
// before it writes — and dsh refuses the log from then on ("seq gap in
// committed region"). The tail start is after the last turn/end, so the
// forward read from it never sees that damage, and an append would extend
// a log dsh refuses: the open fails instead with an ErrCorrupt whose cause
// is a *seam.OverlapError. A gap, or a record that does not decode, ends
// the check without an error: that is damage of another kind, which a
// full read (verify) reports and which is not the write path's to judge.
func (r *reader) checkChain(ctx context.Context, cp checkpoint) error {
	if !cp.at.relative || r.l.enc == Zstd {
		// The forward read starts at the header and checks every record;
		// a zstd tail start is checked as it is found (zstdChain).
		return nil
	}
	return r.plainChain(ctx, cp)
}

// chainStep checks the record rec, found before a record starting at
// *next, and moves *next to rec's first seq; more is false when the check
// should stop.
func chainStep(rec *seam.Record, next *int64) (more bool, err error) {
	switch end := rec.NextSeq(); {
	case end > *next:
		return false, &seam.OverlapError{Seq: *next, Want: end}
	case end < *next:
		return false, nil // a gap: not the two-writer damage
	}
	*next = rec.FirstSeq()
	return true, nil
}

func (r *reader) plainChain(ctx context.Context, cp checkpoint) error {
	l, v := r.l, r.hdr.Version
	stop := max(r.body.fileOff, cp.at.fileOff-chainWindow)
	b := newBackLines(ctx, l.f, stop, cp.at.fileOff, tailBlock, 0, l.lim.record)
	next, after := cp.next, cp.at.fileOff
	for {
		line, off, err := b.prev()
		switch {
		case err == io.EOF:
			return nil
		case errors.Is(err, errLongLine):
			return nil
		case err != nil:
			if ctx.Err() != nil {
				return err
			}
			return l.ioError(err, off)
		case off == stop && stop > r.body.fileOff:
			return nil // the window begins inside this line, or at it: not known whole
		}
		rec, err := seam.DecodeRecord(line[:len(line)-1], v)
		if err != nil {
			return nil
		}
		more, err := chainStep(&rec, &next)
		if err != nil {
			return l.located(err, seam.ErrCorrupt, l.pos(after, -1, -1, next))
		}
		if !more {
			return nil
		}
		after = off
	}
}

// zstdChain goes on from the backward frame search of zstdTailStart, rv
// having just confirmed the tail start cp with the frame f before it, whose
// content holds: the check starts with f's records, so that no frame is
// searched for or decoded twice.
func (r *reader) zstdChain(ctx context.Context, rv *zstdframe.Reverse, content *[]byte, f zstdframe.Frame, cp checkpoint) error {
	l, v := r.l, r.hdr.Version
	next, after := cp.next, cp.at.fileOff
	stop := max(r.body.fileOff, cp.at.fileOff-chainWindowZstd)
	for {
		text := bytes.TrimSuffix(*content, []byte{'\n'})
		for len(text) > 0 {
			i := bytes.LastIndexByte(text, '\n')
			rec, err := seam.DecodeRecord(text[i+1:], v)
			if err != nil {
				return nil
			}
			more, err := chainStep(&rec, &next)
			if err != nil {
				return l.located(err, seam.ErrCorrupt, l.pos(after, -1, -1, next))
			}
			if !more {
				return nil
			}
			if i < 0 {
				break
			}
			text = text[:i]
		}
		after = f.Offset
		if f.Offset <= stop {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		last, err := rv.LastFrame(f.Offset)
		if err != nil || last.Torn.Size != 0 || last.Frame.Offset < r.body.fileOff || *content == nil {
			return nil // damage, the header frame, or a frame too large to hold: not this check's
		}
		f = last.Frame
	}
}
