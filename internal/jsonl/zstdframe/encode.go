package zstdframe

import (
	"fmt"
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
