package sqlite

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/dshctl/dshctl/internal/rawjson"

	"github.com/dshctl/dshctl/internal/seam"
)

func TestSourceSeqsCodec(t *testing.T) {
	for _, seqs := range [][]int64{
		{},
		{0},
		{5},
		{40, 41, 1, 18, 22, 37}, // a compaction: not increasing
		{3, 4, 5, 6, 9, 11, 12}, // increasing: no ranges in schema 17
		{maxSafeInteger, 0, maxSafeInteger - 1},
		{127, 128, 16383, 16384, 0}, // varint length boundaries
	} {
		b := appendSourceSeqs(nil, seqs)
		got, err := decodeSourceSeqs(b)
		if err != nil || !slices.Equal(got, seqs) || got == nil {
			t.Errorf("%v: encoded %x, decoded %v, %v", seqs, b, got, err)
		}
	}
	// The format itself: first seq unsigned, then zigzag deltas.
	if b := appendSourceSeqs(nil, []int64{40, 41, 1}); !bytes.Equal(b, []byte{40, 2, 79}) {
		t.Errorf("[40,41,1] encodes as %x, want 28024f", b)
	}
	for _, bad := range [][]byte{
		{0x80}, // truncated varint
		{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, // overflow
		{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x10},                   // first seq beyond 2^53
		{5, 13}, // 5, then -7: negative
		append(appendSourceSeqs(nil, []int64{maxSafeInteger}), 2), // past the safe range
	} {
		if got, err := decodeSourceSeqs(bad); err == nil {
			t.Errorf("%x: decoded %v, want an error", bad, got)
		}
	}
}

func TestPayloadCompression(t *testing.T) {
	compressible := func(n int) []byte {
		return []byte(`{"text":"` + strings.Repeat("the quick brown fox ", n/20+1)[:n-11] + `"}`)
	}
	random := make([]byte, 6000)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range random {
		random[i] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+/"[r.IntN(64)]
	}
	incompressible := []byte(`{"b":"` + string(random) + `"}`)
	for _, c := range []struct {
		name string
		text []byte
		blob bool
	}{
		{"below_threshold", compressible(compressMin - 1), false},
		{"at_threshold", compressible(compressMin), true},
		{"large", compressible(300 << 10), true},
		{"incompressible", incompressible, false},
		{"small", []byte(`{}`), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := payload(c.text)
			blob, isBlob := p.([]byte)
			if isBlob != c.blob {
				t.Fatalf("%d bytes: stored as BLOB %v, want %v", len(c.text), isBlob, c.blob)
			}
			if !isBlob {
				if p.(string) != string(c.text) {
					t.Fatal("text changed")
				}
				return
			}
			if len(blob) >= len(c.text) {
				t.Fatalf("BLOB of %d bytes for %d bytes of text", len(blob), len(c.text))
			}
			back, err := decompress(nil, blob)
			if err != nil || !bytes.Equal(back, c.text) {
				t.Fatalf("decompress: %v", err)
			}
		})
	}
}

