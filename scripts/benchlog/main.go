// Command benchlog writes a long dsh session log for benchmarks, built from
// the real events of the sessions dsh 0.1.0 wrote (shared/fixtures): their
// append batches, each its own zstd frame as dsh writes them, replayed one
// session after another with every seq reference shifted, until the log
// reaches the size asked for. Each frame holds real content, so the log
// compresses like a real one (about 3:1), not like repetitive text.
//
//	go run ./scripts/benchlog -fixtures ../shared/fixtures -out ROOT -size 1GiB
//
// writes ROOT/--bench--/bench/session.jsonl.zstd (or session.jsonl with
// -compression none): a v0 session "bench" that verifies clean. -plain
// PLAINROOT also writes the same log plain there, the zstd log's
// decoded text.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/dshctl/dshctl/internal/jsonl/zstdframe"
	"github.com/dshctl/dshctl/internal/seam"
)

// sessions are the fixture sessions replayed: every one that ends with its
// turns closed (an open turn would leave the next replay inside it).
var sessions = []string{
	"session-4f1c2a9e-8b3d-4e6f-a1c2-7d9e0b1f2a3c", // 300 KB tool result, packed rows
	"session-2c3d4e5f-6071-4829-9abc-def012345678", // compaction, replace surfaceOp
	"session-9e8d7c6b-5a49-4382-a716-05f4e3d2c1b0",
	"session-5d6e7f80-9102-4a3b-8c4d-5e6f70819203",
	"session-c3d4e5f6-a7b8-4c9d-8e0f-1a2b3c4d5e6f",
	"session-1b2c3d4e-5f60-4718-89ab-cdef01234567",
}

func main() {
	fixtures := flag.String("fixtures", "../shared/fixtures", "the shared fixtures folder")
	out := flag.String("out", "", "the store root to write (required)")
	size := flag.String("size", "256MiB", "the log's size: bytes, or with KiB, MiB or GiB")
	compression := flag.String("compression", "zstd", "zstd or none")
	plain := flag.String("plain", "", "also write the log plain under this store root")
	flag.Parse()
	n, err := parseSize(*size)
	if err != nil || *out == "" || (*compression != "zstd" && *compression != "none") {
		fmt.Fprintln(os.Stderr, "usage: benchlog -out ROOT [-size 1GiB] [-compression zstd|none] [-fixtures DIR]")
		os.Exit(2)
	}
	if err := run(*fixtures, *out, *plain, n, *compression == "zstd"); err != nil {
		fmt.Fprintln(os.Stderr, "benchlog:", err)
		os.Exit(1)
	}
}

func parseSize(s string) (int64, error) {
	mult := int64(1)
	for suffix, m := range map[string]int64{"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30} {
		if rest, ok := strings.CutSuffix(s, suffix); ok {
			s, mult = rest, m
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n * mult, err
}

// batch is one append batch of a fixture session: its body lines.
type batch [][]byte

// session is the batches of one fixture session and its event count.
type session struct {
	batches []batch
	events  int64
}

func run(fixtures, out, plainOut string, size int64, zstd bool) error {
	var tmpl []session
	for _, id := range sessions {
		s, err := load(filepath.Join(fixtures, "dsh-0.1.0", "jsonl-zstd"), id)
		if err != nil {
			return err
		}
		tmpl = append(tmpl, s)
	}
	name := "session.jsonl"
	if zstd {
		name += ".zstd"
	}
	lw, err := create(out, name)
	if err != nil {
		return err
	}
	var pw *logWriter
	if plainOut != "" {
		if pw, err = create(plainOut, "session.jsonl"); err != nil {
			return err
		}
	}
	var written int64
	emit := func(content []byte) error {
		if pw != nil {
			if _, err := pw.w.Write(content); err != nil {
				return err
			}
		}
		if zstd {
			content = zstdframe.AppendFrame(nil, content)
		}
		written += int64(len(content))
		_, err := lw.w.Write(content)
		return err
	}
	header := `{"type":"session","version":0,"id":"bench","createdAt":1785331619000,"cwd":"/bench","delegationDepth":0}` + "\n"
	if err := emit([]byte(header)); err != nil {
		return err
	}
	var base int64
	for written < size {
		for _, s := range tmpl {
			for _, b := range s.batches {
				var content []byte
				for _, line := range b {
					l, err := shift(line, base)
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
	for _, l := range []*logWriter{lw, pw} {
		if l == nil {
			continue
		}
		if err := l.w.Flush(); err != nil {
			return err
		}
		if err := l.f.Close(); err != nil {
			return err
		}
	}
	fmt.Printf("%s: %d bytes, %d events\n", lw.f.Name(), written, base)
	return nil
}

type logWriter struct {
	f *os.File
	w *bufio.Writer
}

// create makes the log file name of the session "bench" under root.
func create(root, name string) (*logWriter, error) {
	dir := filepath.Join(root, "--bench--", "bench")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	f, err := os.Create(filepath.Join(dir, name))
	if err != nil {
		return nil, err
	}
	return &logWriter{f: f, w: bufio.NewWriterSize(f, 1<<20)}, nil
}

// load reads the batches of a fixture session of the store root: one per
// frame after the header frame.
func load(root, id string) (session, error) {
	var s session
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
		var b batch
		for _, line := range bytes.SplitAfter(content, []byte("\n")) {
			if len(line) == 0 {
				continue
			}
			line = bytes.TrimSuffix(line, []byte("\n"))
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

var seq0 = regexp.MustCompile(`"seq0":([0-9]+)`)

// shift returns the record line with every seq it holds moved up by off.
func shift(line []byte, off int64) ([]byte, error) {
	r, err := seam.DecodeRecord(line, 0)
	if err != nil {
		return nil, err
	}
	if r.Packed != nil {
		return seq0.ReplaceAllFunc(line, func(m []byte) []byte {
			return []byte(`"seq0":` + strconv.FormatInt(r.Packed.Seq0+off, 10))
		}), nil
	}
	e := r.Event
	e.Seq += off
	for i := range e.SourceEventSeqs {
		e.SourceEventSeqs[i] += off
	}
	if len(e.SurfaceOp) > 0 && e.SurfaceOp[0] == '{' {
		var op struct {
			Op         string `json:"op"`
			Start, End int64
		}
		if err := json.Unmarshal(e.SurfaceOp, &op); err != nil {
			return nil, err
		}
		e.SurfaceOp = []byte(fmt.Sprintf(`{"op":%q,"start":%d,"end":%d}`, op.Op, op.Start+off, op.End+off))
	}
	return e.AppendRecordJSON(nil, 0), nil
}
