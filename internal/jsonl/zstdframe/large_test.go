package zstdframe

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// smallFrames returns count distinct frames of about 1 KiB each, like a
// log of small append batches.
func smallFrames(count int) [][]byte {
	frames := make([][]byte, count)
	for i := range frames {
		var b bytes.Buffer
		for j := range 12 {
			fmt.Fprintf(&b, `{"type":"tool/result","seq":%d,"time":%d,"data":{"id":"%x"}}`+"\n", i*12+j, 1785331619000+i, pseudoRandom(24, uint64(i*12+j+1)))
		}
		frames[i] = AppendFrame(nil, b.Bytes())
	}
	return frames
}

// writeLog writes a log of at least size bytes made of small frames to w,
// ending with the frame last, and returns the offset of last.
func writeLog(w io.Writer, size int64, last []byte) (int64, error) {
	frames := smallFrames(512)
	var off int64
	for i := 0; off < size; i++ {
		n, err := w.Write(frames[i%len(frames)])
		if err != nil {
			return 0, err
		}
		off += int64(n)
	}
	_, err := w.Write(last)
	return off, err
}

// TestLastFrameReadsOnlyTheTail proves the O(tail) bound on a 100 MiB log.
func TestLastFrameReadsOnlyTheTail(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 100 MiB file")
	}
	path := filepath.Join(t.TempDir(), "session.jsonl.zstd")
	file, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	w := bufio.NewWriterSize(file, 1<<20)
	lastFrame := AppendFrame(nil, []byte(`{"type":"turn/end","seq":999999,"time":1,"data":{}}`+"\n"))
	lastOff, err := writeLog(w, 100<<20, lastFrame)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	size := lastOff + int64(len(lastFrame))
	dec := newTestDecoder(t)

	cr := &countingReaderAt{r: file}
	last, err := LastFrame(cr, size, LastOptions{Decoder: dec})
	if err != nil || last.Frame.Offset != lastOff || last.Frame.End() != size || last.Torn != (Torn{}) {
		t.Fatalf("LastFrame = %+v, %v; want frame at %d", last, err, lastOff)
	}
	t.Logf("LastFrame on %d bytes read %d bytes in %d calls", size, cr.bytes.Load(), cr.calls.Load())
	if cr.bytes.Load() >= 1<<20 {
		t.Fatalf("LastFrame read %d bytes", cr.bytes.Load())
	}

	// Torn inside the last frame: the frame before it is the last one.
	cr = &countingReaderAt{r: file}
	last, err = LastFrame(cr, size-7, LastOptions{Decoder: dec})
	if err != nil || last.Frame.End() != lastOff || last.Torn != (Torn{Offset: lastOff, Size: int64(len(lastFrame)) - 7}) {
		t.Fatalf("torn: LastFrame = %+v, %v", last, err)
	}
	if cr.bytes.Load() >= 1<<20 {
		t.Fatalf("torn: LastFrame read %d bytes", cr.bytes.Load())
	}

	// The forward walk agrees.
	var n int
	var prev Frame
	for f, err := range Frames(file, size) {
		if err != nil {
			t.Fatal(err)
		}
		prev = f
		n++
	}
	if prev.Offset != lastOff || n < 100_000 {
		t.Fatalf("walk: %d frames, last at %d", n, prev.Offset)
	}
}

// benchLog is a 32 MiB in-memory log of small frames.
var benchLog = sync.OnceValue(func() []byte {
	var b bytes.Buffer
	if _, err := writeLog(&b, 32<<20, AppendFrame(nil, []byte("{}\n"))); err != nil {
		panic(err)
	}
	return b.Bytes()
})

func BenchmarkWalk(b *testing.B) {
	data := benchLog()
	r := bytes.NewReader(data)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		n := 0
		for _, err := range Frames(r, int64(len(data))) {
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
	}
}

func BenchmarkLastFrame(b *testing.B) {
	data := benchLog()
	dec := newTestDecoder(b)
	cr := &countingReaderAt{r: bytes.NewReader(data)}
	for b.Loop() {
		if _, err := LastFrame(cr, int64(len(data)), LastOptions{Decoder: dec}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cr.bytes.Load())/float64(b.N), "read-B/op")
}

func BenchmarkDecodeFrame(b *testing.B) {
	content := jsonl(8 << 20)
	data := AppendFrame(nil, content)
	r := bytes.NewReader(data)
	f, err := ParseFrame(r, 0, int64(len(data)))
	if err != nil {
		b.Fatal(err)
	}
	dec := newTestDecoder(b)
	b.SetBytes(int64(len(content)))
	for b.Loop() {
		rd, err := dec.NewReader(r, f)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := io.Copy(io.Discard, rd); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppendFrame(b *testing.B) {
	content := jsonl(64 << 10)
	dst := make([]byte, 0, 64<<10)
	b.SetBytes(int64(len(content)))
	for b.Loop() {
		dst = AppendFrame(dst[:0], content)
	}
}
