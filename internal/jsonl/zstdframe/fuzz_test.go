package zstdframe

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// addSeeds adds the fixture logs and some handmade frames to f's corpus.
func addSeeds(f testing.TB, add func([]byte)) {
	root := fixtureRoot(f)
	for _, pattern := range []string{"jsonl-zstd/*/*/session.jsonl.zstd", "damaged/*/*/*/session.jsonl.zstd"} {
		paths, err := filepath.Glob(filepath.Join(root, pattern))
		if err != nil || len(paths) == 0 {
			f.Fatalf("no fixtures for %s: %v", pattern, err)
		}
		for _, p := range paths {
			data, err := os.ReadFile(p)
			if err != nil {
				f.Fatal(err)
			}
			add(data)
		}
	}
	inner := AppendFrame(nil, []byte("inner\n"))
	add(cat(AppendFrame(nil, []byte("h\n")), rawFrame(cat(inner, []byte("\n")))))
	add(cat(AppendFrame(nil, []byte("h\n")), rawFrame(cat(inner, inner))[:40]))
	add(cat(frameHeader(0x04, 0x00), blockHeader(true, 1, 1000), []byte("x"), checksumOf(bytes.Repeat([]byte("x"), 1000))))
	add(cat(frameHeader(0x24, 2), blockHeader(true, 0, 2), []byte("a\n"), checksumOf([]byte("a\n")), magicBytes[:2]))
	add(nil)
}

func FuzzWalk(f *testing.F) {
	addSeeds(f, func(b []byte) { f.Add(b) })
	dec := newTestDecoder(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		r, n := bytes.NewReader(data), int64(len(data))
		frames, torn, err := Walk(r, n)
		end := int64(0)
		for _, fr := range frames {
			if fr.Offset != end || fr.Size < 4+1+blockHeaderLen || fr.HeaderSize < 5 {
				t.Fatalf("frame %+v does not follow byte %d", fr, end)
			}
			if g, err := ParseFrame(r, fr.Offset, n); err != nil || g != fr {
				t.Fatalf("ParseFrame(%d) = %+v, %v; Walk said %+v", fr.Offset, g, err, fr)
			}
			// Decoding may fail but must neither panic nor exceed its limit.
			if b, err := dec.DecodeAll(r, fr, 1<<20); err == nil && len(b) > 1<<20 {
				t.Fatalf("DecodeAll returned %d bytes", len(b))
			}
			end = fr.End()
		}
		switch {
		case err != nil:
			var ferr *Error
			if !errors.As(err, &ferr) || !errors.Is(err, ErrCorrupt) || ferr.Offset != end || torn != (Torn{}) {
				t.Fatalf("Walk error %v after byte %d, torn %+v", err, end, torn)
			}
		case torn.Size > 0:
			if torn.Offset != end || torn.Offset+torn.Size != n {
				t.Fatalf("torn %+v after byte %d of %d", torn, end, n)
			}
		case end != n:
			t.Fatalf("Walk stopped at %d of %d without error", end, n)
		}
		var iterated []Frame
		for fr, err := range Frames(r, n) {
			if err != nil {
				break
			}
			iterated = append(iterated, fr)
		}
		if !slices.Equal(iterated, frames) {
			t.Fatal("Frames and Walk differ")
		}
	})
}

func FuzzLastFrame(f *testing.F) {
	addSeeds(f, func(b []byte) { f.Add(b, uint16(0)) })
	dec := newTestDecoder(f)
	f.Fuzz(func(t *testing.T, data []byte, window uint16) {
		checkLastFrame(t, dec, data, int64(window))
	})
}

// checkLastFrame checks that LastFrame agrees with Walk on data.
//
// One disagreement is inherent in reading only the tail: when complete
// frames are stored verbatim inside the data of the last frame or of the
// torn tail (the fuzzer makes them by duplicating byte ranges), nothing in
// the tail tells them from real frames, so LastFrame may return the last
// of them, a confirmed frame that starts after Walk's last frame. Real dsh
// logs hold compressed JSONL, where such a chain would need XXH64 matches.
func checkLastFrame(t *testing.T, dec *Decoder, data []byte, window int64) {
	r, n := bytes.NewReader(data), int64(len(data))
	frames, torn, werr := Walk(r, n)
	last, lerr := LastFrame(r, n, LastOptions{Window: window, Decoder: dec})
	if lerr == nil {
		// Whatever LastFrame returns is a complete frame followed by at
		// most a torn one, and decodes.
		g, err := ParseFrame(r, last.Frame.Offset, n)
		if err != nil || g != last.Frame {
			t.Fatalf("LastFrame returned %+v; ParseFrame says %+v, %v", last.Frame, g, err)
		}
		tail := Torn{}
		if e := last.Frame.End(); e < n {
			tail = Torn{Offset: e, Size: n - e}
		}
		if last.Torn != tail {
			t.Fatalf("LastFrame torn %+v, want %+v", last.Torn, tail)
		}
		if err := dec.verify(r, last.Frame); err != nil {
			t.Fatalf("LastFrame returned a frame that does not decode: %v", err)
		}
	}
	if werr != nil {
		// LastFrame sees only the tail: it may find an intact last frame,
		// or, when it walks, the same corruption.
		if lerr != nil && lerr.Error() != werr.Error() {
			t.Fatalf("Walk: %v; LastFrame: %v", werr, lerr)
		}
		return
	}
	// want is Walk's answer; LastFrame may instead take a nested frame
	// that starts after floor.
	var want Last
	var wantErr error
	floor := torn.Offset
	if len(frames) == 0 {
		want.Torn, wantErr = torn, ErrNoFrame
	} else {
		want = Last{Frame: frames[len(frames)-1], Torn: torn}
		floor = want.Frame.Offset
		if err := dec.verify(r, want.Frame); err != nil {
			want, wantErr = Last{}, err
		}
	}
	switch {
	case wantErr == nil && lerr == nil && last == want:
	case wantErr != nil && lerr != nil && lerr.Error() == wantErr.Error() && last == want:
	case lerr == nil && last.Frame.Offset > floor:
		t.Logf("LastFrame took frame %+v nested after byte %d", last.Frame, floor)
	default:
		t.Fatalf("LastFrame = %+v, %v; Walk says %+v, %v", last, lerr, want, wantErr)
	}
}
