package zstdframe

import (
	"bytes"
	"context"
	"errors"
	"io"
)

const (
	// defaultWindow is LastOptions.Window when unset.
	defaultWindow = 4 << 20
	// maxCandidates bounds the magic matches LastFrame tries before it falls
	// back to the forward walk, so crafted input full of nested frame-like
	// bytes cannot make the search quadratic.
	maxCandidates = 64
)

// firstChunk is the first read from the end of the file; each further
// read doubles, so a log of small frames costs one read. (A variable so
// that tests can make the search step through small files.)
var firstChunk = int64(64 << 10)

// LastOptions configures LastFrame. The zero value is ready to use.
type LastOptions struct {
	// Window bounds the backward search to the last Window bytes of the
	// file; 0 means 4 MiB. When no frame in it confirms, LastFrame walks
	// the whole file forward instead.
	Window int64
	// Decoder confirms candidate frames; nil makes LastFrame use (and
	// close) its own. LastFrame invalidates the Decoder's open reader.
	Decoder *Decoder
	// KeepContent, when positive and Content is set, makes LastFrame
	// store in *Content the content of the frame it confirms, if it is at
	// most KeepContent bytes, and nil otherwise: confirming decodes it
	// anyway, so a caller that needs it does not decode it twice.
	KeepContent int64
	Content     *[]byte
}

// Last is the result of LastFrame.
type Last struct {
	Frame Frame // the last complete frame, its checksum verified
	Torn  Torn  // the torn final frame after it; Size 0 if none
}

// LastFrame finds the last complete frame of the file r of the given size
// and the torn final frame after it, if any, reading only the tail of the
// file (store.md 3, "eventCount from the last physical row").
//
// It searches backwards from the end for the frame magic and confirms each
// candidate: the candidate must carry a checksum, its structure must parse
// to exactly the end of the file or to the start of a torn final frame, and
// its content must decode and match the checksum. A candidate must also
// start the file or follow a frame that the search finds ending exactly
// where it starts, which rejects a lone complete frame stored verbatim
// inside another frame's data. (A chain of such frames cannot be told from
// real ones without walking from the start; in a dsh log it would have to
// occur inside compressed data.) Unconfirmed candidates, such as magic
// bytes inside compressed data, are skipped. If nothing confirms within
// opts.Window (a final or next-to-last frame larger than the window,
// frames without checksum, a damaged tail), LastFrame falls back to Walk
// and then reports what Walk finds: corruption, or the last frame, which
// must decode.
//
// Because it reads only the tail, LastFrame does not see corruption before
// the last frames; use Walk and a Decoder to verify a whole file. When the
// file holds no complete frame, LastFrame returns ErrNoFrame, with the torn
// frame, if any, in Last.Torn.
func LastFrame(r io.ReaderAt, size int64, opts LastOptions) (Last, error) {
	dec := opts.Decoder
	if dec == nil {
		var err error
		if dec, err = NewDecoder(); err != nil {
			return Last{}, err
		}
		defer dec.Close()
	}
	if opts.Content == nil {
		opts.KeepContent = 0
	} else {
		*opts.Content = nil
	}
	window := opts.Window
	if window <= 0 {
		window = defaultWindow
	}
	lf := &lastFinder{s: newSource(r, size), dec: dec, keep: opts.KeepContent, content: opts.Content, pending: make(map[int64]Last)}
	// Nothing LastFrame returns refers to the loaded tail.
	defer lf.s.releaseTail()
	defer lf.s.releaseBuf()
	return lf.search(window)
}

// search is LastFrame's backward search of lf.s, the last window bytes of
// it, then the forward walk. Reverse runs the same search, with its own
// tail, magic and parse memos behind load, magicBelow and parse.
func (lf *lastFinder) search(window int64) (Last, error) {
	size := lf.s.size
	limit := max(0, size-window)
	lo, scanned := size, size // tail is [lo, size); candidates at or above scanned are done
	chunk := firstChunk
	for tried := 0; lo > limit && tried < maxCandidates; {
		lo = max(limit, lo-chunk)
		chunk *= 2
		if err := lf.load(lo); err != nil {
			return Last{}, err
		}
		// Candidates start at lo or above and below bound.
		bound := scanned
		for tried < maxCandidates {
			if err := lf.dec.cancelled(); err != nil {
				return Last{}, err
			}
			p := lf.magicBelow(lo, bound)
			if p < 0 {
				break
			}
			tried++
			last, ok, err := lf.consider(p)
			if err != nil || ok {
				return last, err
			}
			bound = p
		}
		scanned = lo
	}
	return walkLast(lf.s, lf.dec, lf.keep, lf.content)
}

// load makes lf.s.tail hold the bytes [lo, size).
func (lf *lastFinder) load(lo int64) error {
	if lf.rv != nil {
		return lf.rv.load(lf.s, lo)
	}
	return lf.s.loadTail(lo)
}

