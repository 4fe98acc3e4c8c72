package jsonl

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/dshctl/dshctl/internal/jsonl/hostile"
	"github.com/dshctl/dshctl/internal/jsonl/zstdframe"
	"github.com/dshctl/dshctl/internal/seam"
)

// fuzzLines are the records the seeds are made of.
var fuzzLines = hostile.Lines

// fuzzOpts bound what one fuzz input may make a reader hold or decode,
// small, so that inputs of RLE blocks that expand a thousandfold explore
// the limits instead of slowing every execution.
var fuzzOpts = Options{MaxRecordBytes: 4 << 10, MaxFrameBytes: 1 << 20}

// fuzzer runs fuzz inputs as the body of session "s" in one root, made
// once per fuzzing process.
type fuzzer struct {
	root, backups string
	enc           Encoding
}

func newFuzzer(f *testing.F, enc Encoding) *fuzzer {
	return &fuzzer{root: f.TempDir(), backups: f.TempDir(), enc: enc}
}

// run reads and then appends to the session whose log is log: nothing may
// panic or exceed the limits; a full forward and a full reverse read serve
// the same events, or both fail; a successful append reads back, and
// leaves a log whose Stat agrees with a full read.
func (fz *fuzzer) run(t *testing.T, log []byte) {
	ctx := context.Background()
	dir := filepath.Join(fz.root, "--p--", "s")
	os.RemoveAll(dir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, LogName(0, fz.enc)), log, 0o600); err != nil {
		t.Fatal(err)
	}
	opts := fuzzOpts
	opts.BackupDir, opts.Compression, opts.fs = fz.backups, fz.enc, &testFS{noSync: true}
	s, err := Open(fz.root, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.List(ctx)
	s.Stat(ctx, "s")
	for _, lenient := range []bool{false, true} {
		s.opts.AllowUnknownTypes = lenient
		h, err := s.Open(ctx, "s", seam.Read)
		if err != nil {
			continue
		}
		fwd, ferr := collect(h.Scan(ctx, seam.ScanOptions{}))
		rev, rerr := collect(h.Scan(ctx, seam.ScanOptions{Reverse: true}))
		switch {
		case (ferr == nil) != (rerr == nil):
			t.Fatalf("forward read: %d events, %v; reverse: %d events, %v", len(fwd), ferr, len(rev), rerr)
		case ferr == nil:
			slices.Reverse(rev)
			if !sameSeqs(fwd, rev) {
				t.Fatalf("forward read %d events, reverse %d", len(fwd), len(rev))
			}
		}
		for _, opts := range []seam.ScanOptions{{From: 2}, {MaxBytes: 64}, {Reverse: true, MaxBytes: 64}} {
			collect(h.Scan(ctx, opts))
		}
		for _, err := range h.(seam.RawReader).Raw(ctx) {
			if err != nil {
				break
			}
		}
		h.Close()
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
		if errors.Is(err, seam.ErrLimit) {
			return // a record over the limit in the part of a frame kept
		}
		t.Fatalf("append to a validated log: %v", err)
	}
	got, err := w.Read(ctx, 0, -1)
	if err != nil || int64(len(got)) != n+1 {
		t.Fatalf("after append: %d events, %v; want %d", len(got), err, n+1)
	}
	// The append removed every uncommitted and torn byte: what is left
	// reads the same from the tail as from the head.
	snap, err := s.Stat(ctx, "s")
	if err != nil || snap.EventCount != n+1 || snap.Location.TornBytes != 0 || snap.Location.UncommittedBytes != 0 {
		t.Fatalf("after append: Stat %+v, %v; want %d events and no tail", snap, err, n+1)
	}
}

func collect(events func(func(seam.Event, error) bool)) ([]seam.Event, error) {
	var out []seam.Event
	for e, err := range events {
		if err != nil {
			return out, err
		}
		out = append(out, e)
	}
	return out, nil
}

