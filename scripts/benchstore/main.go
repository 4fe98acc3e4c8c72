// Command benchstore builds the session stores scripts/bench.sh measures,
// from the real events of a store written by dsh (testdata/demo/sessions:
// dsh 0.1.0 logs, which compress about 3:1 as real logs do). It never
// makes up payloads: repetitive synthetic text compresses 50:1 and hides
// the decoding cost.
//
//	benchstore -src DIR -out ROOT -enc zstd|none -session ID:SIZE [...]
//	benchstore -src DIR -out ROOT -enc zstd|none -sessions N
//
// -session writes one long session of at least SIZE decoded bytes (a
// number with an optional K, M or G suffix, powers of 1024): the batches of
// the largest session of DIR (turns with chunk rows, tool calls and a
// 300 KB tool result), repeated with seqs, times and turn numbers moved on
// so that the log is one valid session, each batch its own zstd frame as
// dsh writes it. -sessions writes N sessions, copies of DIR's sessions in
// turn under new ids, created a minute apart, spread over 40 projects.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/dshctl/dshctl/internal/jsonl"
	"github.com/dshctl/dshctl/internal/jsonl/zstdframe"
	"github.com/dshctl/dshctl/internal/seam"
)

type sessionFlags []string

func (s *sessionFlags) String() string     { return strings.Join(*s, ",") }
func (s *sessionFlags) Set(v string) error { *s = append(*s, v); return nil }

func main() {
	var (
		src, out, enc string
		n             int
		long          sessionFlags
	)
	flag.StringVar(&src, "src", "testdata/demo/sessions", "a zstd JSONL root written by dsh, whose events are copied")
	flag.StringVar(&out, "out", "", "the JSONL root to write (must not exist)")
	flag.StringVar(&enc, "enc", "zstd", "encoding of the logs written: zstd or none")
	flag.IntVar(&n, "sessions", 0, "write this many sessions, copies of the source's")
	flag.Var(&long, "session", "write one long session `ID:SIZE` (repeatable)")
	flag.Parse()
	if err := run(src, out, jsonl.Encoding(enc), n, long); err != nil {
		fmt.Fprintln(os.Stderr, "benchstore:", err)
		os.Exit(1)
	}
}

func run(src, out string, enc jsonl.Encoding, n int, long []string) error {
	if out == "" || enc != jsonl.Zstd && enc != jsonl.None || n == 0 && len(long) == 0 {
		return errors.New("usage: benchstore -src DIR -out ROOT -enc zstd|none (-sessions N | -session ID:SIZE...)")
	}
	if _, err := os.Stat(out); err == nil {
		return fmt.Errorf("%s exists", out)
	}
	sessions, err := readSource(src)
	if err != nil {
		return err
	}
	tmp := out + ".tmp"
	os.RemoveAll(tmp)
	for i := range n {
		t := &sessions[i%len(sessions)]
		h := t.header
		h.ID = fmt.Sprintf("%s-%05d", t.header.ID, i)
		h.CreatedAt = 1785000000000 + int64(i)*60_000
		if h.Cwd != "" {
			h.Cwd = fmt.Sprintf("/home/dev/project-%02d", i%40)
		}
		body := t.zstdBody
		if enc == jsonl.None {
			body = bytes.Join(t.lines(), nil)
		}
		if err := writeLog(tmp, enc, h, func(w io.Writer) error { _, err := w.Write(body); return err }); err != nil {
			return err
		}
	}
	for _, spec := range long {
		id, size, err := parseSpec(spec)
		if err != nil {
			return err
		}
		if err := writeLong(tmp, enc, largest(sessions), id, size); err != nil {
			return err
		}
	}
	return os.Rename(tmp, out)
}

// parseSpec reads ID:SIZE.
func parseSpec(spec string) (string, int64, error) {
	id, size, ok := strings.Cut(spec, ":")
	mult := int64(1)
	switch {
	case strings.HasSuffix(size, "K"):
		mult = 1 << 10
	case strings.HasSuffix(size, "M"):
		mult = 1 << 20
	case strings.HasSuffix(size, "G"):
		mult = 1 << 30
	}
	v, err := strconv.ParseInt(strings.TrimRight(size, "KMG"), 10, 64)
	if !ok || id == "" || err != nil || v <= 0 {
		return "", 0, fmt.Errorf("-session %q: want ID:SIZE", spec)
	}
	return id, v * mult, nil
}

// source is one session of the source store.
type source struct {
	header seam.Header
	// batches holds the body records, one slice per zstd frame, each
	// line with its newline.
	batches [][][]byte
	// zstdBody is the log file after frame 0, as dsh wrote it.
	zstdBody []byte
	size     int64 // decoded bytes of the body
}

func (s *source) lines() [][]byte {
	var out [][]byte
	for _, b := range s.batches {
		out = append(out, b...)
	}
	return out
}

func largest(ss []source) *source {
	best := &ss[0]
	for i := range ss {
		if ss[i].size > best.size {
			best = &ss[i]
		}
	}
	return best
}