// magicBelow returns the offset of the last frame magic that starts at lo
// or above and below bound, and ends in the file; -1 if none. The tail
// must hold [lo, size).
func (lf *lastFinder) magicBelow(lo, bound int64) int64 {
	if lf.rv != nil {
		return lf.rv.magicBelow(lo, min(bound, lf.s.size-3))
	}
	i := lastMagic(lf.s.tail[:min(bound+3, lf.s.size)-lo])
	if i < 0 {
		return -1
	}
	return lo + int64(i)
}

// parse parses the frame at p, which must be below lf.s.size.
func (lf *lastFinder) parse(p int64) (Frame, error) {
	if lf.rv != nil {
		if f, ok := lf.rv.parsed(p, lf.s.size); ok {
			return f, nil
		}
	}
	f, err := lf.s.parseFrame(p)
	if err == nil && lf.rv != nil {
		lf.rv.remember(f)
	}
	return f, err
}

// lastMagic returns the offset of the last frame magic in b, or -1; it is
// bytes.LastIndex(b, magicBytes), faster for this pattern.
func lastMagic(b []byte) int {
	for len(b) >= len(magicBytes) {
		i := bytes.LastIndexByte(b, magicBytes[3])
		if i < 3 {
			return -1
		}
		if b[i-3] == magicBytes[0] && b[i-2] == magicBytes[1] && b[i-1] == magicBytes[2] {
			return i - 3
		}
		b = b[:i]
	}
	return -1
}

// lastFinder holds the state of LastFrame's backward search.
type lastFinder struct {
	s       *source
	dec     *Decoder
	keep    int64   // LastOptions.KeepContent
	content *[]byte // LastOptions.Content
	// pending holds, by offset, candidates whose structure reaches the end
	// of the file but whose predecessor has not been found yet.
	pending map[int64]Last
	rv      *Reverse // the memos of a Reverse search; nil for LastFrame
	spent   int64    // content decoded for candidates that failed
}

// consider examines the magic match at p, found below every match
// considered before, and reports whether it completes a confirmation. The
// error is non-nil only for read failures.
func (lf *lastFinder) consider(p int64) (Last, bool, error) {
	f, err := lf.parse(p)
	if err != nil {
		return Last{}, false, readFailure(err)
	}
	if c, ok := lf.pending[f.End()]; ok {
		delete(lf.pending, f.End())
		if last, ok, err := lf.accept(c); ok || err != nil {
			return last, ok, err
		}
	}
	if !f.HasChecksum {
		return Last{}, false, nil
	}
	c := Last{Frame: f}
	if end := f.End(); end < lf.s.size {
		if _, err := lf.parse(end); !errors.Is(err, ErrTorn) {
			return Last{}, false, readFailure(err)
		}
		c.Torn = Torn{Offset: end, Size: lf.s.size - end}
	}
	if p == 0 {
		return lf.accept(c)
	}
	lf.pending[p] = c
	return Last{}, false, nil
}

// accept decodes candidate c and reports whether its checksum matches.
// Candidates that fail cost what they decoded: once the search has
// decoded more than the decoder's limit on them, it fails with
// ErrTooLarge rather than try another.
func (lf *lastFinder) accept(c Last) (Last, bool, error) {
	if lf.spent > lf.dec.limit {
		return Last{}, false, frameError(ErrTooLarge, c.Frame.Offset, nil,
			"the search for the last frame decoded more than %d bytes of candidates that failed", lf.dec.limit)
	}
	before := lf.dec.decoded
	content, err := lf.dec.verifyKeep(lf.s, c.Frame, lf.keep)
	lf.spent += lf.dec.decoded - before
	if err != nil {
		return Last{}, false, readFailure(err)
	}
	if lf.content != nil {
		*lf.content = content
	}
	return c, true, nil
}

// readFailure returns err if it ends the search rather than rejects a
// candidate: a read failure, content beyond the decoder's limit (a real
// last frame that large would fail the same way, and trying candidate
// after candidate could cost the limit each time) or a cancellation; nil
// otherwise (a window too large costs nothing to reject).
func readFailure(err error) error {
	var rerr *readError
	var fe *Error
	if errors.As(err, &rerr) || errors.As(err, &fe) && fe.ContentLimit() > 0 ||
		errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}

// walkLast is LastFrame's fallback: a forward walk of s.
func walkLast(s *source, dec *Decoder, keep int64, keepTo *[]byte) (Last, error) {
	var last Last
	found := false
	for f, err := range s.frames() {
		if cerr := dec.cancelled(); cerr != nil {
			return Last{}, cerr
		}
		if errors.Is(err, ErrTorn) {
			last.Torn = Torn{Offset: f.Offset, Size: f.Size}
			break
		}
		if err != nil {
			return Last{}, err
		}
		last.Frame, found = f, true
	}
	if !found {
		return last, ErrNoFrame
	}
	content, err := dec.verifyKeep(s, last.Frame, keep)
	if err != nil {
		return Last{}, err
	}
	if keepTo != nil {
		*keepTo = content
	}
	return last, nil
}
