package jsonl

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

type failReaderAt struct{ err error }

func (f failReaderAt) ReadAt([]byte, int64) (int, error) { return 0, f.err }

// TestBlockCacheReadErrorKeepsPool checks that a read error gives the block
// back to cacheBlockPool whole: a later cache over a good file reads as it
// should instead of taking an empty block from the pool.
func TestBlockCacheReadErrorKeepsPool(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789abcdef"), 3*cacheBlockSize/16+7)
	boom := errors.New("boom")
	for range 4 {
		bad := newBlockCache(failReaderAt{boom}, 0)
		if _, err := bad.ReadAt(make([]byte, 10), 0); !errors.Is(err, boom) {
			t.Fatalf("ReadAt on failing reader: %v, want %v", err, boom)
		}
		bad.release()

		good := newBlockCache(bytes.NewReader(data), 0)
		got := make([]byte, len(data))
		// Read backwards across blocks, as the reverse scan does.
		for end := len(data); end > 0; {
			start := max(end-cacheBlockSize/3, 0)
			if _, err := good.ReadAt(got[start:end], int64(start)); err != nil && err != io.EOF {
				t.Fatalf("ReadAt(%d, %d): %v", start, end, err)
			}
			end = start
		}
		good.release()
		if !bytes.Equal(got, data) {
			t.Fatal("blockCache read the wrong bytes")
		}
	}
}
