package sqlite

import (
	"github.com/dshctl/dshctl/internal/seam"
	"github.com/klauspost/compress/zstd"
)

// rowBudget is what is left of a scan's budget (seam.ScanOptions.MaxBytes)
// in the seam's three measures: the stored bytes of the rows read, the
// bytes their payloads decode to, and the rows. A row is entered before it
// is decoded and refused when it is past the stored bytes or the rows, or
// when its compressed payload's frame declares more than is left of the
// decoded bytes, so no such row is inflated; what it decoded to is counted
// after.
type rowBudget struct {
	bounded             bool
	phys, decoded, rows int64
}

func newRowBudget(maxBytes int64) rowBudget {
	if maxBytes <= 0 {
		return rowBudget{}
	}
	return rowBudget{bounded: true, phys: maxBytes, decoded: maxBytes * seam.ScanDecodedFactor,
		rows: max(1, maxBytes/seam.ScanRecordCost)}
}

// enter counts row r; false when the scan is past its budget.
func (b *rowBudget) enter(r *RawRow) bool {
	if !b.bounded {
		return true
	}
	b.phys -= r.size()
	b.rows--
	return b.phys >= 0 && b.rows >= 0 && declaredSize(r) <= b.decoded
}

// decode counts n decoded bytes of the row entered last; false when the
// scan is past its budget.
func (b *rowBudget) decode(n int64) bool {
	if !b.bounded {
		return true
	}
	b.decoded -= n
	return b.decoded >= 0
}

// declaredSize is the size row r's payload decodes to as far as it is
// known before it is decoded: the stored payload, or the content size a
// compressed one's frame declares (0 when it declares none).
func declaredSize(r *RawRow) int64 {
	if !r.DataBlob {
		return int64(len(r.Data))
	}
	var h zstd.Header
	if h.Decode(r.Data) == nil && h.HasFCS {
		return int64(min(h.FrameContentSize, maxPayload+1))
	}
	return 0
}

// recordSize is the decoded size of rec's payloads.
func recordSize(rec *seam.Record) int64 {
	if p := rec.Packed; p != nil {
		n := int64(len(p.ID) + len(p.Name))
		for _, s := range p.Parts {
			n += int64(len(s))
		}
		return n
	}
	return int64(len(rec.Event.Data) + len(rec.Event.SurfaceOp))
}
