// Command genlog builds a large session log for benchmarks out of the real
// events dsh wrote in the fixtures, not out of repetitive text.
//
// It stores one format-v0 session in a JSONL store: every event of every
// dsh 0.1.0 fixture session (prompts, streamed chunks, tool calls, a 300 KB
// tool result), copied again and again with seqs, times and the seqs that
// sourceEventSeqs and replace ops cite moved along, one durable append per
// copy (one zstd frame each), until the decoded log reaches -mib MiB. A
// copy is about 370 KB, far beyond DEFLATE's 32 KiB window and beyond each
// zstd frame, so the log compresses like the fixtures themselves.
//
// With -batches dsh it replays instead the append batches dsh itself wrote
// (the frames of the jsonl-zstd fixtures, records as stored: packed chunk
// rows, range-free sourceEventSeqs), one frame per batch as dsh writes
// them, of the fixture sessions whose turns all close, so that the log has
// a real log's frame structure and verifies clean.
//
//	go run ./scripts/genlog -store /tmp/bench -mib 1024
//	go run ./scripts/genlog -store /tmp/bench -mib 3072 -batches dsh
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/dshctl/dshctl/internal/jsonl"
	"github.com/dshctl/dshctl/internal/seam"
)

func main() {
	fixtures := flag.String("fixtures", "../shared/fixtures", "the shared fixtures folder")
	store := flag.String("store", "", "the JSONL store to create the session in (required)")
	id := flag.String("id", "bench", "the session id")
	mib := flag.Int64("mib", 1024, "size of the decoded log in MiB")
	compression := flag.String("compression", "zstd", "zstd or none, for a new store")
	batches := flag.String("batches", "copy", "copy: one append per copy of every session; dsh: dsh's own append batches")
	flag.Parse()
	if *store == "" || *mib <= 0 || *batches != "copy" && *batches != "dsh" {
		flag.Usage()
		os.Exit(2)
	}
	gen := run
	if *batches == "dsh" {
		gen = runBatches
	}
	if err := gen(*fixtures, *store, *id, *mib<<20, jsonl.Encoding(*compression)); err != nil {
		fmt.Fprintln(os.Stderr, "genlog:", err)
		os.Exit(1)
	}
}

func run(fixtures, store, id string, size int64, enc jsonl.Encoding) error {
	sessions, err := fixtureEvents(filepath.Join(fixtures, "dsh-0.1.0", "expected", "jsonl-none"))
	if err != nil {
		return err
	}
	ctx := context.Background()
	svc, err := jsonl.Open(store, jsonl.Options{CreateRoot: true, Compression: enc})
	if err != nil {
		return err
	}
	defer svc.Close()
	const created = 1785331618000
	h := seam.Header{Version: 0, ID: id, CreatedAt: created, Cwd: "/home/dev/projects/demo-app", AgentPreset: "standard"}
	w, err := svc.Create(ctx, h, seam.CreateOptions{})
	if err != nil {
		return err
	}
	defer w.Close()
	written := int64(len(h.AppendJSON(nil)) + 1)
	var next int64
	var buf []byte
	for copyNo := int64(0); written < size; copyNo++ {
		var batch []seam.Event
		for _, events := range sessions {
			base := next
			for _, e := range events {
				e.Seq += base
				e.Time += copyNo * 3_600_000
				if e.SourceEventSeqs != nil {
					e.SourceEventSeqs = slices.Clone(e.SourceEventSeqs)
					for i := range e.SourceEventSeqs {
						e.SourceEventSeqs[i] += base
					}
				}
				if e.SurfaceOp, err = moveReplace(e.SurfaceOp, base); err != nil {
					return fmt.Errorf("seq %d: %v", e.Seq, err)
				}
				buf = e.AppendJSON(buf[:0])
				written += int64(len(buf)) + 1
				batch = append(batch, e)
				next++
			}
		}
		if err := w.Append(ctx, batch); err != nil {
			return err
		}
	}
	fmt.Printf("%s: session %q, %d events, %d bytes decoded\n", store, id, next, written)
	return nil
}

// fixtureEvents reads the events of every fixture session in dir, in name
// order; each session's seqs run from 0.
func fixtureEvents(dir string) ([][]seam.Event, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.events.jsonl"))
	if err != nil || len(names) == 0 {
		return nil, fmt.Errorf("no fixture events in %s", dir)
	}
	slices.Sort(names)
	var out [][]seam.Event
	for _, name := range names {
		data, err := os.ReadFile(name)
		if err != nil {
			return nil, err
		}
		var events []seam.Event
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			rec, err := seam.DecodeRecord(sc.Bytes(), 0)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", name, err)
			}
			if rec.FirstSeq() != int64(len(events)) {
				return nil, fmt.Errorf("%s: seq %d where %d was due", name, rec.FirstSeq(), len(events))
			}
			events = append(events, rec.Events()...)
		}
		if err := sc.Err(); err != nil {
			return nil, err
		}
		if len(events) > 0 {
			out = append(out, events)
		}
	}
	return out, nil
}

// moveReplace moves the seqs of a v0 replace surface op by base; any
// other op is returned as is.
func moveReplace(op json.RawMessage, base int64) (json.RawMessage, error) {
	if len(op) == 0 || op[0] != '{' {
		return op, nil
	}
	var r struct {
		Op         string
		Start, End int64
	}
	if err := json.Unmarshal(op, &r); err != nil {
		return nil, err
	}
	return json.RawMessage(`{"op":"replace","start":` + strconv.FormatInt(r.Start+base, 10) +
		`,"end":` + strconv.FormatInt(r.End+base, 10) + `}`), nil
}