func TestDecompressRejects(t *testing.T) {
	good := compress(bytes.Repeat([]byte(`{"a":"b"}`), 1000))
	for name, blob := range map[string][]byte{
		"empty":     {},
		"not_zstd":  []byte(`{"turn":1}`),
		"truncated": good[:len(good)-5],
		"bad_checksum": func() []byte {
			b := bytes.Clone(good)
			b[len(b)-1] ^= 0xff
			return b
		}(),
		"skippable": {0x50, 0x2a, 0x4d, 0x18, 0, 0, 0, 0},
		// A frame header declaring 1 TiB of content.
		"huge_declared": {0x28, 0xb5, 0x2f, 0xfd, 0xe0, 0, 0, 0, 0, 0, 0x01, 0, 0},
	} {
		if _, err := decompress(nil, blob); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// chunkEvents returns n text chunk events from seq on, with gaps that go
// back in time now and then.
func chunkEvents(seq int64, n int, text func(i int) string) []seam.Event {
	out := make([]seam.Event, n)
	t := int64(1785331619000)
	for i := range out {
		t += int64(i%7) - 2
		out[i] = seam.Event{Type: "assistant/chunk", Seq: seq + int64(i), Time: t,
			Data: []byte(fmt.Sprintf(`{"turn":1,"step":1,"chunk":{"type":"text-delta","index":0,"text":%s}}`, rawjson.AppendString(nil, text(i))))}
	}
	return out
}

// TestSchema17RoundTrip writes batches with packed chunk runs at the
// 1,024-member and 1 MiB limits, compressed payloads and non-monotonic
// sourceEventSeqs through the store and reads them back exactly, with the
// rows in the database as schema 17 stores them.
func TestSchema17RoundTrip(t *testing.T) {
	ctx := context.Background()
	s, err := Open(dbPath(t.TempDir()), Options{Create: true, BackupDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	h, err := s.Create(ctx, seam.Header{Version: 0, ID: "rt", CreatedAt: 1785331618000, Cwd: "/w"}, seam.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	var all []seam.Event
	add := func(events ...seam.Event) {
		t.Helper()
		if err := h.Append(ctx, events); err != nil {
			t.Fatal(err)
		}
		all = append(all, events...)
	}
	next := func() int64 { return int64(len(all)) }
	add(seam.Event{Type: "turn/start", Seq: 0, Time: 1785331618500, Data: []byte(`{"turn":1}`)})
	add(chunkEvents(next(), 2*seam.MaxPackedMembers+2, func(i int) string { return fmt.Sprint("w", i, " ") })...) // 1024 + 1024 + 2 plain
	add(chunkEvents(next(), 12, func(i int) string { return strings.Repeat("x", 100<<10) + fmt.Sprint(i) })...)   // 1 MiB payload limit
	big := fmt.Sprintf(`{"turn":1,"step":1,"message":{"id":"r","role":"user","source":{"kind":"tool","callId":"c"},"content":[{"type":"tool-result","toolCallId":"c","content":%s}]}}`,
		rawjson.AppendString(nil, strings.Repeat("line of output\n", 2000)))
	add(seam.Event{Type: "tool/result", Seq: next(), Time: 1785331620000, Data: []byte(big), SurfaceOp: []byte(`"append"`), SourceEventSeqs: []int64{1}})
	add(seam.Event{Type: "user/message", Seq: next(), Time: 1785331620001, Data: []byte(`{"content":[]}`),
		SurfaceOp: []byte(`{"op":"replace","start":1,"end":5}`), SourceEventSeqs: []int64{next() - 1, 0, 3, 2, 5, 4}})
	add(seam.Event{Type: "plugin/custom", Seq: next(), Time: 1785331619000, Data: []byte(`{}`), Ignorable: true, SourceEventSeqs: []int64{}})

	got, err := h.Read(ctx, 0, -1)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(all) {
		t.Fatalf("%d events, want %d", len(got), len(all))
	}
	for i := range got {
		if g, w := got[i].AppendJSON(nil), all[i].AppendJSON(nil); !bytes.Equal(g, w) {
			t.Fatalf("event %d:\n got %.300s\nwant %.300s", i, g, w)
		}
	}
	// The rows: packed runs (their payloads text, as store.md 6 has them),
	// BLOB payloads of scalar rows and the empty varint list.
	var shape []string
	rows, err := s.db.QueryContext(ctx, `SELECT seq, type, ignorable, typeof(data), length(data), typeof(source_event_seqs) FROM events ORDER BY seq`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var seq, size int64
		var typ, dataType, seqsType string
		var ign *int64
		if err := rows.Scan(&seq, &typ, &ign, &dataType, &size, &seqsType); err != nil {
			t.Fatal(err)
		}
		if typ == seam.TextChunks {
			if *ign != 0 || size > seam.MaxPackedPayload {
				t.Fatalf("packed row at %d: ignorable %v, %d bytes", seq, *ign, size)
			}
		}
		shape = append(shape, fmt.Sprintf("%s:%s:%s", typ, dataType, seqsType))
	}
	rows.Close()
	want := []string{"turn/start:text:null",
		"text-chunks:text:null", "text-chunks:text:null", "assistant/chunk:text:null", "assistant/chunk:text:null", // 1024 + 1024 + 2
		"text-chunks:text:null", "assistant/chunk:blob:null", "assistant/chunk:blob:null", // 10 members of 100 KiB fill 1 MiB
		"tool/result:blob:blob", "user/message:text:blob", "plugin/custom:text:blob"}
	if strings.Join(shape, " ") != strings.Join(want, " ") {
		t.Fatalf("rows:\n %s\nwant\n %s", strings.Join(shape, " "), strings.Join(want, " "))
	}
	// Stat counts a packed last row's members, and a fresh store reads the
	// same.
	snap, err := s.Stat(ctx, "rt")
	if err != nil || snap.EventCount != int64(len(all)) {
		t.Fatalf("Stat: %d events, %v", snap.EventCount, err)
	}
}

// TestEventCountFromPackedTail checks that Stat and List count the members
// of a packed final row without reading other rows.
func TestEventCountFromPackedTail(t *testing.T) {
	ctx := context.Background()
	s, err := Open(dbPath(t.TempDir()), Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	h, err := s.Create(ctx, seam.Header{Version: 0, ID: "p", CreatedAt: 1}, seam.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if err := h.Append(ctx, chunkEvents(0, 700, func(i int) string { return "abc" })); err != nil {
		t.Fatal(err)
	}
	snap, err := s.Stat(ctx, "p")
	entries, lerr := s.List(ctx)
	if err != nil || lerr != nil || snap.EventCount != 700 || entries[0].Snapshot.EventCount != 700 {
		t.Fatalf("Stat %d %v, List %v %v", snap.EventCount, err, entries, lerr)
	}
}

// FuzzDecodeRow feeds untrusted bytes to every column of a row of either
// schema: varint lists, zstd BLOBs, packed payloads, JSON texts. Decoding
// must fail cleanly or give events that re-encode to themselves.
func FuzzDecodeRow(f *testing.F) {
	frame := compress([]byte(`{"turn":1,"step":1,"index":0,"dt":[1,-2],"texts":["a","b","c"]}` + strings.Repeat(" ", 5000)))
	f.Add(int64(3), "text-chunks", []byte(`{"turn":1,"step":1,"index":0,"dt":[1,-2],"texts":["a","b","c"]}`), false, []byte(nil), false, []byte(nil), int64(0), 17, 0)
	f.Add(int64(3), "text-chunks", frame, true, []byte(nil), false, []byte(nil), int64(0), 17, 0)
	f.Add(int64(7), "user/message", []byte(`{"content":[]}`), false, appendSourceSeqs(nil, []int64{5, 6, 1, 0}), true, []byte(`{"op":"replace","start":0,"end":6}`), int64(-1), 17, 0)
	f.Add(int64(7), "user/message", []byte(`{"content":[]}`), false, []byte(`[5,6,1,0]`), false, []byte(`"append"`), int64(-1), 14, 0)
	f.Add(int64(7), "tool/result", []byte(`{}`), false, []byte(`[[1,3],5]`), false, []byte(`"append"`), int64(-1), 14, 2)
	f.Add(int64(1), "x/y", compress(bytes.Repeat([]byte(`{"a":1}`), 1)), true, []byte{}, true, []byte(nil), int64(1), 17, 4)
	f.Fuzz(func(t *testing.T, seq int64, typ string, data []byte, dataBlob bool, seqs []byte, seqsBlob bool, sop []byte, ign int64, schema, v int) {
		if schema != Schema14 {
			schema = Schema17
		}
		v = min(max(v, 0), seam.MaxVersion)
		r := RawRow{Seq: seq, Time: 1785331619000, Type: typ, Data: data, DataBlob: dataBlob, Seqs: seqs, SeqsBlob: seqsBlob, SurfaceOp: sop, Ignorable: ign}
		rec, err := decodeRow(&r, schema, v, false)
		if err != nil {
			if !errors.Is(err, seam.ErrCorrupt) && !errors.Is(err, seam.ErrUnsupportedFormat) {
				t.Fatalf("error of no kind: %v", err)
			}
			return
		}
		events := rec.Events()
		if len(events) == 0 || len(events) > seam.MaxPackedMembers {
			t.Fatalf("%d events", len(events))
		}
		for i := range events {
			line := events[i].AppendRecordJSON(nil, v)
			back, err := seam.DecodeRecord(line, v)
			if err != nil {
				t.Fatalf("decoded event %s does not decode as a line: %v", line, err)
			}
			if !bytes.Equal(back.Event.AppendJSON(nil), events[i].AppendJSON(nil)) {
				t.Fatalf("event %s changes through a line", line)
			}
		}
	})
}
