// Package hostile builds hostile and damaged session logs for tests: zstd
// frames that hold gigabytes of content in a few kilobytes (RLE blocks),
// records of any size, runs of empty lines, torn tails of any length. The
// big ones cost next to nothing to build and to store, so tests build them
// at run time instead of committing them. Nothing in dshctl imports it.
package hostile

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"

	"github.com/cespare/xxhash/v2"
)

// A Part is a piece of a frame's content: Data, or N copies of Byte.
type Part struct {
	Data []byte
	Byte byte
	N    int64
}

// Text is a Part holding s.
func Text(s string) Part { return Part{Data: []byte(s)} }

// Repeat is a Part holding n copies of b.
func Repeat(b byte, n int64) Part { return Part{Byte: b, N: n} }

const (
	blockMax = 128 << 10
	// windowLog21 is the window descriptor of a 2 MiB window, the one
	// dsh writes.
	windowLog21 = (21 - 10) << 3
)

// Frame appends to dst one standard zstd frame holding the parts, with
// the content checksum and no content size, as dsh writes them: Data
// parts as raw blocks, repeats as RLE blocks of 128 KiB (4 bytes each), so
// a GiB of one byte is a frame of 32 KiB.
func Frame(dst []byte, parts ...Part) []byte {
	dst = binary.LittleEndian.AppendUint32(dst, 0xFD2FB528)
	dst = append(dst, 0x04, windowLog21)
	type block struct {
		typ  uint32
		size int64
		data []byte
	}
	var blocks []block
	h := xxhash.New()
	for _, p := range parts {
		if p.Data != nil {
			h.Write(p.Data)
			for d := p.Data; len(d) > 0; {
				n := min(len(d), blockMax)
				blocks = append(blocks, block{0, int64(n), d[:n]})
				d = d[n:]
			}
			continue
		}
		writeRepeat(h, p.Byte, p.N)
		for n := p.N; n > 0; {
			m := min(n, blockMax)
			blocks = append(blocks, block{1, m, []byte{p.Byte}})
			n -= m
		}
	}
	if len(blocks) == 0 {
		blocks = append(blocks, block{0, 0, nil})
	}
	for i, b := range blocks {
		v := b.typ<<1 | uint32(b.size)<<3
		if i == len(blocks)-1 {
			v |= 1
		}
		dst = append(dst, byte(v), byte(v>>8), byte(v>>16))
		dst = append(dst, b.data...)
	}
	return binary.LittleEndian.AppendUint32(dst, uint32(h.Sum64()))
}

// writeRepeat hashes n copies of b.
func writeRepeat(h *xxhash.Digest, b byte, n int64) {
	chunk := make([]byte, min(n, 1<<20))
	for i := range chunk {
		chunk[i] = b
	}
	for n > 0 {
		m := min(n, int64(len(chunk)))
		h.Write(chunk[:m])
		n -= m
	}
}

// Header is the header line of session id, format v0, in project /p.
func Header(id string) string {
	return fmt.Sprintf(`{"type":"session","version":0,"id":%q,"createdAt":1785331918180,"cwd":"/p","delegationDepth":0}`+"\n", id)
}

// Turn is one committed turn of events from seq on (5 events): a prompt
// and its answer.
func Turn(seq int64, turn int) string {
	return fmt.Sprintf(`{"type":"turn/start","seq":%d,"time":1785331918200,"data":{"turn":%d}}
{"type":"user/message","seq":%d,"time":1785331918201,"data":{"id":"u%d","role":"user","content":[{"type":"text","text":"hello"}],"source":{"kind":"user"}},"surfaceOp":"append"}
{"type":"step/start","seq":%d,"time":1785331918202,"data":{"turn":%d,"step":1}}
{"type":"step/end","seq":%d,"time":1785331918203,"data":{"turn":%d,"step":1}}
{"type":"turn/end","seq":%d,"time":1785331918204,"data":{"turn":%d,"reason":{"kind":"completed"}}}
`, seq, turn, seq+1, turn, seq+2, turn, seq+3, turn, seq+4, turn)
}

// ProjectDir is the project folder of the sessions Session writes.
const ProjectDir = "--p--"

// Session writes, under root, session id with one committed turn (seq 0
// to 4) and returns the path of its log: session.jsonl.zstd (the header
// and the turn as frames of their own) when zstd, else session.jsonl.
func Session(root, id string, zstd bool) (string, error) {
	dir := filepath.Join(root, ProjectDir, id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	if !zstd {
		path := filepath.Join(dir, "session.jsonl")
		return path, os.WriteFile(path, []byte(Header(id)+Turn(0, 1)), 0o644)
	}
	log := Frame(nil, Text(Header(id)))
	log = Frame(log, Text(Turn(0, 1)))
	path := filepath.Join(dir, "session.jsonl.zstd")
	return path, os.WriteFile(path, log, 0o644)
}

// Append appends b to the file at path.
func Append(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Extend grows the file at path by n zero bytes without writing them (a
// sparse hole): a torn tail of any length, free to make, fast to read.
func Extend(path string, n int64) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	return os.Truncate(path, fi.Size()+n)
}
