package jsonl

import (
	"bytes"
	"context"
	"errors"
	"io"

	"github.com/dshctl/dshctl/internal/jsonl/zstdframe"
	"github.com/dshctl/dshctl/internal/seam"
)

// tailStart returns where a write open starts reading a log of size bytes
// so that it reads only the tail it needs (store.md 4, 5): the start of
// the last frame (zstd) or line (plain) that begins with a valid row and
// is at or before the last turn/end record, with the seq that row starts.
//
// Everything before a turn/end is committed: the first bad record starts
// an uncommitted tail only when no turn/end follows it, and otherwise the
// log is corrupt, which a full read (verify, cat) reports and an append
// cannot repair. So the next seq, the committed boundary, a torn or
// uncommitted tail and the open turn are all decided by the records from
// there on, which the forward read from the returned checkpoint validates
// exactly as a read from the header would. Its line and frame numbers
// are relative (position.relative). A log without a turn/end that such a
// row precedes is read from its first body record, as before.
//
// The forward read from the checkpoint does not check that its first row
// continues the one before it, which a read from the header does (a
// turn/end whose seq skips is itself the first bad record). So a row is a
// place to start only when the row before it ends at the seq it starts
// with; the first body row is read from the header, which checks seq 0.
//
// It reads at most phys bytes of the file (0: no bound), else fails with
// errBudget. chain asks for the write open's check of the records before
// a zstd tail start (see checkChain).
func (r *reader) tailStart(ctx context.Context, size, phys int64, chain bool) (checkpoint, error) {
	if r.l.enc == Zstd {
		return r.zstdTailStart(ctx, size, phys, chain)
	}
	return r.plainTailStart(ctx, size, phys)
}

func (r *reader) plainTailStart(ctx context.Context, size, phys int64) (checkpoint, error) {
	l, v := r.l, r.hdr.Version
	b := newBackLines(ctx, l.f, r.body.fileOff, size, tailBlock, phys, l.lim.record)
	seen := false
	var cand checkpoint // a row to start from once the row before it confirms it
	for first := true; ; first = false {
		line, off, err := b.prev()
		switch {
		case err == io.EOF:
			return checkpoint{at: r.body}, nil
		case err != nil && !errors.Is(err, errLongLine):
			if ctx.Err() != nil || errors.Is(err, errBudget) {
				return checkpoint{}, err
			}
			return checkpoint{}, l.ioError(err, off)
		case first && !b.term:
			continue // the torn tail, however long
		case err != nil:
			// Too long to be a row to start from, or to confirm one; the
			// forward read reports it if it is before the end.
			cand = checkpoint{}
			continue
		}
		var rec seam.Record
		decoded := false
		if cand.at.relative || seen || isTurnEnd(line) {
			rec, err = seam.DecodeRecord(line[:len(line)-1], v)
			decoded = err == nil
		}
		if cand.at.relative {
			if decoded && rec.NextSeq() == cand.next {
				return cand, nil
			}
			cand = checkpoint{}
		}
		if seen = seen || isTurnEnd(line); seen && decoded {
			cand = checkpoint{at: position{fileOff: off, textOff: off, relative: true}, next: rec.FirstSeq()}
		}
	}
}

func (r *reader) zstdTailStart(ctx context.Context, size, phys int64, chain bool) (checkpoint, error) {
	l, v := r.l, r.hdr.Version
	d, err := l.decoder(ctx)
	if err != nil {
		return checkpoint{}, err
	}
	defer l.putDecoder(d)
	c := newBlockCache(l.f, phys)
	defer c.release()
	var content []byte
	rv, err := zstdframe.NewReverse(c, size, zstdframe.LastOptions{Decoder: d, KeepContent: min(tailFrameLimit, l.lim.frame), Content: &content})
	if err != nil {
		return checkpoint{}, err
	}
	defer rv.Close()
	seen := false
	var cand checkpoint // a frame to start from once the frame before it confirms it
	for end := size; end > r.body.fileOff; {
		if err := ctx.Err(); err != nil {
			return checkpoint{}, err
		}
		last, err := rv.LastFrame(end)
		if errors.Is(err, errBudget) {
			return checkpoint{}, err
		}
		if err != nil {
			return checkpoint{}, l.frameError(err, -1, 0)
		}
		if end < size && last.Torn.Size != 0 {
			return checkpoint{}, l.errorf(seam.ErrCorrupt, l.pos(last.Torn.Offset, -1, -1, -1), "invalid frame at byte %d", last.Torn.Offset)
		}
		f := last.Frame
		if f.Offset < r.body.fileOff || content == nil {
			// The header frame, or a frame too large to hold: the forward
			// read from the start streams it and says what it holds.
			break
		}
		if cand.at.relative {
			// The last row of this frame must end where the candidate starts.
			last := bytes.TrimSuffix(content, []byte{'\n'})
			last = last[bytes.LastIndexByte(last, '\n')+1:]
			if rec, err := seam.DecodeRecord(last, v); err == nil && rec.NextSeq() == cand.next {
				if !chain {
					return cand, nil
				}
				return cand, r.zstdChain(ctx, rv, &content, f, cand)
			}
			cand = checkpoint{}
		}
		if seen = seen || holdsTurnEnd(content); seen {
			line := content
			if i := bytes.IndexByte(content, '\n'); i >= 0 {
				line = content[:i]
			}
			if rec, err := seam.DecodeRecord(line, v); err == nil {
				cand = checkpoint{at: position{fileOff: f.Offset, relative: true}, next: rec.FirstSeq()}
			}
		}
		end = f.Offset
	}
	return checkpoint{at: r.body}, nil
}

// holdsTurnEnd reports whether the decoded text of a frame holds a
// turn/end record (isTurnEnd).
func holdsTurnEnd(text []byte) bool {
	for from := 0; ; {
		i := bytes.Index(text[from:], turnEndType)
		if i < 0 {
			return false
		}
		i += from
		start := bytes.LastIndexByte(text[:i], '\n') + 1
		end := len(text)
		if j := bytes.IndexByte(text[i:], '\n'); j >= 0 {
			end = i + j
		}
		if isTurnEnd(text[start:end]) {
			return true
		}
		from = end
	}
}