// readSource reads every session of a zstd root as stored.
func readSource(root string) ([]source, error) {
	ctx := context.Background()
	s, err := jsonl.Open(root, jsonl.Options{})
	if err != nil {
		return nil, err
	}
	defer s.Close()
	entries, err := s.List(ctx)
	if err != nil {
		return nil, err
	}
	var out []source
	for _, e := range entries {
		if e.Err != nil {
			return nil, e.Err
		}
		if e.Snapshot.Location.Encoding != string(jsonl.Zstd) {
			return nil, fmt.Errorf("%s: the source must be a zstd root", e.Snapshot.Location.Path)
		}
		h, err := s.Open(ctx, e.Snapshot.Header.ID, seam.Read)
		if err != nil {
			return nil, err
		}
		src := source{header: e.Snapshot.Header}
		bodyOff := int64(-1)
		for rec, err := range h.(seam.RawReader).Raw(ctx) {
			if err != nil {
				h.Close()
				return nil, err
			}
			if rec.Group.Index == 0 {
				continue // the header
			}
			if bodyOff < 0 {
				bodyOff = rec.Group.Offset
			}
			if i := rec.Group.Index - 1; i >= len(src.batches) {
				src.batches = append(src.batches, nil)
			}
			src.batches[len(src.batches)-1] = append(src.batches[len(src.batches)-1], rec.Line)
			src.size += int64(len(rec.Line))
		}
		h.Close()
		if bodyOff > 0 {
			file, err := os.ReadFile(e.Snapshot.Location.Path)
			if err != nil {
				return nil, err
			}
			src.zstdBody = file[bodyOff:]
		}
		out = append(out, src)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s holds no session", root)
	}
	return out, nil
}

// writeLog writes the log of session h in root: the header (its own frame
// in zstd), then what body writes.
func writeLog(root string, enc jsonl.Encoding, h seam.Header, body func(io.Writer) error) error {
	project := "_no-cwd"
	if h.Cwd != "" {
		var err error
		if project, err = jsonl.ProjectKey(h.Cwd); err != nil {
			return err
		}
	}
	seg, err := jsonl.EncodeSegment(h.ID)
	if err != nil {
		return err
	}
	dir := filepath.Join(root, project, seg)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(filepath.Join(dir, jsonl.LogName(h.Version, enc)), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	line := append(h.AppendJSON(nil), '\n')
	if enc == jsonl.Zstd {
		line = zstdframe.AppendFrame(nil, line)
	}
	_, err = f.Write(line)
	if err == nil {
		err = body(f)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// writeLong writes session id, the batches of t repeated until the body
// holds at least size decoded bytes.
func writeLong(root string, enc jsonl.Encoding, t *source, id string, size int64) error {
	h := t.header
	h.ID = id
	h.SeedLength, h.ParentSession = nil, ""
	var seqs, turns, first, last int64
	first = -1
	for _, line := range t.lines() {
		rec, err := seam.DecodeRecord(bytes.TrimSuffix(line, []byte("\n")), h.Version)
		if err != nil {
			return err
		}
		seqs = rec.NextSeq()
		for _, e := range rec.Events() {
			if first < 0 {
				first = e.Time
			}
			last = e.Time
			if e.Type == "turn/start" {
				turns++
			}
		}
	}
	span := last - first + 1000
	return writeLog(root, enc, h, func(w io.Writer) error {
		var text, frame []byte
		var written int64
		for k := int64(0); ; k++ {
			for _, batch := range t.batches {
				if written >= size {
					return nil
				}
				text = text[:0]
				for _, line := range batch {
					var err error
					if text, err = shift(text, line, k*seqs, k*turns, k*span); err != nil {
						return err
					}
				}
				written += int64(len(text))
				out := text
				if enc == jsonl.Zstd {
					frame = zstdframe.AppendFrame(frame[:0], text)
					out = frame
				}
				if _, err := w.Write(out); err != nil {
					return err
				}
			}
		}
	})
}

// shift appends line (a v0 record and its newline) with its seqs moved on
// by seq, its times by ms and its turn number by turn, keys in their order.
func shift(dst, line []byte, seq, turn, ms int64) ([]byte, error) {
	members, err := objectMembers(line)
	if err != nil {
		return nil, err
	}
	dst = append(dst, '{')
	for i, m := range members {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = strconv.AppendQuote(dst, m.key)
		dst = append(dst, ':')
		v := m.val
		switch m.key {
		case "seq", "seq0":
			v, err = addInt(v, seq)
		case "time", "time0":
			v, err = addInt(v, ms)
		case "data":
			v, err = shiftMembers(v, map[string]int64{"turn": turn})
		case "surfaceOp":
			if v[0] == '{' {
				v, err = shiftMembers(v, map[string]int64{"start": seq, "end": seq, "startSeq": seq, "endSeq": seq})
			}
		case "sourceEventSeqs":
			var s []int64
			if err = json.Unmarshal(v, &s); err == nil {
				for j := range s {
					s[j] += seq
				}
				v, err = json.Marshal(s)
			}
		}
		if err != nil {
			return nil, fmt.Errorf("%s of %.60s: %w", m.key, line, err)
		}
		dst = append(dst, v...)
	}
	return append(dst, '}', '\n'), nil
}

// shiftMembers adds by[key] to the integer members of obj named in by.
func shiftMembers(obj []byte, by map[string]int64) ([]byte, error) {
	members, err := objectMembers(obj)
	if err != nil {
		return nil, err
	}
	out := []byte{'{'}
	for i, m := range members {
		if i > 0 {
			out = append(out, ',')
		}
		out = strconv.AppendQuote(out, m.key)
		out = append(out, ':')
		v := m.val
		if d, ok := by[m.key]; ok && d != 0 {
			if v, err = addInt(v, d); err != nil {
				return nil, err
			}
		}
		out = append(out, v...)
	}
	return append(out, '}'), nil
}

type member struct {
	key string
	val json.RawMessage
}

// objectMembers splits a JSON object into its members, in order.
func objectMembers(obj []byte) ([]member, error) {
	dec := json.NewDecoder(bytes.NewReader(obj))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("not an object: %.40s", obj)
	}
	var out []member
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		out = append(out, member{tok.(string), v})
	}
	return out, nil
}

func addInt(v []byte, d int64) ([]byte, error) {
	n, err := strconv.ParseInt(string(v), 10, 64)
	if err != nil {
		return nil, err
	}
	return strconv.AppendInt(nil, n+d, 10), nil
}
