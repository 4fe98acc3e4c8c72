package ingest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/dshctl/dshctl/internal/rawjson"
	"github.com/dshctl/dshctl/internal/seam"
)

// memSpool is how much of a batch is held in memory before it moves to a
// temp file: a batch this small is appended in one piece (seam.Handle's
// Append), a larger one streamed (seam.StreamAppender).
const memSpool = 4 << 20

// spool holds the lines of a validated batch until the write, each as
// "<line number> <length>\n<line>\n": in memory while small, then in a temp file
// (outside the store: the folder given, else os.TempDir), removed by
// Close.
type spool struct {
	dir   string
	mem   bytes.Buffer
	f     *os.File
	w     *bufio.Writer
	size  int64
	lines int64
	// first is the seq the batch's first event gives (-1: none, or seqs
	// are assigned).
	first int64
	max   int64 // the longest line
	// buf is each's buffer of a line, reused: the input's line buffer
	// once the input is read, so that a long line is held once.
	buf []byte
}

// numberRoom is the room a line's buffer keeps for seam.AssignSeq to add
// a seq and a time in place: `"seq":N,"time":T,`.
const numberRoom = 64

func (s *spool) add(no int, line []byte) error {
	line = trimEOL(line)
	var w io.Writer = &s.mem
	if s.f == nil && s.mem.Len()+len(line) > memSpool {
		f, err := os.CreateTemp(s.dir, "dshctl-append-*.jsonl")
		if err != nil {
			return fmt.Errorf("spooling the events to a temp file: %w", err)
		}
		s.f, s.w = f, bufio.NewWriterSize(f, 256<<10)
		if _, err := s.w.Write(s.mem.Bytes()); err != nil {
			return s.writeError(err)
		}
		s.mem = bytes.Buffer{}
	}
	if s.w != nil {
		w = s.w
	}
	var num [48]byte
	b := strconv.AppendInt(num[:0], int64(no), 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(len(line)), 10)
	b = append(b, '\n')
	w.Write(b)
	w.Write(line)
	if _, err := w.Write([]byte{'\n'}); err != nil {
		return s.writeError(err)
	}
	s.size += int64(len(b) + len(line) + 1)
	s.lines++
	return nil
}

func (s *spool) writeError(err error) error {
	return fmt.Errorf("spooling the events to %s: %w", s.f.Name(), err)
}

// finish makes the spool ready to be read.
func (s *spool) finish() error {
	if s.w == nil {
		return nil
	}
	if err := s.w.Flush(); err != nil {
		return s.writeError(err)
	}
	return nil
}

// large says whether the batch went to a temp file.
func (s *spool) large() bool { return s.f != nil }

// Close removes the temp file.
func (s *spool) Close() error {
	if s.f == nil {
		return nil
	}
	name := s.f.Name()
	s.f.Close()
	s.f = nil
	return os.Remove(name)
}

// each calls fn with every line of the spool, in order, and its number;
// the line is valid until fn returns unless keep is set, which gives each
// line its own memory. A line's buffer has room for seam.AssignSeq to
// number it in place.
func (s *spool) each(ctx context.Context, keep bool, fn func(no int, line []byte) error) error {
	var r io.Reader = bytes.NewReader(s.mem.Bytes())
	if s.f != nil {
		if _, err := s.f.Seek(0, io.SeekStart); err != nil {
			return fmt.Errorf("reading back %s: %w", s.f.Name(), err)
		}
		r = s.f
	}
	br := bufio.NewReaderSize(r, 256<<10)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		hdr, err := br.ReadSlice('\n')
		if err == io.EOF && len(hdr) == 0 {
			return nil
		}
		var no, size int
		if err == nil {
			no, size, err = parseSpoolHeader(hdr)
		}
		if err != nil {
			return fmt.Errorf("reading back the spooled events: %w", err)
		}
		// A buffer of the line's size, allocated once: growing one in
		// steps would leave copies of a long line as garbage.
		need := size + 1 + numberRoom
		var buf []byte
		switch {
		case keep:
			buf = make([]byte, size+1, need)
		case cap(s.buf) >= need:
			buf = s.buf[:size+1]
		default:
			s.buf = make([]byte, size+1, need)
			buf = s.buf
		}
		if _, err := io.ReadFull(br, buf); err != nil || buf[size] != '\n' {
			if err == nil || err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return fmt.Errorf("reading back the spooled events: %w", err)
		}
		if err := fn(no, buf[:size]); err != nil {
			return err
		}
	}
}

// parseSpoolHeader parses a spooled line's "<line number> <length>\n".
func parseSpoolHeader(hdr []byte) (no, size int, err error) {
	f := bytes.Fields(hdr)
	if len(f) == 2 {
		if no, err = strconv.Atoi(string(f[0])); err == nil {
			size, err = strconv.Atoi(string(f[1]))
		}
	}
	if len(f) != 2 || err != nil || size < 0 {
		return 0, 0, fmt.Errorf("bad record header %q", hdr)
	}
	return no, size, nil
}

// parser validates the lines of a batch as the events of a version-v log
// and numbers them.
type parser struct {
	v int // -1: not known

	next      int64 // the seq of the next event
	assignSeq bool
	now       int64
}

// parse validates one input line as the event of seq p.next and returns
// it in canonical form: seam.PrepareEvent's rules (envelope, payload,
// vocabulary) and the record rules verify applies (seam.CheckRecord, on
// the whole line: no repeated member, UTF-8 only). The event aliases line,
// which numbering may change: line is not used again by the caller.
func (p *parser) parse(line []byte) (seam.Event, error) {
	// Numbering below changes line only when p.assignSeq, the one case
	// that does not look at valid again.
	valid := rawjson.Valid(line)
	if valid {
		if err := seam.CheckStrictJSON(line); err != nil {
			return seam.Event{}, err
		}
	}
	if p.v < 0 {
		// The log's version is not known yet: what does not depend on it
		// is checked, the rest under the lock.
		if !valid {
			_, err := seam.DecodeRecord(line, seam.MaxVersion)
			return seam.Event{}, causeOf(err)
		}
		return seam.Event{}, nil
	}
	if p.assignSeq {
		// In place: the line's buffer has room (numberRoom), and the
		// event aliases it.
		var err error
		if line, err = seam.AssignSeq(line, p.next, p.now); err != nil {
			return seam.Event{}, causeOf(err)
		}
	}
	rec, err := seam.DecodeRecordAlias(line, p.v)
	if err != nil {
		if !p.assignSeq && valid && !hasMember(line, "seq") && !hasMember(line, "seq0") {
			return seam.Event{}, ErrNoSeq
		}
		return seam.Event{}, causeOf(err)
	}
	if rec.Packed != nil {
		return seam.Event{}, fmt.Errorf("packed %s rows are a storage form: append one event per line", rec.Packed.Kind)
	}
	if rec.Event.Seq != p.next {
		return seam.Event{}, &SeqError{Got: rec.Event.Seq, Want: p.next}
	}
	if err := seam.CheckRecord(&rec, p.v); err != nil {
		return seam.Event{}, err
	}
	ev, err := seam.PrepareEventAlias(rec.Event, p.v)
	if err != nil {
		return seam.Event{}, causeOf(err)
	}
	p.next++
	return ev, nil
}

// causeOf strips the seam error's decoration, keeping the reason: the
// input is not a stored log, so "corrupt session log" would mislead.
func causeOf(err error) error {
	var se *seam.Error
	if errors.As(err, &se) && se.Err != nil {
		return se.Err
	}
	return err
}

func hasMember(obj []byte, key string) bool {
	_, ok := rawjson.Member(obj, key)
	return ok
}