func sameSeqs(a, b []seam.Event) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Seq != b[i].Seq || a[i].Type != b[i].Type || !bytes.Equal(a[i].Data, b[i].Data) {
			return false
		}
	}
	return true
}

// maxSeed bounds the fixture bodies given as seeds: a fuzz execution
// costs about what its input does.
const maxSeed = 24 << 10

// fixtureBodies returns the bodies (what follows the header) of the v0
// fixture logs of encoding enc, intact and damaged, cut to maxSeed from
// the start and to maxSeed at the end.
func fixtureBodies(f *testing.F, enc Encoding) [][]byte {
	root := filepath.Join(fixturesDir(f), "dsh-0.1.0")
	name := LogName(0, enc)
	var paths []string
	for _, pattern := range []string{"jsonl-*/*/*/", "damaged/*/*/*/"} {
		p, _ := filepath.Glob(filepath.Join(root, pattern, name))
		paths = append(paths, p...)
	}
	if len(paths) == 0 {
		f.Fatalf("no fixture logs named %s", name)
	}
	var out [][]byte
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		// The records (plain) or frames (zstd) after the header, as cut
		// points.
		var cuts []int
		if enc == Zstd {
			frames, torn, _ := zstdframe.Walk(bytes.NewReader(data), int64(len(data)))
			for _, fr := range frames {
				cuts = append(cuts, int(fr.End()))
			}
			if torn.Size > 0 {
				cuts = append(cuts, len(data))
			}
		} else {
			for i, c := range data {
				if c == '\n' {
					cuts = append(cuts, i+1)
				}
			}
			cuts = append(cuts, len(data))
		}
		if len(cuts) < 2 {
			continue
		}
		body := data[cuts[0]:]
		if len(body) <= maxSeed {
			out = append(out, body)
			continue
		}
		// The first and the last whole records or frames within maxSeed.
		head := cuts[0]
		for _, c := range cuts[1:] {
			if c-cuts[0] > maxSeed {
				break
			}
			head = c
		}
		tail := len(data)
		for i := len(cuts) - 2; i >= 0 && len(data)-cuts[i] <= maxSeed; i-- {
			tail = cuts[i]
		}
		out = append(out, data[cuts[0]:head], data[tail:])
	}
	return out
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
	dec, done := s.decs.once(ctx, s.lim.frame)
	hi, err := l.readHeader(size, dec)
	done()
	if err != nil {
		return writer{}, err
	}
	h := &handle{s: s, id: id, hdr: hi.hdr, log: l, body: position{fileOff: hi.bodyOff, textOff: hi.bodyText, lineNo: 1, frame: 1}}
	r := h.reader(false)
	r.onCheckpoint = nil
	end, _, err := r.forward(ctx, r.start(), size, budget{}, 0, func(*seam.Event) bool { return true })
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

func FuzzReadPlain(f *testing.F) {
	head := headerFor("s")
	for _, s := range hostile.PlainSeeds() {
		f.Add(s)
	}
	for _, b := range fixtureBodies(f, None) {
		f.Add(b)
	}
	for _, b := range hostile.Shapes(false) {
		f.Add(b)
	}
	fz := newFuzzer(f, None)
	f.Fuzz(func(t *testing.T, body []byte) {
		fz.run(t, append([]byte(head), body...))
	})
}

func FuzzReadZstd(f *testing.F) {
	head := zstdframe.AppendFrame(nil, []byte(headerFor("s")))
	for _, s := range hostile.ZstdSeeds(zstdframe.AppendFrame) {
		f.Add(s)
	}
	for _, b := range fixtureBodies(f, Zstd) {
		f.Add(b)
	}
	for _, b := range hostile.Shapes(true) {
		f.Add(b)
	}
	fz := newFuzzer(f, Zstd)
	f.Fuzz(func(t *testing.T, body []byte) {
		fz.run(t, append(head[:len(head):len(head)], body...))
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
