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
// "<line number> <line>\n": in memory while small, then in a temp file
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
}

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
	var num [24]byte
	b := strconv.AppendInt(num[:0], int64(no), 10)
	b = append(b, ' ')
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
// line its own memory.
func (s *spool) each(ctx context.Context, keep bool, fn func(no int, line []byte) error) error {
	var r io.Reader = bytes.NewReader(s.mem.Bytes())
	if s.f != nil {
		if _, err := s.f.Seek(0, io.SeekStart); err != nil {
			return fmt.Errorf("reading back %s: %w", s.f.Name(), err)
		}
		r = s.f
	}
	br := bufio.NewReaderSize(r, 256<<10)
	var buf []byte
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		buf = buf[:0]
		var err error
		for {
			var chunk []byte
			chunk, err = br.ReadSlice('\n')
			buf = append(buf, chunk...)
			if !errors.Is(err, bufio.ErrBufferFull) {
				break
			}
		}
		if err == io.EOF && len(buf) == 0 {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading back the spooled events: %w", err)
		}
		sp := bytes.IndexByte(buf, ' ')
		no, _ := strconv.Atoi(string(buf[:sp]))
		line := buf[sp+1 : len(buf)-1]
		if keep {
			line = bytes.Clone(line)
		}
		if err := fn(no, line); err != nil {
			return err
		}
		if cap(buf) > 1<<20 {
			buf = nil // let a long line's buffer go before the next line
		}
	}
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
// the whole line: no repeated member, UTF-8 only).
func (p *parser) parse(line []byte) (seam.Event, error) {
	if rawjson.Valid(line) {
		if err := seam.CheckStrictJSON(line); err != nil {
			return seam.Event{}, err
		}
	}
	if p.v < 0 {
		// The log's version is not known yet: what does not depend on it
		// is checked, the rest under the lock.
		if !rawjson.Valid(line) {
			_, err := seam.DecodeRecord(line, seam.MaxVersion)
			return seam.Event{}, causeOf(err)
		}
		return seam.Event{}, nil
	}
	if p.assignSeq {
		var err error
		if line, err = seam.AssignSeq(line, p.next, p.now); err != nil {
			return seam.Event{}, causeOf(err)
		}
	}
	rec, err := seam.DecodeRecordAlias(line, p.v)
	if err != nil {
		if !p.assignSeq && rawjson.Valid(line) && !hasMember(line, "seq") && !hasMember(line, "seq0") {
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
	ev, err := seam.PrepareEvent(rec.Event, p.v)
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
