package jsonl

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"

	"github.com/dshctl/dshctl/internal/jsonl/osfs"
	"github.com/dshctl/dshctl/internal/jsonl/zstdframe"
	"github.com/dshctl/dshctl/internal/seam"
)

const (
	// maxHeaderLine bounds the header record; dsh headers are a few hundred
	// bytes.
	maxHeaderLine = 1 << 20
	// tailBlock is the block size of backward reads of plain logs.
	tailBlock = 32 << 10
	// tailFrameLimit bounds the decoded size of a final frame that the
	// tail search holds in memory; a larger frame is streamed instead.
	// dsh's frames are batches of a few KiB; holding a larger one saves
	// little, and a hostile one would cost its size in garbage.
	tailFrameLimit = 1 << 20
)

// errBudget ends a read that reached its byte bound; scans report it as
// seam.ErrScanBudget.
var errBudget = errors.New("read budget exhausted")

// errHeaderless marks a log without a complete header record: an empty file
// or a zstd file without a complete first frame. It is ErrCorrupt.
var errHeaderless = errors.New("empty or header-less")

// logFile is one open log file of a session.
type logFile struct {
	f    file
	path string
	id   string
	enc  Encoding
	gen  int
	// decs lends zstd decoders; nil makes a decoder per use.
	decs *decoderPool
	lim  limits
}

// limits bound what a reader holds or decodes for one record or frame
// (Options.MaxRecordBytes, Options.MaxFrameBytes).
type limits struct {
	record, frame int64
}

// decoder lends a decoder bound by l's frame limit and by ctx.
func (l *logFile) decoder(ctx context.Context) (*zstdframe.Decoder, error) {
	return l.decs.get(ctx, l.lim.frame)
}

// putDecoder gives back a decoder from decoder.
func (l *logFile) putDecoder(d *zstdframe.Decoder) { l.decs.put(d) }

// longRecord reports a record of n bytes (its '\n' included) at p, longer
// than l's record limit.
func (l *logFile) longRecord(n int64, p seam.Pos) error {
	return l.limitf(ErrRecordLimit, p, "record of %d bytes exceeds the record limit of %s", n-1, sizeText(l.lim.record))
}

// limitf builds the seam.ErrLimit error of a read stopped by limit
// (ErrRecordLimit or ErrFrameLimit), which its cause wraps so that a
// caller can say which option raises it.
func (l *logFile) limitf(limit error, p seam.Pos, format string, args ...any) *seam.Error {
	return &seam.Error{Kind: seam.ErrLimit, ID: l.id, Pos: p, Err: &limitError{limit: limit, msg: fmt.Sprintf(format, args...)}}
}

// limitError is the cause of a limit error: its message, and the limit.
type limitError struct {
	limit error
	msg   string
}

func (e *limitError) Error() string { return e.msg }
func (e *limitError) Unwrap() error { return e.limit }

