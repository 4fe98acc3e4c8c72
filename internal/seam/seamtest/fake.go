package seamtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"iter"

	"github.com/dshctl/dshctl/internal/seam"
)

// Fake is an in-memory read handle, for tests of the code that reads
// sessions through the seam (inspect, verify). Its Scan charges each event
// the length of its canonical JSON line against MaxBytes, as a backend
// charges physical bytes, and records what every scan read.
type Fake struct {
	Head   seam.Header
	Events []seam.Event
	// FailAt, when >= 0, makes a scan fail with ErrCorrupt on reaching
	// that seq.
	FailAt int64
	// Reads is the bytes each scan charged, in call order.
	Reads []int64
}

// NewFake returns a Fake of the session "fake" in format version holding
// events; from v2 on its header says the session is not seeded.
func NewFake(createdAt int64, version int, events ...seam.Event) *Fake {
	f := false
	h := seam.Header{Version: version, ID: "fake", CreatedAt: createdAt}
	if version >= 2 {
		h.IsSeeded = &f
	}
	return &Fake{Head: h, Events: events, FailAt: -1}
}

func (f *Fake) ID() string                 { return f.Head.ID }
func (f *Fake) Header() seam.Header        { return f.Head }
func (f *Fake) InheritedEventCount() int64 { return 0 }
func (f *Fake) Access() seam.Access        { return seam.Read }

func (f *Fake) Snapshot(context.Context) (seam.Snapshot, error) {
	return seam.Snapshot{Header: f.Head, Revision: "fake", EventCount: int64(len(f.Events))}, nil
}

func (f *Fake) Read(_ context.Context, offset, length int64) ([]seam.Event, error) {
	if offset < 0 {
		return nil, errors.New("negative offset")
	}
	if offset >= int64(len(f.Events)) {
		return nil, nil
	}
	end := int64(len(f.Events))
	if length >= 0 {
		end = min(end, offset+length)
	}
	return f.Events[offset:end], nil
}

func (f *Fake) Scan(ctx context.Context, o seam.ScanOptions) iter.Seq2[seam.Event, error] {
	return func(yield func(seam.Event, error) bool) {
		f.Reads = append(f.Reads, 0)
		spent := &f.Reads[len(f.Reads)-1]
		emit := func(e seam.Event) bool {
			if err := ctx.Err(); err != nil {
				yield(seam.Event{}, err)
				return false
			}
			if e.Seq == f.FailAt {
				yield(seam.Event{}, &seam.Error{Kind: seam.ErrCorrupt, Op: "scan", Pos: seam.NoPos})
				return false
			}
			n := int64(len(e.AppendJSON(nil)) + 1)
			if o.MaxBytes > 0 && *spent+n > o.MaxBytes {
				yield(seam.Event{}, seam.ErrScanBudget)
				return false
			}
			*spent += n
			// Hand out a copy whose Data the consumer must not keep: the
			// buffer is overwritten after the yield, like a reused read buffer.
			c := e
			c.Data = bytes.Clone(e.Data)
			ok := yield(c, nil)
			for i := range c.Data {
				c.Data[i] = 'x'
			}
			return ok
		}
		if o.Reverse {
			end := int64(len(f.Events))
			if o.From > 0 {
				end = min(end, o.From)
			}
			for i := end - 1; i >= 0; i-- {
				if !emit(f.Events[i]) {
					return
				}
			}
			return
		}
		for i := o.From; i < int64(len(f.Events)); i++ {
			if !emit(f.Events[i]) {
				return
			}
		}
	}
}

func (f *Fake) Append(context.Context, []seam.Event) error { return seam.ErrReadOnly }
func (f *Fake) Flush(context.Context) error                { return seam.ErrReadOnly }
func (f *Fake) Close() error                               { return nil }

// Event builds an event of type typ with data as its payload; a surface
// event gets an append surfaceOp.
func Event(seq, time int64, typ, data string) seam.Event {
	e := seam.Event{Type: typ, Seq: seq, Time: time, Data: json.RawMessage(data)}
	if seam.IsSurfaceType(4, typ) {
		e.SurfaceOp = json.RawMessage(`"append"`)
	}
	return e
}

// Renumber returns events with seqs from 0, in order.
func Renumber(events []seam.Event) []seam.Event {
	out := make([]seam.Event, len(events))
	for i, e := range events {
		e.Seq = int64(i)
		out[i] = e
	}
	return out
}
