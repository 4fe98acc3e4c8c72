package export

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"

	"github.com/dshctl/dshctl/internal/seam"
)

// ErrNoRaw: the handle's backend cannot give its records as stored.
var ErrNoRaw = errors.New("the store has no physical records to print")

// RawOptions say what WriteRaw writes.
type RawOptions struct {
	// Groups marks where each storage unit holding several records (a zstd
	// frame) starts, with a "# frame N at byte B, S bytes" line.
	Groups bool
	// Tail also writes the records after the last one readers serve: an
	// uncommitted tail, or the records from the first damaged one on.
	Tail bool
}

// RawResult says what lies past the records readers serve.
type RawResult struct {
	// TailRecords records, TailBytes bytes of stored text from TailOffset
	// on, are not served; WriteRaw wrote them only with RawOptions.Tail.
	TailRecords int
	TailBytes   int64
	TailOffset  int64
}

// WriteRaw writes the records of the log h reads exactly as stored (packed
// rows and range pairs as they are), header first, up to the last record
// readers serve. Which records those are is what h's own Scan serves, read
// alongside: a record is served when the events it stands for
// (seam.RawRecord.Events) are the next ones Scan gives. From the first record that is not, the rest is the tail: an
// uncommitted tail (records after the last committed one, which dsh never
// serves and the next append removes), or, when Scan fails, damaged
// records, whose error WriteRaw returns after the records it wrote. A torn
// tail (an incomplete last line or frame) is never given by the backend.
// h must be a seam.RawReader, else ErrNoRaw.
func WriteRaw(ctx context.Context, w io.Writer, h seam.Handle, o RawOptions) (RawResult, error) {
	var res RawResult
	rr, ok := h.(seam.RawReader)
	if !ok {
		return res, ErrNoRaw
	}
	// Only the seqs are looked at: the events need not outlive the step
	// (a record of the limit's size is not copied).
	next, stop := iter.Pull2(h.Scan(ctx, seam.ScanOptions{Transient: true}))
	defer stop()
	var (
		scanErr error
		served  int64 // the seq of the next event Scan serves
		tail    bool
		group   = -1
	)
	// serves reports whether the events rec stands for are the next ones
	// Scan serves.
	serves := func(rec *seam.RawRecord) bool {
		for n := rec.Events; n > 0; n-- {
			e, err, ok := next()
			if !ok || err != nil || e.Seq != served {
				scanErr = err
				return false
			}
			served++
		}
		return true
	}
	for rec, err := range rr.Raw(ctx) {
		if err != nil {
			return res, err
		}
		if !tail && !serves(&rec) {
			tail, res.TailOffset = true, rec.Offset
		}
		if tail {
			res.TailRecords++
			res.TailBytes += int64(len(rec.Line))
			if rec.Unread != nil {
				res.TailBytes += rec.Size
			}
			if !o.Tail {
				continue
			}
		}
		if rec.Unread != nil {
			return res, rec.Unread // too long to print
		}
		if g := rec.Group; o.Groups && g != nil && g.Index != group {
			group = g.Index
			if _, err := fmt.Fprintf(w, "# frame %d at byte %d, %d bytes\n", g.Index, g.Offset, g.Size); err != nil {
				return res, err
			}
		}
		if _, err := w.Write(rec.Line); err != nil {
			return res, err
		}
	}
	for scanErr == nil && tail {
		// The first unserved record is refused before Scan says why: a
		// damaged log fails the scan there, an uncommitted tail ends it.
		_, err, ok := next()
		if !ok {
			break
		}
		scanErr = err
	}
	return res, scanErr
}
