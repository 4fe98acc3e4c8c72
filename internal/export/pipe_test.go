package export

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"testing"
)

// recorder keeps the size of every write and fails from the failAt-th on.
type recorder struct {
	sizes  []int
	data   bytes.Buffer
	failAt int
}

var errDisk = errors.New("disk full")

func (r *recorder) Write(b []byte) (int, error) {
	if r.failAt > 0 && len(r.sizes)+1 >= r.failAt {
		r.sizes = append(r.sizes, -1)
		return 0, errDisk
	}
	r.sizes = append(r.sizes, len(b))
	return r.data.Write(b)
}

// TestPipeBlocks: whatever the writes, dst gets blocks of exactly
// blockSize bytes, then the rest, in order.
func TestPipeBlocks(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	want := make([]byte, 3*blockSize+12345)
	for i := range want {
		want[i] = byte(rng.Uint32())
	}
	for _, piece := range []int{1, 1000, blockSize - 1, blockSize, 2*blockSize + 7, len(want)} {
		var r recorder
		p := newPipe(&r)
		for b := want; len(b) > 0; {
			n := min(piece, len(b))
			if k, err := p.Write(b[:n]); k != n || err != nil {
				t.Fatalf("Write: %d, %v", k, err)
			}
			b = b[n:]
		}
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(r.data.Bytes(), want) {
			t.Fatalf("pieces of %d: the data changed", piece)
		}
		for i, n := range r.sizes {
			if i < len(r.sizes)-1 && n != blockSize || i == len(r.sizes)-1 && n != 12345 {
				t.Fatalf("pieces of %d: block sizes %v", piece, r.sizes)
			}
		}
		if _, err := p.Write([]byte("x")); !errors.Is(err, errPipeClosed) {
			t.Fatalf("Write after Close: %v", err)
		}
	}
}

// TestPipeErrors: the writer's first error reaches Write or Close; abort
// writes nothing more.
func TestPipeErrors(t *testing.T) {
	r := recorder{failAt: 2}
	p := newPipe(&r)
	chunk := make([]byte, blockSize)
	var err error
	for i := 0; i < 10 && err == nil; i++ {
		_, err = p.Write(chunk)
	}
	if cerr := p.Close(); !errors.Is(cerr, errDisk) || err != nil && !errors.Is(err, errDisk) {
		t.Fatalf("Write %v, Close %v; want %v", err, cerr, errDisk)
	}
	if r.data.Len() != blockSize {
		t.Fatalf("%d bytes written after the failure", r.data.Len()-blockSize)
	}

	var ok recorder
	p = newPipe(&ok)
	p.Write(make([]byte, 100))
	p.abort()
	p.abort()
	if ok.data.Len() != 0 {
		t.Fatalf("abort wrote %d queued bytes", ok.data.Len())
	}
	if err := p.Close(); !errors.Is(err, errPipeClosed) {
		t.Fatalf("Close after abort: %v", err)
	}
}

// TestPipeBlocksReturned: a finished pipe gives back each of its blocks
// once, so that two pipes never share one.
func TestPipeBlocksReturned(t *testing.T) {
	for _, n := range []int{0, 10, blockSize, 2*blockSize + 1, 5 * blockSize} {
		for _, abort := range []bool{false, true} {
			var r recorder
			p := newPipe(&r)
			p.Write(make([]byte, n))
			if abort {
				p.abort()
			} else if err := p.Close(); err != nil {
				t.Fatal(err)
			}
			seen := map[*[blockSize]byte]bool{}
			for range 3 {
				b := blocks.Get().(*[blockSize]byte)
				if seen[b] {
					t.Fatalf("%d bytes, abort %v: a block came back twice", n, abort)
				}
				seen[b] = true
			}
		}
	}
}