// sizeText is n bytes as people read it: "64 MiB", or the bytes.
func sizeText(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// pos returns a position in l with unknown fields set to -1.
func (l *logFile) pos(off int64, frame, line int, seq int64) seam.Pos {
	return seam.Pos{Path: l.path, Offset: off, Frame: frame, Line: line, Seq: seq}
}

// errorf returns an error of kind at p.
func (l *logFile) errorf(kind error, p seam.Pos, format string, args ...any) *seam.Error {
	return &seam.Error{Kind: kind, ID: l.id, Pos: p, Err: fmt.Errorf(format, args...)}
}

// located copies err, an error of the seam helpers without a position,
// with the position p and the session id. A seam error keeps its kind; any
// other error becomes kind.
func (l *logFile) located(err error, kind error, p seam.Pos) error {
	var se *seam.Error
	if errors.As(err, &se) {
		c := *se
		c.ID, c.Pos = l.id, p
		if c.Pos.Seq < 0 {
			c.Pos.Seq = se.Pos.Seq
		}
		return &c
	}
	return &seam.Error{Kind: kind, ID: l.id, Pos: p, Err: err}
}

// ioError wraps a failed file operation.
func (l *logFile) ioError(err error, off int64) error {
	var se *seam.Error
	if errors.As(err, &se) {
		return err
	}
	return &seam.Error{Kind: seam.ErrIO, ID: l.id, Pos: l.pos(off, -1, -1, -1), Err: err}
}

// encName is the encoding as dsh's messages name it.
func (l *logFile) encName() string {
	if l.enc == Zstd {
		return "Zstandard session log"
	}
	return "session log"
}

// headerInfo is the header record of a log and where the body starts.
type headerInfo struct {
	hdr seam.Header
	// bodyOff is the file offset of the first body record (plain) or frame
	// (zstd); bodyText is the decoded offset of the first body record.
	bodyOff  int64
	bodyText int64
}

// body is the position of the first body record.
func (hi *headerInfo) body() position {
	return position{fileOff: hi.bodyOff, textOff: hi.bodyText, lineNo: 1, frame: 1}
}

// readHeader reads and validates the header record of a log of the given
// size: the header line (plain) or frame 0, which must hold exactly the
// header line (zstd). The header is checked against the log's generation.
func (l *logFile) readHeader(size int64, dec func() (*zstdframe.Decoder, error)) (headerInfo, error) {
	var hi headerInfo
	var line []byte
	p0 := l.pos(0, -1, 1, -1)
	if l.enc == Zstd {
		p0.Frame = 0
		f0, err := zstdframe.ParseFrame(l.f, 0, size)
		switch {
		case err == io.EOF || errors.Is(err, zstdframe.ErrTorn):
			return hi, l.errorf(seam.ErrCorrupt, p0, "%w %s", errHeaderless, l.encName())
		case err != nil:
			return hi, l.frameError(err, 0, 0)
		}
		d, err := dec()
		if err != nil {
			return hi, err
		}
		content, err := d.DecodeAll(l.f, f0, maxHeaderLine)
		switch {
		case errors.Is(err, zstdframe.ErrTooLarge) && l.lim.frame > maxHeaderLine:
			// Too much to hold: a header line too long, or records after
			// it.
			rd, err := d.NewReader(l.f, f0)
			if err != nil {
				return hi, l.frameError(err, 0, 0)
			}
			long, _, _, err := headerLineTooLong(rd)
			switch {
			case err != nil:
				return hi, l.frameError(err, 0, 0)
			case long:
				return hi, l.errorf(seam.ErrCorrupt, p0, "header line longer than %d bytes", maxHeaderLine)
			}
			return hi, l.errorf(seam.ErrCorrupt, p0, "first frame is not exactly one header line")
		case err != nil:
			return hi, l.frameError(err, 0, 0)
		}
		if len(content) == 0 || bytes.IndexByte(content, '\n') != len(content)-1 {
			return hi, l.errorf(seam.ErrCorrupt, p0, "first frame is not exactly one header line")
		}
		line = content[:len(content)-1]
		hi.bodyOff, hi.bodyText = f0.End(), int64(len(content))
	} else {
		if size == 0 {
			return hi, l.errorf(seam.ErrCorrupt, p0, "%w %s", errHeaderless, l.encName())
		}
		n := min(size, maxHeaderLine)
		buf := make([]byte, min(n, 4096))
		for {
			if err := osfs.ReadFullAt(l.f, buf, 0); err != nil {
				return hi, l.ioError(err, 0)
			}
			if i := bytes.IndexByte(buf, '\n'); i >= 0 {
				line = buf[:i]
				break
			}
			if int64(len(buf)) == n {
				if n == size {
					return hi, l.errorf(seam.ErrCorrupt, p0, "%w %s", errHeaderless, l.encName())
				}
				return hi, l.errorf(seam.ErrCorrupt, p0, "header line longer than %d bytes", maxHeaderLine)
			}
			buf = make([]byte, min(n, 4*int64(len(buf))))
		}
		hi.bodyOff = int64(len(line)) + 1
		hi.bodyText = hi.bodyOff
	}
	h, err := seam.ParseHeader(line)
	v, ok := h.Version, err == nil
	if err != nil {
		// Only a header that failed to parse is read a second time, for
		// its version alone.
		v, ok = headerVersion(line)
	}
	if ok && v > l.gen && v <= seam.MaxVersion {
		// The file's name promises generation l.gen: like dsh, a reader of
		// that generation calls a newer header unsupported, before its
		// shape.
		return hi, l.errorf(seam.ErrUnsupportedFormat, p0,
			"log format v%d in %s, which holds format v%d: written by a newer dsh", v, filepath.Base(l.path), l.gen)
	}
	if err != nil {
		if errors.Is(err, seam.ErrUnsupportedFormat) {
			return hi, l.located(err, seam.ErrUnsupportedFormat, p0)
		}
		return hi, l.located(err, seam.ErrCorrupt, p0)
	}
	if h.Version != l.gen {
		return hi, l.errorf(seam.ErrCorrupt, p0, "header version %d does not match the file's generation %d", h.Version, l.gen)
	}
	if h.ID != l.id {
		return hi, l.errorf(seam.ErrCorrupt, p0, "header id %q does not match the session folder (id %q)", h.ID, l.id)
	}
	hi.hdr = h
	return hi, nil
}

// headerLineTooLong reads the start of a log's content from rd and
// reports whether its first line (the header) is longer than
// maxHeaderLine; if not, line is that line, without its '\n', and rest
// the bytes read after it. It reads at most maxHeaderLine+1 bytes.
func headerLineTooLong(rd io.Reader) (long bool, line []byte, rest int, err error) {
	buf := make([]byte, maxHeaderLine+1)
	n, err := io.ReadFull(rd, buf)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return false, nil, 0, err
	}
	if i := bytes.IndexByte(buf[:n], '\n'); i >= 0 {
		return false, buf[:i], n - i - 1, nil
	}
	return n > maxHeaderLine, nil, 0, nil
}

