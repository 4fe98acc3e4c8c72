package verify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"iter"

	"github.com/dshctl/dshctl/internal/seam"
)

// fakeHandle is an in-memory read handle. Its Scan charges each event the
// length of its canonical JSON line against MaxBytes, like a backend
// charging physical bytes, and records what every scan read.
type fakeHandle struct {
	header seam.Header
	events []seam.Event
	// failAt, when >= 0, makes a scan fail with ErrCorrupt on reaching that
	// seq.
	failAt int64
	// read is the bytes each scan charged, in call order.
	read []int64
}

func newFake(createdAt int64, version int, events ...seam.Event) *fakeHandle {
	f := false
	h := seam.Header{Version: version, ID: "fake", CreatedAt: createdAt}
	if version >= 2 {
		h.IsSeeded = &f
	}
	return &fakeHandle{header: h, events: events, failAt: -1}
}

func (f *fakeHandle) ID() string                 { return f.header.ID }
func (f *fakeHandle) Header() seam.Header        { return f.header }
func (f *fakeHandle) InheritedEventCount() int64 { return 0 }
func (f *fakeHandle) Access() seam.Access        { return seam.Read }

func (f *fakeHandle) Snapshot(context.Context) (seam.Snapshot, error) {
	return seam.Snapshot{Header: f.header, Revision: "fake", EventCount: int64(len(f.events))}, nil
}

func (f *fakeHandle) Read(_ context.Context, offset, length int64) ([]seam.Event, error) {
	if offset < 0 {
		return nil, errors.New("negative offset")
	}
	if offset >= int64(len(f.events)) {
		return nil, nil
	}
	end := int64(len(f.events))
	if length >= 0 {
		end = min(end, offset+length)
	}
	return f.events[offset:end], nil
}

func (f *fakeHandle) Scan(ctx context.Context, o seam.ScanOptions) iter.Seq2[seam.Event, error] {
	return func(yield func(seam.Event, error) bool) {
		f.read = append(f.read, 0)
		spent := &f.read[len(f.read)-1]
		emit := func(e seam.Event) bool {
			if err := ctx.Err(); err != nil {
				yield(seam.Event{}, err)
				return false
			}
			if e.Seq == f.failAt {
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
			end := int64(len(f.events))
			if o.From > 0 {
				end = min(end, o.From)
			}
			for i := end - 1; i >= 0; i-- {
				if !emit(f.events[i]) {
					return
				}
			}
			return
		}
		for i := o.From; i < int64(len(f.events)); i++ {
			if !emit(f.events[i]) {
				return
			}
		}
	}
}

func (f *fakeHandle) Append(context.Context, []seam.Event) error { return seam.ErrReadOnly }
func (f *fakeHandle) Flush(context.Context) error                { return seam.ErrReadOnly }
func (f *fakeHandle) Close() error                               { return nil }

// ev builds an event with the given payload; surface events get an append
// surfaceOp.
func ev(seq, time int64, typ, data string) seam.Event {
	e := seam.Event{Type: typ, Seq: seq, Time: time, Data: json.RawMessage(data)}
	if seam.IsSurfaceType(4, typ) {
		e.SurfaceOp = json.RawMessage(`"append"`)
	}
	return e
}

// renumber returns events with seqs from 0 in order.
func renumber(events []seam.Event) []seam.Event {
	out := make([]seam.Event, len(events))
	for i, e := range events {
		e.Seq = int64(i)
		out[i] = e
	}
	return out
}
