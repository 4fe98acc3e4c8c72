package jsonl

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"testing"
)

// readerFile is a file that reads from memory and counts its reads.
type readerFile struct {
	file
	r     *bytes.Reader
	reads int
}

func (f *readerFile) ReadAt(p []byte, off int64) (int, error) {
	f.reads++
	return f.r.ReadAt(p, off)
}

func (f *readerFile) Stat() (fs.FileInfo, error) { return nil, errors.New("not used") }

// TestWindowFile: reads within the window, or running past the end of the
// file from inside it, are served from memory with the file's own results.
func TestWindowFile(t *testing.T) {
	for _, size := range []int{100, smallLog, smallLog + 1, 3 * smallLog} {
		data := make([]byte, size)
		for i := range data {
			data[i] = byte(i * 7)
		}
		f := &readerFile{r: bytes.NewReader(data)}
		w, err := newWindowFile(f, int64(size))
		if err != nil {
			t.Fatal(err)
		}
		setup := f.reads
		// held says whether the window holds [off, off+n) of the file.
		held := func(off, n int) bool {
			end := min(off+n, size)
			return size <= smallLog || off >= size || end <= headWindow || off >= size-tailWindow
		}
		for _, c := range []struct{ off, n int }{
			{0, 10},
			{0, min(size, headWindow)},
			{size - 10, 10},
			{size - 10, 64 << 10}, // past the end: a short read and io.EOF
			{size, 10},
			{size + 5, 10},
			{headWindow - 5, 10},
			{size / 2, 10},
			{size - tailWindow - 5, 10},
		} {
			if c.off < 0 {
				continue
			}
			before := f.reads
			got := make([]byte, c.n)
			n, err := w.ReadAt(got, int64(c.off))
			want := make([]byte, c.n)
			wn, werr := bytes.NewReader(data).ReadAt(want, int64(c.off))
			if n != wn || !bytes.Equal(got[:n], want[:wn]) || (err == io.EOF) != (werr == io.EOF) || (err == nil) != (werr == nil) {
				t.Errorf("size %d: ReadAt(%d bytes at %d) = %d, %v; file gives %d, %v", size, c.n, c.off, n, err, wn, werr)
			}
			if cached, want := f.reads == before, held(c.off, c.n); cached != want {
				t.Errorf("size %d: ReadAt(%d bytes at %d) served from memory: %v, want %v", size, c.n, c.off, cached, want)
			}
		}
		w.release()
		if want := map[bool]int{true: 1, false: 2}[size <= smallLog]; setup != want {
			t.Errorf("size %d: window made with %d reads, want %d", size, setup, want)
		}
	}
}
