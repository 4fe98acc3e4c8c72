package export

import (
	"context"
	"io"

	"github.com/dshctl/dshctl/internal/seam"
)

// writeCanonical writes the canonical JSONL of the log h serves to w: the
// header line hdr, then one line per event, and returns the number of
// events. It stands in for cat's canonical writer until #9 moves that
// writer into this package; then this file goes.
func writeCanonical(ctx context.Context, h seam.Handle, hdr *seam.Header, w io.Writer, progress func(int64)) (int64, error) {
	buf := append(hdr.AppendJSON(make([]byte, 0, 64<<10)), '\n')
	var n, reported int64
	for ev, err := range h.Scan(ctx, seam.ScanOptions{}) {
		if err != nil {
			return n, err
		}
		buf = append(ev.AppendJSON(buf), '\n')
		n++
		if len(buf) >= 32<<10 {
			if _, err := w.Write(buf); err != nil {
				return n, err
			}
			buf = buf[:0]
			if progress != nil {
				progress(n - reported)
				reported = n
			}
		}
	}
	if _, err := w.Write(buf); err != nil {
		return n, err
	}
	if progress != nil && n > reported {
		progress(n - reported)
	}
	return n, ctx.Err()
}
