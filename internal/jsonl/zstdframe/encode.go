package zstdframe

import (
	"fmt"
	"io"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// encoder is shared by all AppendFrame calls. With concurrency 1 its
// EncodeAll is serialized, single-threaded and deterministic.
var encoder = sync.OnceValue(func() *zstd.Encoder {
	e, err := zstd.NewWriter(nil,
		zstd.WithEncoderConcurrency(1),
		zstd.WithEncoderCRC(true),
		zstd.WithWindowSize(2<<20), // as dsh writes
		zstd.WithSingleSegment(false),
		zstd.WithEncoderLevel(zstd.SpeedDefault),
	)
	if err != nil { // the options are constants: only a bug gets here
		panic(fmt.Sprintf("zstdframe: new encoder: %v", err))
	}
	return e
})

// emptyFrame holds no content: single segment, content size 0, one empty raw
// block, and the checksum XXH64("") = 0xEF46DB3751D8E999, low 32 bits. It
// is built by hand because klauspost writes empty frames without checksum.
var emptyFrame = []byte{
	0x28, 0xB5, 0x2F, 0xFD, // magic
	0x24,             // descriptor: single segment, checksum, 1-byte content size
	0x00,             // content size 0
	0x01, 0x00, 0x00, // last raw block of 0 bytes
	0x99, 0xE9, 0xD8, 0x51, // checksum
}

// AppendFrame appends to dst one standard zstd frame holding content and
// returns the extended slice. The frame carries the XXH64 checksum (and the
// content size unless it is 1 to 255 bytes, which only a single-segment
// frame can state), uses no dictionary and at most a 2 MiB window, and is
// never a skippable frame: what dsh accepts as one append batch. The same
// content always yields the same bytes. AppendFrame is safe for concurrent
// use.
func AppendFrame(dst, content []byte) []byte {
	if len(content) == 0 {
		return append(dst, emptyFrame...)
	}
	return encoder().EncodeAll(content, dst)
}

// Writer writes standard zstd frames as AppendFrame makes them (checksum,
// no dictionary, a 2 MiB window), streamed: its memory is the window and a
// block, whatever a frame holds. A frame written so carries no content
// size, as dsh's own frames do.
type Writer struct {
	enc  *zstd.Encoder
	open bool
}

// NewWriter returns a Writer of frames to w.
func NewWriter(w io.Writer) (*Writer, error) {
	enc, err := zstd.NewWriter(w,
		zstd.WithEncoderConcurrency(1),
		zstd.WithEncoderCRC(true),
		zstd.WithWindowSize(2<<20),
		zstd.WithSingleSegment(false),
		zstd.WithEncoderLevel(zstd.SpeedDefault),
	)
	if err != nil {
		return nil, err
	}
	return &Writer{enc: enc}, nil
}

// Write adds p to the frame being written, starting one when none is.
// p must not be empty: klauspost ends an empty frame without a checksum.
func (w *Writer) Write(p []byte) (int, error) {
	w.open = true
	return w.enc.Write(p)
}

// EndFrame finishes the frame being written (a no-op when none is); the
// next Write starts another, to out.
func (w *Writer) EndFrame(out io.Writer) error {
	if !w.open {
		return nil
	}
	w.open = false
	err := w.enc.Close()
	w.enc.Reset(out)
	return err
}
