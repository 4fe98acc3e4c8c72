package zstdframe

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// streamFrame encodes content as dsh's stream encoder does: no content
// size, a window of the given size, a checksum, and a block boundary after
// each of the first len(flushes) chunks, whose lengths flushes gives.
func streamFrame(tb testing.TB, content []byte, window int, flushes ...int) []byte {
	tb.Helper()
	var b bytes.Buffer
	e, err := zstd.NewWriter(&b, zstd.WithEncoderConcurrency(1), zstd.WithEncoderCRC(true), zstd.WithWindowSize(window))
	if err != nil {
		tb.Fatal(err)
	}
	// A flush before Close, or klauspost states the size of content it
	// holds whole.
	for _, n := range append(flushes, len(content)-sum(flushes)) {
		if _, err := e.Write(content[:n]); err != nil {
			tb.Fatal(err)
		}
		if err := e.Flush(); err != nil {
			tb.Fatal(err)
		}
		content = content[n:]
	}
	if err := e.Close(); err != nil {
		tb.Fatal(err)
	}
	return b.Bytes()
}

func sum(ns []int) (s int) {
	for _, n := range ns {
		s += n
	}
	return s
}

// contentForFrame returns a prefix of the text of a dsh log whose
// AppendFrame frame has about size bytes.
func contentForFrame(tb testing.TB, size int) []byte {
	tb.Helper()
	path := filepath.Join(fixtureRoot(tb), "expected", "jsonl-zstd", "session-4f1c2a9e-8b3d-4e6f-a1c2-7d9e0b1f2a3c.raw.jsonl")
	text, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	n := sort.Search(len(text), func(n int) bool { return len(AppendFrame(nil, text[:n])) >= size })
	return text[:n]
}

// dshFrame returns the frame of a fixture log written by dsh whose size
// is nearest to size.
func dshFrame(tb testing.TB, size int) []byte {
	tb.Helper()
	paths, err := filepath.Glob(filepath.Join(fixtureRoot(tb), "jsonl-zstd", "*", "*", "session.jsonl.zstd"))
	if err != nil {
		tb.Fatal(err)
	}
	var best []byte
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			tb.Fatal(err)
		}
		frames, _, err := Walk(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			tb.Fatal(err)
		}
		for _, f := range frames {
			if best == nil || abs(f.Size-int64(size)) < abs(int64(len(best)-size)) {
				best = data[f.Offset:f.End()]
			}
		}
	}
	return best
}

func abs(n int64) int64 { return max(n, -n) }

// BenchmarkDecodeSmallFrame decodes frames of a dsh log of about 300 B and
// 1 KiB as dsh wrote them, and frames of about 300 B and 3 KiB of the text
// of one as dshctl writes them (content size in the header) and as dsh
// does (none, as its stream encoder does), read through an io.ReaderAt,
// by the fast path and by the stream path, and by klauspost's DecodeAll
// alone.
func BenchmarkDecodeSmallFrame(b *testing.B) {
	type frame struct {
		name string
		data []byte
	}
	var frames []frame
	for _, size := range []int{300, 1 << 10} {
		data := dshFrame(b, size)
		frames = append(frames, frame{fmt.Sprintf("dsh-%dB", len(data)), data})
	}
	for _, size := range []int{300, 3 << 10} {
		content := contentForFrame(b, size)
		sized := AppendFrame(nil, content)
		nosize := streamFrame(b, content, 2<<20)
		frames = append(frames,
			frame{fmt.Sprintf("%dB-size", len(sized)), sized},
			frame{fmt.Sprintf("%dB-nosize", len(nosize)), nosize})
	}
	for _, fr := range frames {
		r := bytes.NewReader(fr.data)
		f, err := ParseFrame(r, 0, int64(len(fr.data)))
		if err != nil {
			b.Fatal(err)
		}
		d := newTestDecoder(b)
		content, err := d.decodeAllStream(nil, r, f, 16<<20)
		if err != nil {
			b.Fatal(err)
		}
		// The floor: klauspost's DecodeAll alone, into a reused buffer.
		za, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecodeAllCapLimit(true))
		if err != nil {
			b.Fatal(err)
		}
		defer za.Close()
		buf := make([]byte, 0, 1<<20)
		check := func(c []byte, err error) {
			if err != nil || len(c) != len(content) {
				b.Fatal(len(c), err)
			}
		}
		ops := []struct {
			name string
			run  func()
		}{
			{"verifyKeep", func() { check(d.verifyKeep(r, f, 16<<20)) }},
			{"verifyKeepStream", func() { check(d.verifyKeepStream(r, f, 16<<20)) }},
			{"DecodeAll", func() { check(d.DecodeAll(r, f, 16<<20)) }},
			{"decodeAllStream", func() { check(d.decodeAllStream(nil, r, f, 16<<20)) }},
			{"verify", func() { check(content, d.verify(r, f)) }},
			{"verifyStream", func() { check(content, d.verifyStream(r, f)) }},
			{"zstdDecodeAll", func() { check(za.DecodeAll(fr.data, buf)) }},
		}
		for _, op := range ops {
			b.Run(fr.name+"/"+op.name, func(b *testing.B) {
				for b.Loop() {
					op.run()
				}
			})
		}
	}
}
