package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"

	"github.com/dshctl/dshctl/internal/jsonl"
	"github.com/dshctl/dshctl/internal/jsonl/zstdframe"
	"github.com/dshctl/dshctl/internal/seam"
)

// closedSessions are the fixture sessions -batches dsh replays: those that
// end with every turn closed (an open turn would leave the next replay
// inside it).
var closedSessions = []string{
	"session-4f1c2a9e-8b3d-4e6f-a1c2-7d9e0b1f2a3c", // 300 KB tool result, packed rows
	"session-2c3d4e5f-6071-4829-9abc-def012345678", // compaction, replace surfaceOp
	"session-9e8d7c6b-5a49-4382-a716-05f4e3d2c1b0",
	"session-5d6e7f80-9102-4a3b-8c4d-5e6f70819203",
	"session-c3d4e5f6-a7b8-4c9d-8e0f-1a2b3c4d5e6f",
	"session-1b2c3d4e-5f60-4718-89ab-cdef01234567",
}

// batchSession is one fixture session as dsh stored it: its append
// batches (the body lines of each frame) and its event count.
type batchSession struct {
	batches [][][]byte
	events  int64
}

// runBatches writes session id of the store (a JSONL root) directly, as
// dsh wrote the fixtures: a header frame, then each fixture batch as a
// frame (or as lines, with compression none), seqs moved along, until the
// decoded log reaches size bytes.
func runBatches(fixtures, store, id string, size int64, enc jsonl.Encoding) error {
	var tmpl []batchSession
	for _, sid := range closedSessions {
		s, err := loadBatches(filepath.Join(fixtures, "dsh-0.1.0", "jsonl-zstd"), sid)
		if err != nil {
			return err
		}
		tmpl = append(tmpl, s)
	}
	dir := filepath.Join(store, "--home-dev-projects-demo-app--", id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(dir, jsonl.LogName(0, enc)))
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	var written int64
	emit := func(content []byte) error {
		written += int64(len(content))
		if enc == jsonl.Zstd {
			content = zstdframe.AppendFrame(nil, content)
		}
		_, err := w.Write(content)
		return err
	}
	h := seam.Header{Version: 0, ID: id, CreatedAt: 1785331618000, Cwd: "/home/dev/projects/demo-app"}
	if err := emit(append(h.AppendJSON(nil), '\n')); err != nil {
		return err
	}
	var base int64
	for written < size {
		for _, s := range tmpl {
			for _, b := range s.batches {
				var content []byte
				for _, line := range b {
					l, err := moveRecord(line, base)
					if err != nil {
						return err
					}
					content = append(append(content, l...), '\n')
				}
				if err := emit(content); err != nil {
					return err
				}
			}
			base += s.events
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	fmt.Printf("%s: session %q, %d events, %d bytes decoded\n", store, id, base, written)
	return nil
}

// loadBatches reads the append batches of a fixture session of the store
// root: the body lines of each frame after the header frame.
func loadBatches(root, id string) (batchSession, error) {
	var s batchSession
	logs, _ := filepath.Glob(filepath.Join(root, "*", id, "session.jsonl.zstd"))
	if len(logs) != 1 {
		return s, fmt.Errorf("session %s not found in %s", id, root)
	}
	data, err := os.ReadFile(logs[0])
	if err != nil {
		return s, err
	}
	d, err := zstdframe.NewDecoder()
	if err != nil {
		return s, err
	}
	defer d.Close()
	frames, _, err := zstdframe.Walk(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return s, err
	}
	for _, f := range frames[1:] {
		content, err := d.DecodeAll(bytes.NewReader(data), f, 16<<20)
		if err != nil {
			return s, err
		}
		var b [][]byte
		for _, line := range bytes.SplitAfter(content, []byte("\n")) {
			if line = bytes.TrimSuffix(line, []byte("\n")); len(line) == 0 {
				continue
			}
			r, err := seam.DecodeRecord(line, 0)
			if err != nil {
				return s, err
			}
			s.events = r.NextSeq()
			b = append(b, bytes.Clone(line))
		}
		s.batches = append(s.batches, b)
	}
	return s, nil
}

var seq0 = regexp.MustCompile(`"seq0":[0-9]+`)

// moveRecord returns a v0 record line with every seq it holds moved by
// base: a packed row's seq0, or an event's seq, sourceEventSeqs and replace
// op.
func moveRecord(line []byte, base int64) ([]byte, error) {
	r, err := seam.DecodeRecord(line, 0)
	if err != nil {
		return nil, err
	}
	if p := r.Packed; p != nil {
		return seq0.ReplaceAll(line, []byte(`"seq0":`+strconv.FormatInt(p.Seq0+base, 10))), nil
	}
	e := r.Event
	e.Seq += base
	for i := range e.SourceEventSeqs {
		e.SourceEventSeqs[i] += base
	}
	if e.SurfaceOp, err = moveReplace(e.SurfaceOp, base); err != nil {
		return nil, err
	}
	return e.AppendRecordJSON(nil, 0), nil
}