// headerVersion returns the integer version of a header line, if it has
// one: the value of its top-level "version" key (the last, if repeated),
// when the line is a valid JSON object and that value an integer.
// readHeader calls it only for a line seam.ParseHeader rejected, to read
// the version without a second parse of the whole header.
func headerVersion(line []byte) (int, bool) {
	i := skipSpace(line, 0)
	if i == len(line) || line[i] != '{' || !json.Valid(line) {
		return 0, false
	}
	var raw []byte
	for i = skipSpace(line, i+1); line[i] == '"'; {
		kEnd := jsonValueEnd(line, i)
		key := line[i:kEnd]
		i = skipSpace(line, kEnd)
		vStart := skipSpace(line, i+1) // past ':'
		vEnd := jsonValueEnd(line, vStart)
		if string(key) == `"version"` || bytes.IndexByte(key, '\\') >= 0 && unquotedKey(key) == "version" {
			raw = line[vStart:vEnd]
		}
		if i = skipSpace(line, vEnd); line[i] == ',' {
			i = skipSpace(line, i+1)
		}
	}
	if raw == nil {
		return 0, false
	}
	v, err := strconv.Atoi(string(raw)) // fails for null and non-integers
	if err != nil {
		return 0, false
	}
	return v, true
}

// unquotedKey decodes a JSON string with escapes.
func unquotedKey(key []byte) string {
	var k string
	json.Unmarshal(key, &k)
	return k
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// jsonValueEnd returns the end of the value starting at b[i], in valid
// JSON.
func jsonValueEnd(b []byte, i int) int {
	depth := 0
	for ; i < len(b); i++ {
		switch b[i] {
		case '"':
			for i++; b[i] != '"'; i++ {
				if b[i] == '\\' {
					i++
				}
			}
			if depth == 0 {
				return i + 1
			}
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return i
			}
			if depth--; depth == 0 {
				return i + 1
			}
		case ',', ' ', '\t', '\n', '\r':
			if depth == 0 {
				return i
			}
		}
	}
	return i
}

// frameError turns an error from zstdframe about frame index idx into
// ErrCorrupt worded as dsh words it, or into an I/O error. base is the
// offset that the reader given to zstdframe was shifted by.
func (l *logFile) frameError(err error, idx int, base int64) error {
	var fe *zstdframe.Error
	if !errors.As(err, &fe) {
		return l.ioError(err, base)
	}
	off := fe.Offset + base
	p := l.pos(off, idx, -1, -1)
	detail := fe.Detail()
	switch {
	case errors.Is(err, zstdframe.ErrTorn):
		return l.errorf(seam.ErrCorrupt, p, "frame at byte %d is incomplete", off)
	case errors.Is(err, zstdframe.ErrTooLarge) && fe.ContentLimit() > 0:
		return l.limitf(ErrFrameLimit, p, "frame at byte %d holds more than %s of content, the frame limit", off, sizeText(fe.ContentLimit()))
	case errors.Is(err, zstdframe.ErrTooLarge):
		return l.errorf(seam.ErrLimit, p, "frame at byte %d exceeds a decoder limit: %s", off, detail)
	case errors.Is(err, zstdframe.ErrMagic):
		return l.errorf(seam.ErrCorrupt, p, "invalid frame magic at byte %d", off)
	}
	return l.errorf(seam.ErrCorrupt, p, "frame at byte %d failed validation: %s", off, detail)
}

