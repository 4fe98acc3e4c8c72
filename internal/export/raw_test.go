package export

import (
	"bytes"
	"context"
	"errors"
	"iter"
	"testing"

	"github.com/dshctl/dshctl/internal/seam"
)

// rawHandle serves records as stored and the events a reader serves of
// them; the other Handle methods are not used.
type rawHandle struct {
	seam.Handle
	records []seam.RawRecord
	events  []seam.Event
	scanErr error // after the events
}

func (h *rawHandle) Header() seam.Header { return seam.Header{Version: 0, ID: "s"} }

func (h *rawHandle) Scan(context.Context, seam.ScanOptions) iter.Seq2[seam.Event, error] {
	return func(yield func(seam.Event, error) bool) {
		for _, e := range h.events {
			if !yield(e, nil) {
				return
			}
		}
		if h.scanErr != nil {
			yield(seam.Event{}, h.scanErr)
		}
	}
}

func (h *rawHandle) Raw(context.Context) iter.Seq2[seam.RawRecord, error] {
	return func(yield func(seam.RawRecord, error) bool) {
		for _, rec := range h.records {
			if !yield(rec, nil) {
				return
			}
		}
	}
}

// records makes the raw records of lines, one group per line when
// grouped: the header, then one event per line.
func records(grouped bool, lines ...string) []seam.RawRecord {
	var out []seam.RawRecord
	off := int64(0)
	for i, l := range lines {
		rec := seam.RawRecord{Line: []byte(l), Offset: off, Events: min(i, 1)}
		if grouped {
			rec.Group = &seam.RecordGroup{Index: i, Offset: off, Size: int64(len(l))}
		}
		out = append(out, rec)
		off += int64(len(l))
	}
	return out
}

func TestWriteRaw(t *testing.T) {
	const (
		hdr   = `{"type":"session","version":0,"id":"s","createdAt":1,"delegationDepth":0}` + "\n"
		start = `{"type":"turn/start","seq":0,"time":1,"data":{"turn":1}}` + "\n"
		end   = `{"type":"turn/end","seq":1,"time":1,"data":{"turn":1,"reason":{"kind":"completed"}}}` + "\n"
		call  = `{"type":"tool/call","seq":2,"time":1,"data":{}}` + "\n"
		bad   = `{"type":"tool/call","seq":garbage}` + "\n"
		// A packed row of three chunks, standing for seqs 1 to 3.
		packed = `{"type":"text-chunks","seq0":1,"time0":1,"turn":1,"step":1,"index":0,"dt":[0,0],"parts":["a","b","c"]}` + "\n"
	)
	served := []seam.Event{{Type: "turn/start", Seq: 0}, {Type: "turn/end", Seq: 1}}
	damaged := errors.New("corrupt: a turn/end follows the bad record")
	for _, c := range []struct {
		name    string
		h       *rawHandle
		o       RawOptions
		want    string
		tail    RawResult
		wantErr error
	}{
		{"clean", &rawHandle{records: records(false, hdr, start, end), events: served}, RawOptions{},
			hdr + start + end, RawResult{}, nil},
		{"frames", &rawHandle{records: records(true, hdr, start), events: served[:1]}, RawOptions{Groups: true},
			"# frame 0 at byte 0, 74 bytes\n" + hdr + "# frame 1 at byte 74, 57 bytes\n" + start, RawResult{}, nil},
		{"uncommitted tail left out", &rawHandle{records: records(false, hdr, start, end, bad, call), events: served}, RawOptions{},
			hdr + start + end, RawResult{TailRecords: 2, TailBytes: int64(len(bad + call)), TailOffset: int64(len(hdr + start + end))}, nil},
		{"uncommitted tail asked for", &rawHandle{records: records(false, hdr, start, end, bad), events: served}, RawOptions{Tail: true},
			hdr + start + end + bad, RawResult{TailRecords: 1, TailBytes: int64(len(bad)), TailOffset: int64(len(hdr + start + end))}, nil},
		// A valid row the reader does not serve (after a seq gap, say) is
		// tail too: the reader decides, not the row's looks.
		{"valid but unserved", &rawHandle{records: records(false, hdr, start, end, call), events: served}, RawOptions{},
			hdr + start + end, RawResult{TailRecords: 1, TailBytes: int64(len(call)), TailOffset: int64(len(hdr + start + end))}, nil},
		// A packed row stands for several events, all served.
		{"packed", &rawHandle{records: func() []seam.RawRecord {
			r := records(false, hdr, start, packed)
			r[2].Events = 3
			return r
		}(), events: append(served, seam.Event{Seq: 2}, seam.Event{Seq: 3})}, RawOptions{},
			hdr + start + packed, RawResult{}, nil},
		// ... unless the reader stops inside it.
		{"packed cut", &rawHandle{records: func() []seam.RawRecord {
			r := records(false, hdr, start, packed)
			r[2].Events = 3
			return r
		}(), events: served}, RawOptions{},
			hdr + start, RawResult{TailRecords: 1, TailBytes: int64(len(packed)), TailOffset: int64(len(hdr + start))}, nil},
		{"damaged", &rawHandle{records: records(false, hdr, start, bad, end), events: served[:1], scanErr: damaged}, RawOptions{},
			hdr + start, RawResult{TailRecords: 2, TailBytes: int64(len(bad + end)), TailOffset: int64(len(hdr + start))}, damaged},
	} {
		t.Run(c.name, func(t *testing.T) {
			var b bytes.Buffer
			res, err := WriteRaw(context.Background(), &b, c.h, c.o)
			if b.String() != c.want || res != c.tail || !errors.Is(err, c.wantErr) || (err == nil) != (c.wantErr == nil) {
				t.Errorf("WriteRaw = %q, %+v, %v\nwant %q, %+v, %v", b.String(), res, err, c.want, c.tail, c.wantErr)
			}
		})
	}
	if _, err := WriteRaw(context.Background(), &bytes.Buffer{}, struct{ seam.Handle }{}, RawOptions{}); !errors.Is(err, ErrNoRaw) {
		t.Errorf("WriteRaw of a handle without Raw: %v", err)
	}
}
