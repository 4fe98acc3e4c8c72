package zstdframe

import (
	"bytes"
	"encoding/binary"
	"io"
	"sync/atomic"
	"testing"

	"github.com/dshctl/dshctl/internal/fixture"
)

// fixtureRoot returns the dsh-0.1.0 fixture directory.
func fixtureRoot(tb testing.TB) string {
	tb.Helper()
	return fixture.Path(tb, "dsh-0.1.0")
}

// countingReaderAt counts the bytes read through it.
type countingReaderAt struct {
	r     io.ReaderAt
	bytes atomic.Int64
	calls atomic.Int64
}

func (c *countingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	n, err := c.r.ReadAt(p, off)
	c.bytes.Add(int64(n))
	c.calls.Add(1)
	return n, err
}

// errReaderAt fails every read at or beyond off.
type errReaderAt struct {
	r   io.ReaderAt
	off int64
	err error
}

func (e errReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if off+int64(len(p)) > e.off {
		return 0, e.err
	}
	return e.r.ReadAt(p, off)
}

// flakyReaderAt fails every read after the first ok ones.
type flakyReaderAt struct {
	r   io.ReaderAt
	ok  int
	err error
}

func (f *flakyReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if f.ok == 0 {
		return 0, f.err
	}
	f.ok--
	return f.r.ReadAt(p, off)
}

// checksumOf returns the frame checksum field for content: the low 32 bits
// of its XXH64, as AppendFrame writes them.
func checksumOf(content []byte) []byte {
	f := AppendFrame(nil, content)
	return f[len(f)-4:]
}

// blockHeader encodes a block header.
func blockHeader(last bool, typ, size int) []byte {
	v := uint32(size)<<3 | uint32(typ)<<1
	if last {
		v |= 1
	}
	return []byte{byte(v), byte(v >> 8), byte(v >> 16)}
}

// cat concatenates byte slices.
func cat(parts ...[]byte) []byte {
	return bytes.Join(parts, nil)
}

// frameHeader returns magic, descriptor fhd and the rest of the header.
func frameHeader(fhd byte, rest ...byte) []byte {
	return cat(binary.LittleEndian.AppendUint32(nil, magic), []byte{fhd}, rest)
}

// rawFrame is a checksummed frame holding content in one raw block, with a
// 1 MiB window (descriptor 0x50).
func rawFrame(content []byte) []byte {
	return cat(frameHeader(0x04, 0x50), blockHeader(true, 0, len(content)), content, checksumOf(content))
}

func newTestDecoder(tb testing.TB) *Decoder {
	tb.Helper()
	d, err := NewDecoder()
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(d.Close)
	return d
}

// pseudoRandom returns n deterministic incompressible bytes.
func pseudoRandom(n int, seed uint64) []byte {
	b := make([]byte, n)
	x := seed | 1
	for i := range b {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		b[i] = byte(x)
	}
	return b
}