// tailInfo is what the tail of a log tells without reading its body.
type tailInfo struct {
	next int64 // event count: the next seq
	// vocab is CheckVocabulary's failure of an event of the last
	// committed row (at lastPos): what is kept of that row, which may be
	// a record of the limit's size.
	vocab error
	// physEnd is the end of the last complete line (plain) or frame (zstd);
	// the bytes after it are a torn tail.
	physEnd int64
	// commitEnd is where the committed data ends as far as the tail shows:
	// the end of the last valid row (plain), or of its frame when that row
	// ends the frame, else the frame's start (zstd). [commitEnd, physEnd)
	// is an uncommitted tail.
	commitEnd int64
	lastPos   seam.Pos
	// frame is the decoded last complete frame of a zstd log, when it is
	// small enough to hand to a reverse scan (see lastFrame).
	frame *lastFrame
}

// lastFrameLimit is the decoded size up to which the tail search keeps the
// last frame for the reverse scan of the handle it opens.
const lastFrameLimit = 64 << 10

// lastFrame is the last complete frame of a zstd log of size bytes, as
// LastFrame found it, and its verified content. It lets the first reverse
// scan of a handle skip decoding it again while the log is unchanged.
type lastFrame struct {
	size    int64 // the log's size when it was found
	last    zstdframe.Last
	content []byte // read-only
}

// readTail finds the last committed physical row from the end of the file,
// stepping over a torn tail and over trailing records that are not valid
// rows (store.md 3).
func (l *logFile) readTail(ctx context.Context, size int64, hi *headerInfo, dec func() (*zstdframe.Decoder, error)) (tailInfo, error) {
	if l.enc == Zstd {
		return l.zstdTail(ctx, size, hi, dec)
	}
	return l.plainTail(ctx, size, hi)
}

func (l *logFile) plainTail(ctx context.Context, size int64, hi *headerInfo) (tailInfo, error) {
	t := tailInfo{physEnd: hi.bodyOff, commitEnd: hi.bodyOff}
	b := newBackLines(ctx, l.f, hi.bodyOff, size, tailBlock, 0, l.lim.record)
	first := true
	for {
		line, off, err := b.prev()
		if err == io.EOF {
			return t, nil
		}
		if err != nil && !errors.Is(err, errLongLine) {
			if ctx.Err() != nil {
				return t, err
			}
			return t, l.ioError(err, off)
		}
		torn := first && !b.term
		first = false
		if torn {
			continue // torn tail, however long
		}
		if t.physEnd == hi.bodyOff {
			t.physEnd = b.lineEnd
		}
		if err != nil {
			// Too long to hold. The byte check of its ends may tell it is
			// no row; else it may be the last row, and the tail cannot be
			// known past it.
			ok, _, rerr := couldBeRow(l.f, off, b.lineEnd-1)
			switch {
			case rerr != nil:
				return t, l.ioError(rerr, off)
			case ok:
				return t, l.longRecord(b.lineEnd-off, l.pos(off, -1, -1, -1))
			}
			continue
		}
		if !plausibleRow(line[:len(line)-1]) {
			continue
		}
		if rec, err := seam.DecodeRecordAlias(line[:len(line)-1], hi.hdr.Version); err == nil {
			r := summarize(&rec, hi.hdr.Version)
			t.next, t.vocab = r.next, r.vocab
			t.lastPos = l.pos(off, -1, -1, r.first)
			t.commitEnd = off + int64(len(line))
			return t, nil
		}
	}
}

func (l *logFile) zstdTail(ctx context.Context, size int64, hi *headerInfo, dec func() (*zstdframe.Decoder, error)) (tailInfo, error) {
	t := tailInfo{commitEnd: hi.bodyOff}
	d, err := dec()
	if err != nil {
		return t, err
	}
	var stepped int64 // content of the frames stepped over
	end := size
	for {
		// Frames of nothing but invalid records are stepped over, but a
		// few KiB of frames can hold GiBs of them: the search gives up
		// past one frame limit of content.
		if stepped > l.lim.frame {
			return t, l.limitf(ErrFrameLimit, l.pos(end, -1, -1, -1),
				"no valid record in the last %d bytes of content before byte %d (the frame limit is %s)", stepped, end, sizeText(l.lim.frame))
		}
		var content []byte
		before := d.Decoded()
		last, err := zstdframe.LastFrame(l.f, end, zstdframe.LastOptions{Decoder: d, KeepContent: tailFrameLimit, Content: &content})
		stepped += d.Decoded() - before
		if err != nil {
			if errors.Is(err, zstdframe.ErrNoFrame) {
				return t, l.errorf(seam.ErrCorrupt, l.pos(0, 0, -1, -1), "%w %s", errHeaderless, l.encName())
			}
			return t, l.frameError(err, -1, 0)
		}
		f := last.Frame
		if end == size {
			t.physEnd = f.End()
			if content != nil && len(content) <= lastFrameLimit && f.Offset >= hi.bodyOff {
				t.frame = &lastFrame{size: size, last: last, content: content}
			}
		} else if last.Torn.Size != 0 {
			return t, l.errorf(seam.ErrCorrupt, l.pos(last.Torn.Offset, -1, -1, -1), "invalid frame at byte %d", last.Torn.Offset)
		}
		if f.Offset < hi.bodyOff {
			return t, nil // only the header frame
		}
		r, found, ends, err := l.lastRowOfFrame(ctx, d, f, content, hi.hdr.Version)
		if err != nil {
			return t, err
		}
		if found {
			t.next, t.vocab = r.next, r.vocab
			t.lastPos = l.pos(f.Offset, -1, -1, r.first)
			t.commitEnd = f.Offset
			if ends {
				t.commitEnd = f.End()
			}
			return t, nil
		}
		end = f.Offset
	}
}

