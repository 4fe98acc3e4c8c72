package jsonl

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/dshctl/dshctl/internal/jsonl/zstdframe"
	"github.com/dshctl/dshctl/internal/seam"
)

// streamBuffer is the write buffer of a streamed batch.
const streamBuffer = 256 << 10

// AppendStream implements seam.StreamAppender. The batch is written as it
// comes: its lines, or zstd frames of at most the frame limit of text
// each (so that every reader with that limit reads them back; a batch
// within it is one frame), then fsynced once. An error, or ctx done while
// it writes, cuts the log back to where the batch started. A create
// publishes the header and the whole batch together (link(2)), and a zstd
// tail that starts inside a frame is replaced together with the batch
// (rename(2)): those are all or nothing whatever their size. Otherwise a
// crash keeps whole lines (plain) or whole frames (zstd) of the batch, in
// order: a prefix of it.
func (h *handle) AppendStream(ctx context.Context, next func() ([]seam.Event, error)) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.writable("append"); err != nil {
		return err
	}
	first, err := next()
	if err != nil || len(first) == 0 {
		return err
	}
	enc, lim := h.s.Encoding(), h.s.lim.frame
	if h.log != nil {
		enc, lim = h.log.enc, h.log.lim.frame
	}
	bw := &batchWriter{ctx: ctx, id: h.id, v: h.hdr.Version, seq: h.w.next, zstd: enc == Zstd, limit: lim, chunk: first, next: next}
	if !h.w.pending {
		h.noteWriting()
	}
	switch {
	case h.w.pending:
		err = h.materializeWith(bw.writeTo)
	case len(h.w.salvage) > 0:
		err = h.appendStreamSalvage(ctx, bw)
	default:
		err = h.appendStream(ctx, bw)
	}
	h.noteWrote()
	return seam.Wrap(err, seam.ErrIO, "append", h.id)
}

// appendStreamSalvage writes the committed records of the frame at cut
// back as a frame of their own, then the batch, in a new log renamed over
// the old one (see replaceTail).
func (h *handle) appendStreamSalvage(ctx context.Context, bw *batchWriter) error {
	if err := h.checkOwnership("append"); err != nil {
		return err
	}
	salvage := zstdframe.AppendFrame(nil, h.w.salvage)
	return h.replaceTailWith(ctx, "append", int64(len(salvage)), func(w io.Writer) (int64, error) {
		if _, err := w.Write(salvage); err != nil {
			return 0, err
		}
		return bw.writeTo(w)
	})
}

// appendStream removes a torn or uncommitted tail, then writes the batch
// at the end of the log and fsyncs, or cuts the log back.
func (h *handle) appendStream(ctx context.Context, bw *batchWriter) error {
	l, w := h.log, h.w
	if err := h.checkOwnership("append"); err != nil {
		return err
	}
	if w.cut < w.size {
		if _, err := h.removeTail(ctx, "append"); err != nil {
			return err
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	cw := &countWriter{w: l.f}
	buf := bufio.NewWriterSize(cw, streamBuffer)
	n, err := bw.writeTo(buf)
	if err == nil {
		err = buf.Flush()
	}
	if err == nil {
		err = l.f.Sync()
	}
	if err != nil {
		if terr := truncateSync(l.f, w.cut); terr != nil {
			w.size = -1 // unknown: checkOwnership fails from now on
			return l.ioError(errors.Join(err, fmt.Errorf("cutting the log back to %d bytes: %w", w.cut, terr)), w.cut)
		}
		w.size = w.cut
		return l.ioError(err, w.cut)
	}
	w.size = w.cut + cw.n
	w.cut, w.physEnd = w.size, w.size
	w.next += n
	return nil
}

// batchWriter writes a batch chunk by chunk in a log's physical form.
type batchWriter struct {
	ctx   context.Context
	id    string
	v     int
	seq   int64 // the seq of the next event
	zstd  bool
	limit int64 // the most text of one zstd frame
	chunk []seam.Event
	next  func() ([]seam.Event, error)
}

// writeTo writes the batch to w and returns the events written. Every
// chunk is validated (seam.PrepareBatch) before it is written; zstd frames
// end on a line, and one ends before a line would take it past the limit.
func (b *batchWriter) writeTo(w io.Writer) (int64, error) {
	var zw *zstdframe.Writer
	if b.zstd {
		var err error
		if zw, err = zstdframe.NewWriter(w); err != nil {
			return 0, err
		}
	}
	var n, inFrame int64
	var line []byte
	for len(b.chunk) > 0 {
		if err := b.ctx.Err(); err != nil {
			return n, err
		}
		// The chunk is the caller's until next: a large payload is
		// written from it, never copied.
		batch, err := seam.PrepareBatchAlias(b.id, b.v, b.seq, b.chunk)
		if err != nil {
			return n, err
		}
		for i := range batch {
			var parts [][]byte
			line, parts = recordParts(line[:0], &batch[i], b.v)
			var size int64
			for _, p := range parts {
				size += int64(len(p))
			}
			if b.zstd {
				if size > b.limit {
					return n, &seam.Error{Kind: seam.ErrLimit, Op: "append", ID: b.id, Pos: seam.Pos{Offset: -1, Frame: -1, Line: -1, Seq: batch[i].Seq},
						Err: &limitError{limit: ErrFrameLimit, msg: fmt.Sprintf("the record of %d bytes does not fit in a frame of the frame limit, %s", size-1, sizeText(b.limit))}}
				}
				if inFrame+size > b.limit {
					if err := zw.EndFrame(w); err != nil {
						return n, err
					}
					inFrame = 0
				}
				inFrame += size
			}
			var out io.Writer = w
			if b.zstd {
				out = zw
			}
			for _, p := range parts {
				if len(p) == 0 {
					continue // zstdframe.Writer takes no empty write
				}
				if _, err := out.Write(p); err != nil {
					return n, err
				}
			}
		}
		n += int64(len(batch))
		b.seq += int64(len(batch))
		if b.chunk, err = b.next(); err != nil {
			return n, err
		}
	}
	if zw != nil {
		if err := zw.EndFrame(w); err != nil {
			return n, err
		}
	}
	return n, nil
}

// bigValue is the payload size from which a record is written in pieces
// (recordParts) rather than copied into one line first.
const bigValue = 64 << 10

// recordParts returns the physical line of e in format v (appendRecord's
// bytes) as pieces to write in order, the text around a large data or
// surfaceOp appended to buf and the payloads themselves aliasing e: a
// record near the record limit is not copied once more to be written.
func recordParts(buf []byte, e *seam.Event, v int) ([]byte, [][]byte) {
	if len(e.Data) < bigValue && len(e.SurfaceOp) < bigValue {
		i := len(buf)
		buf = appendRecord(buf, e, v)
		return buf, [][]byte{buf[i:]}
	}
	c := *e
	c.SourceEventSeqs = nil
	if v < 2 {
		c.SourceEventSeqs = e.SourceEventSeqs
	}
	buf, p := c.AppendJSONParts(buf)
	// appendRecord's ending: v2+ logs put sourceEventSeqs, range-encoded,
	// after the other members.
	tail := len(buf) - 1
	buf = buf[:tail]
	if v >= 2 && e.SourceEventSeqs != nil {
		buf = append(buf, `,"sourceEventSeqs":`...)
		buf = seam.AppendSourceSeqsV2(buf, e.SourceEventSeqs)
	}
	buf = append(buf, '}', '\n')
	p[4] = buf[tail:]
	return buf, p[:]
}

// countWriter counts the bytes written through it.
type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	if err == nil && n != len(p) {
		err = io.ErrShortWrite
	}
	return n, err
}
