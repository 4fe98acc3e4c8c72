package jsonl

import (
	"bytes"
	"context"
	"os"
	"slices"
	"testing"

	"github.com/dshctl/dshctl/internal/jsonl/zstdframe"
	"github.com/dshctl/dshctl/internal/seam"
)

var fuzzLines = []string{
	`{"type":"turn/start","seq":0,"time":1,"data":{"turn":1}}` + "\n",
	`{"type":"text-chunks","seq0":1,"time0":2,"data":{"turn":1,"step":1,"index":0,"dt":[1,-1],"texts":["a","b","c"]}}` + "\n",
	`{"type":"user/message","seq":4,"time":3,"data":{},"surfaceOp":{"op":"replace","start":0,"end":2},"sourceEventSeqs":[3,1]}` + "\n",
	`{"type":"turn/end","seq":5,"time":4,"data":{"turn":1,"reason":{"kind":"completed"}}}` + "\n",
}

// fuzzTurn2 opens a second turn after fuzzLines.
const fuzzTurn2 = `{"type":"turn/start","seq":6,"time":5,"data":{"turn":2}}` + "\n"

// fuzzSession reads and then appends to a one-session root whose log is
// head followed by body; nothing may panic, and a successful append must
// read back.
func fuzzSession(t *testing.T, enc Encoding, log []byte) {
	ctx := context.Background()
	root := t.TempDir()
	path := writeLog(t, root, "--p--", "s", LogName(0, enc), "")
	if err := os.WriteFile(path, log, 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := Open(root, Options{BackupDir: t.TempDir(), Compression: enc, fs: &testFS{noSync: true}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.List(ctx)
	s.Stat(ctx, "s")
	for _, lenient := range []bool{false, true} {
		s.opts.AllowUnknownTypes = lenient
		if h, err := s.Open(ctx, "s", seam.Read); err == nil {
			for _, opts := range []seam.ScanOptions{{}, {Reverse: true}, {From: 2}, {MaxBytes: 64}, {Reverse: true, MaxBytes: 64}} {
				for _, err := range h.Scan(ctx, opts) {
					if err != nil {
						break
					}
				}
			}
			for _, err := range h.(seam.RawReader).Raw(ctx) {
				if err != nil {
					break
				}
			}
			h.Close()
		}
	}
	s.opts.AllowUnknownTypes = false
	want, fullErr := fullWriteState(ctx, s, "s")
	w, err := s.Open(ctx, "s", seam.Write)
	if err != nil {
		if fullErr == nil {
			t.Fatalf("the write open refused a log a full validation accepts: %v", err)
		}
		return
	}
	defer w.Close()
	if fullErr != nil {
		// Damage before the last turn/end: committed data the write open
		// does not read. The append goes after the tail it did read.
		ws := w.(*handle).w
		if err := w.Append(ctx, []seam.Event{{Type: "session/title", Seq: ws.next, Time: 1, Data: []byte(`{"title":"t"}`)}}); err != nil {
			t.Fatalf("append after a tail the write open accepted: %v", err)
		}
		return
	}
	if ws := w.(*handle).w; ws.next != want.next || ws.cut != want.cut || ws.physEnd != want.physEnd ||
		ws.size != want.size || !bytes.Equal(ws.salvage, want.salvage) {
		t.Fatalf("tail-only write open: next %d, cut %d, physEnd %d, size %d, salvage %q; a full validation: %d, %d, %d, %d, %q",
			ws.next, ws.cut, ws.physEnd, ws.size, ws.salvage, want.next, want.cut, want.physEnd, want.size, want.salvage)
	}
	next, err := w.Read(ctx, 0, -1)
	if err != nil {
		t.Fatalf("a validated write handle fails to read: %v", err)
	}
	n := int64(len(next))
	if err := w.Append(ctx, []seam.Event{{Type: "session/title", Seq: n, Time: 1, Data: []byte(`{"title":"t"}`)}}); err != nil {
		t.Fatalf("append to a validated log: %v", err)
	}
	got, err := w.Read(ctx, 0, -1)
	if err != nil || int64(len(got)) != n+1 {
		t.Fatalf("after append: %d events, %v; want %d", len(got), err, n+1)
	}
}

// fullWriteState is what a write open decides about the log of id when it
// validates the whole log from its header: the reference that the write
// open, which reads only the tail, must agree with on every log this
// accepts.
func fullWriteState(ctx context.Context, s *Store, id string) (writer, error) {
	d, err := s.find("open", id)
	if err != nil {
		return writer{}, err
	}
	l, err := s.openLog("open", d, os.O_RDONLY)
	if err != nil {
		return writer{}, err
	}
	defer l.f.Close()
	fi, err := l.f.Stat()
	if err != nil {
		return writer{}, err
	}
	size := fi.Size()
	dec, done := s.decs.once()
	hi, err := l.readHeader(size, dec)
	done()
	if err != nil {
		return writer{}, err
	}
	h := &handle{s: s, id: id, hdr: hi.hdr, log: l, body: position{fileOff: hi.bodyOff, textOff: hi.bodyText, lineNo: 1, frame: 1}}
	r := h.reader(false)
	r.onCheckpoint = nil
	end, _, err := r.forward(ctx, r.start(), size, 0, 0, func(*seam.Event) bool { return true })
	if err != nil {
		return writer{}, err
	}
	if _, err := end.marker.Result(&h.hdr); err != nil {
		return writer{}, err
	}
	w := writer{size: size, next: end.next, cut: end.cutOffset(), physEnd: end.physEnd}
	if b := end.bad; b != nil && b.frame >= 0 && b.off > b.frameText {
		if w.salvage, err = l.frameText(b.frameOff, size, b.off-b.frameText); err != nil {
			return writer{}, err
		}
	}
	return w, nil
}

// plainSeeds are the seed bodies (after the header line) of the fuzzers
// of plain logs.
func plainSeeds() [][]byte {
	var out [][]byte
	body := ""
	for _, l := range fuzzLines {
		body += l
		out = append(out, []byte(body))
	}
	return append(out, []byte(body+`{"type":"turn/st`), []byte(fuzzLines[0]+"garbage\n"+fuzzLines[3]),
		[]byte(fuzzLines[0]+`{"type":"x/y","seq":1,"time":1,"data":{}}`+"\n"),
		// A bad record in the last turn, with and without a turn/end after it.
		[]byte(body+fuzzTurn2+"garbage\n"+`{"type":"step/start","seq":7,"time":5,"data":{}}`+"\n"),
		[]byte(body+fuzzTurn2+"garbage\n"+`{"type":"turn/end","seq":7,"time":5,"data":{}}`+"\n"))
}

// zstdSeeds are the seed bodies (after the header frame) of the fuzzers of
// zstd logs.
func zstdSeeds() [][]byte {
	var out [][]byte
	var body []byte
	for _, l := range fuzzLines {
		body = zstdframe.AppendFrame(body, []byte(l))
		out = append(out, body)
	}
	return append(out, body[:len(body)-3], zstdframe.AppendFrame(nil, []byte(fuzzLines[0] + fuzzLines[1])[:70]),
		append([]byte{0x50, 0x2a, 0x4d, 0x18, 0, 0, 0, 0}, body...),
		zstdframe.AppendFrame(nil, []byte(fuzzLines[0]+"garbage\n"+fuzzLines[3])),
		// A bad record in the last turn, inside a frame and as a frame.
		zstdframe.AppendFrame(slices.Clip(body), []byte(fuzzTurn2+"garbage\n")),
		zstdframe.AppendFrame(zstdframe.AppendFrame(slices.Clip(body), []byte(fuzzTurn2)), []byte(`{"type":"turn/end","seq":7,"ti`+"\n")))
}

func FuzzReadPlain(f *testing.F) {
	head := headerFor("s")
	for _, s := range plainSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		fuzzSession(t, None, append([]byte(head), body...))
	})
}

func FuzzReadZstd(f *testing.F) {
	head := zstdframe.AppendFrame(nil, []byte(headerFor("s")))
	for _, s := range zstdSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		fuzzSession(t, Zstd, append(head[:len(head):len(head)], body...))
	})
}

func FuzzSegment(f *testing.F) {
	for _, s := range []string{"a", ".", "..", "task:review/01 ü~x", "~002E", "~D83D~DE80", "a~0041", "🚀"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if enc, err := EncodeSegment(s); err == nil {
			if back, err := DecodeSegment(enc); err != nil || back != s {
				t.Fatalf("DecodeSegment(EncodeSegment(%q)) = %q, %v", s, back, err)
			}
		}
		if id, err := DecodeSegment(s); err == nil {
			if enc, err := EncodeSegment(id); err != nil || enc != s {
				t.Fatalf("EncodeSegment(DecodeSegment(%q)) = %q, %v", s, enc, err)
			}
			if s == "." || s == ".." {
				t.Fatalf("DecodeSegment accepted %q", s)
			}
		}
		if key, err := ProjectKey(s); err == nil && (!isProjectFolder(key) || len(key) > maxProjectKey+4) {
			t.Fatalf("ProjectKey(%q) = %q", s, key)
		}
	})
}