// rowSummary is what the tail search keeps of a row: its seqs, and whether
// its event types are in the version's vocabulary.
type rowSummary struct {
	first, next int64
	vocab       error
}

// summarize is rec's rowSummary in a version-v log.
func summarize(rec *seam.Record, v int) rowSummary {
	r := rowSummary{first: rec.FirstSeq(), next: rec.NextSeq()}
	for _, e := range rec.Events() {
		if err := seam.CheckVocabulary(&e, v); err != nil {
			r.vocab = err
			break
		}
	}
	return r
}

// bigTailRows lets one tail search at a time gather a row too large for
// memory to hold by the frame (tailFrameLimit), up to the record limit: a
// listing reads many sessions' tails at once, and each could otherwise
// hold twice the record limit.
var bigTailRows = make(chan struct{}, 1)

// lastRowOfFrame returns the last valid row of the complete frame f, whose
// verified content is content if not nil; ends says that row is the
// frame's last line. A record longer than the record limit is ErrLimit:
// it may be the last row.
func (l *logFile) lastRowOfFrame(ctx context.Context, d *zstdframe.Decoder, f zstdframe.Frame, content []byte, v int) (best rowSummary, found, ends bool, err error) {
	unterminated := func() error {
		return l.errorf(seam.ErrCorrupt, l.pos(f.Offset, -1, -1, -1), "frame at byte %d does not end on a record boundary", f.Offset)
	}
	if content == nil {
		content, err = d.DecodeAll(l.f, f, tailFrameLimit)
	}
	if err == nil {
		if len(content) > 0 && content[len(content)-1] != '\n' {
			return best, false, false, unterminated()
		}
		for last := true; len(content) > 0; last = false {
			if k := trailingNewlines(content); k > 1 {
				// A run of empty lines: step over it at once.
				content = content[:len(content)-k+1]
				if len(content) == 1 {
					break
				}
				continue
			}
			i := bytes.LastIndexByte(content[:len(content)-1], '\n')
			line := content[i+1 : len(content)-1]
			content = content[:i+1]
			if int64(len(line)) > l.lim.record {
				return best, false, false, l.longRecord(int64(len(line))+1, l.pos(f.Offset, -1, -1, -1))
			}
			if !plausibleRow(line) {
				continue
			}
			if rec, err := seam.DecodeRecordAlias(line, v); err == nil {
				return summarize(&rec, v), true, last, nil
			}
		}
		return best, false, false, nil
	}
	if !errors.Is(err, zstdframe.ErrTooLarge) {
		return best, false, false, l.frameError(err, -1, 0)
	}
	// A frame too large to hold: stream it, keeping the last valid row.
	select {
	case bigTailRows <- struct{}{}:
		defer func() { <-bigTailRows }()
	case <-ctx.Done():
		return best, false, false, ctx.Err()
	}
	rd, err := d.NewReader(l.f, f)
	if err != nil {
		return best, false, false, l.frameError(err, -1, 0)
	}
	var lr lineReader
	lr.reset(rd, l.lim.record)
	for {
		line, n, err := lr.next()
		switch {
		case err == io.EOF:
			if n > 0 {
				return best, false, false, unterminated()
			}
			return best, found, ends, nil
		case errors.Is(err, errLongLine):
			return best, false, false, l.longRecord(n, l.pos(f.Offset, -1, -1, -1))
		case err != nil:
			return best, false, false, l.frameError(err, -1, 0)
		}
		ends = false
		if !plausibleRow(line[:len(line)-1]) {
			continue
		}
		if rec, err := seam.DecodeRecordAlias(line[:len(line)-1], v); err == nil {
			best, found, ends = summarize(&rec, v), true, true
		}
	}
}
