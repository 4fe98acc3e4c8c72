package jsonl

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"

	"github.com/dshctl/dshctl/internal/jsonl/osfs"
	"github.com/dshctl/dshctl/internal/jsonl/zstdframe"
	"github.com/dshctl/dshctl/internal/seam"
)

var _ seam.TailTrimmer = (*handle)(nil)

// maxSalvage bounds the text a salvage re-appends, which it holds in
// memory to write as one frame; the records past it stay in the backup.
const maxSalvage = 64 << 20

// TrimTail removes the torn or uncommitted tail plan names, as an append
// does before it writes (seam.TailTrimmer), once it has checked that the
// write open found that same tail (the same cut, the same records to write
// back and to salvage): else it changes nothing (ErrTailMismatch). The
// removed bytes go to a backup file first (fsynced), then the log is
// truncated and fsynced; when the first uncommitted record shares a zstd
// frame with committed ones, those are written back as a frame of their
// own (the log is rewritten beside itself and renamed over, so no failure
// loses them). With plan.Salvage, the complete records of a torn final
// zstd frame that continue the log are written after the cut as one new
// frame: what dsh 0.1.0 did on resume. That too rewrites the log beside
// itself (it needs free space the size of the log), so that no crash
// leaves the tail cut and the records not yet written back. Only a torn
// frame directly after the committed log is salvaged; after an uncommitted
// tail it is not.
func (h *handle) TrimTail(ctx context.Context, plan seam.TrimPlan) (seam.TrimResult, error) {
	var res seam.TrimResult
	if err := ctx.Err(); err != nil {
		return res, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.writable("repair"); err != nil {
		return res, err
	}
	w := h.w
	var own []seam.Repair
	if !w.pending {
		own = h.tailRepairs("")
	}
	mismatch := func(what string) error {
		return &seam.Error{Kind: seam.ErrTailMismatch, Op: "repair", ID: h.id, Pos: h.log.pos(-1, -1, -1, -1),
			Err: fmt.Errorf("verification under the lock found %s, but the write path %s; nothing was changed", seam.DescribeTails(plan.Tails), what)}
	}
	if !seam.SameTails(own, plan.Tails) {
		return res, mismatch("finds " + seam.DescribeTails(own))
	}
	if n := bytes.Count(w.salvage, []byte{'\n'}); n != plan.Rewrite {
		return res, mismatch(fmt.Sprintf("would write back %d committed records of the cut frame, not %d", n, plan.Rewrite))
	}
	if len(own) == 0 {
		return res, nil
	}
	if err := h.checkOwnership("repair"); err != nil {
		return res, seam.Wrap(err, seam.ErrIO, "repair", h.id)
	}
	var lines []byte
	var n int64
	if plan.Salvage > 0 {
		if h.log.enc == Zstd && w.physEnd == w.cut && w.size > w.physEnd {
			var err error
			if lines, n, err = h.salvageLines(ctx, w.physEnd, w.size-w.physEnd); err != nil {
				return res, seam.Wrap(err, seam.ErrIO, "repair", h.id)
			}
		}
		if n != plan.Salvage {
			return res, mismatch(fmt.Sprintf("finds %d events to salvage in the torn frame, not %d", n, plan.Salvage))
		}
	}
	done, from := len(w.repairs), w.next
	h.noteWriting()
	defer h.noteWrote()
	var err error
	if len(w.salvage) > 0 || n > 0 {
		// The cut and the records written back (the committed ones of the
		// last frame, the salvaged ones of a torn frame) are put in place
		// together, by one rename: a crash leaves the old log, with its
		// tail still there to salvage, or the new one.
		var content []byte
		if len(w.salvage) > 0 {
			content = zstdframe.AppendFrame(nil, w.salvage)
		}
		if n > 0 {
			content = zstdframe.AppendFrame(content, lines)
		}
		err = h.replaceTail(ctx, "repair", content, n)
	} else {
		_, err = h.removeTail(ctx, "repair")
	}
	res.Repairs = slices.Clone(w.repairs[done:])
	if err != nil {
		return res, seam.Wrap(err, seam.ErrIO, "repair", h.id)
	}
	if n > 0 {
		res.Salvaged, res.SalvagedFrom = n, from
	}
	return res, nil
}

// salvageLines returns the complete records of the torn frame at off (size
// bytes to the end of the log) that continue the log from the handle's
// next seq, up to the first that does not, and how many events they hold.
func (h *handle) salvageLines(ctx context.Context, off, size int64) ([]byte, int64, error) {
	l := h.log
	d, err := l.decoder(ctx)
	if err != nil {
		return nil, 0, err
	}
	defer l.putDecoder(d)
	rd, err := d.Salvage(l.f, zstdframe.Torn{Offset: off, Size: size})
	var fe *zstdframe.Error
	if errors.As(err, &fe) {
		return nil, 0, nil // nothing salvageable: the frame is cut in its header or damaged
	}
	if err != nil {
		return nil, 0, l.ioError(err, off)
	}
	cur := seam.Cursor{Next: h.w.next}
	var out []byte
	var lr lineReader
	lr.reset(rd, l.lim.record)
	for {
		line, _, err := lr.next()
		if err != nil || len(line) < 2 || len(out)+len(line) > maxSalvage || !salvageable(line, h.hdr.Version, &cur) {
			break // the cut, a damaged block, or the first record that does not continue the log
		}
		out = append(out, line...)
	}
	return out, cur.Next - h.w.next, nil
}

// salvageable reports whether line is a record that continues the log at
// cur (whose types dsh knows), and moves cur past it.
func salvageable(line []byte, v int, cur *seam.Cursor) bool {
	rec, err := seam.DecodeRecord(line[:len(line)-1], v)
	if err != nil {
		return false
	}
	for _, e := range rec.Events() {
		if seam.CheckVocabulary(&e, v) != nil {
			return false
		}
	}
	return cur.Advance(&rec) == nil
}

// lockHolder says which process holds the session lock at path, when the
// OS can tell (Linux: /proc/locks); nil otherwise.
func (s *Store) lockHolder(path string) error {
	fi, err := s.fs.Stat(path)
	if err != nil {
		return nil
	}
	pid, held, ok := osfs.ProcLockHolder(fi)
	if !ok || !held || pid <= 0 {
		return nil
	}
	what := "process " + strconv.Itoa(pid)
	if comm, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm"); err == nil {
		if name := string(bytes.TrimSpace(comm)); name != "" {
			what += " (" + name + ")"
		}
	}
	return errors.New("held by " + what)
}
