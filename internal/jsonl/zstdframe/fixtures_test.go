package zstdframe

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

type manifestFrame struct {
	Start, End      int64
	FHD             string `json:"fhd"`
	ContentSizeFlag int
	SingleSegment   bool
	WindowSize      uint64
	ChecksumFlag    bool
	DictIDFlag      int `json:"dictIdFlag"`
	Blocks          int
	Records         int
}

type manifestSession struct {
	ID        string
	Path      string
	SizeBytes int64
	Frames    []manifestFrame
}

func loadManifest(t *testing.T) (root string, sessions []manifestSession) {
	t.Helper()
	root = fixtureRoot(t)
	raw, err := os.ReadFile(filepath.Join(root, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Stores map[string]struct {
			Oracle struct{ Sessions []manifestSession }
		}
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	sessions = m.Stores["jsonl-zstd"].Oracle.Sessions
	if len(sessions) == 0 {
		t.Fatal("manifest lists no jsonl-zstd sessions")
	}
	return root, sessions
}

// decodeFrames decodes every frame and returns the concatenated content.
func decodeFrames(t *testing.T, d *Decoder, data []byte, frames []Frame) [][]byte {
	t.Helper()
	var out [][]byte
	for _, f := range frames {
		b, err := d.DecodeAll(bytes.NewReader(data), f, 64<<20)
		if err != nil {
			t.Fatalf("decode frame at %d: %v", f.Offset, err)
		}
		out = append(out, b)
	}
	return out
}

func TestFixtureFrameTables(t *testing.T) {
	root, sessions := loadManifest(t)
	dec := newTestDecoder(t)
	for _, s := range sessions {
		t.Run(s.ID, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(root, "jsonl-zstd", s.Path))
			if err != nil {
				t.Fatal(err)
			}
			if int64(len(data)) != s.SizeBytes {
				t.Fatalf("file is %d bytes, manifest says %d", len(data), s.SizeBytes)
			}
			r := bytes.NewReader(data)
			frames, torn, err := Walk(r, int64(len(data)))
			if err != nil || torn != (Torn{}) {
				t.Fatalf("Walk: torn %+v, err %v", torn, err)
			}
			if len(frames) != len(s.Frames) {
				t.Fatalf("Walk found %d frames, manifest %d", len(frames), len(s.Frames))
			}
			for i, mf := range s.Frames {
				f := frames[i]
				if f.Offset != mf.Start || f.End() != mf.End || f.Blocks != mf.Blocks {
					t.Errorf("frame %d: got [%d,%d) %d blocks, manifest [%d,%d) %d blocks",
						i, f.Offset, f.End(), f.Blocks, mf.Start, mf.End, mf.Blocks)
				}
				if f.HasChecksum != mf.ChecksumFlag || f.SingleSegment != mf.SingleSegment ||
					f.WindowSize != mf.WindowSize || (f.ContentSize >= 0) != (mf.ContentSizeFlag != 0 || mf.SingleSegment) ||
					mf.DictIDFlag != 0 || mf.FHD != "0x04" || f.HeaderSize != 6 {
					t.Errorf("frame %d: got %+v, manifest %+v", i, f, mf)
				}
			}

			last, err := LastFrame(r, int64(len(data)), LastOptions{Decoder: dec})
			if err != nil || last != (Last{Frame: frames[len(frames)-1]}) {
				t.Fatalf("LastFrame = %+v, %v; want last walked frame %+v", last, err, frames[len(frames)-1])
			}

			contents := decodeFrames(t, dec, data, frames)
			for i, c := range contents {
				if !bytes.HasSuffix(c, []byte("\n")) || bytes.Count(c, []byte("\n")) != s.Frames[i].Records {
					t.Errorf("frame %d: %d records, manifest %d (ends with newline: %v)",
						i, bytes.Count(c, []byte("\n")), s.Frames[i].Records, bytes.HasSuffix(c, []byte("\n")))
				}
			}
			plain, err := os.ReadFile(filepath.Join(root, "jsonl-none", strings.TrimSuffix(s.Path, ".zstd")))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(bytes.Join(contents, nil), plain) {
				t.Error("decoded frames differ from the jsonl-none log")
			}
		})
	}
}

func TestDamagedFixtures(t *testing.T) {
	root, sessions := loadManifest(t)
	dec := newTestDecoder(t)
	const id = "session-4f1c2a9e-8b3d-4e6f-a1c2-7d9e0b1f2a3c"
	var base []manifestFrame
	for _, s := range sessions {
		if s.ID == id {
			base = s.Frames
		}
	}
	plain, err := os.ReadFile(filepath.Join(root, "jsonl-none", "--home-dev-projects-demo-app--", id, "session.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	load := func(t *testing.T, name, sess string) []byte {
		t.Helper()
		p := filepath.Join(root, "damaged", name, "--home-dev-projects-demo-app--", sess, "session.jsonl.zstd")
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	sameAsBase := func(t *testing.T, frames []Frame, n int) {
		t.Helper()
		if len(frames) != n {
			t.Fatalf("got %d frames, want %d", len(frames), n)
		}
		for i, f := range frames {
			if f.Offset != base[i].Start || f.End() != base[i].End || f.Blocks != base[i].Blocks {
				t.Errorf("frame %d: [%d,%d) %d blocks, want [%d,%d) %d", i, f.Offset, f.End(), f.Blocks, base[i].Start, base[i].End, base[i].Blocks)
			}
		}
	}

	for _, tc := range []struct {
		name     string
		tornSize int64
	}{
		{"zstd-torn-final-frame-checksum", base[8].End - base[8].Start - 2},
		{"zstd-torn-final-frame-header", 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := load(t, tc.name, id)
			r, size := bytes.NewReader(data), int64(len(data))
			frames, torn, err := Walk(r, size)
			if err != nil {
				t.Fatal(err)
			}
			sameAsBase(t, frames, 8)
			want := Torn{Offset: base[8].Start, Size: tc.tornSize}
			if torn != want {
				t.Fatalf("torn = %+v, want %+v", torn, want)
			}
			last, err := LastFrame(r, size, LastOptions{Decoder: dec})
			if err != nil || last != (Last{Frame: frames[7], Torn: want}) {
				t.Fatalf("LastFrame = %+v, %v", last, err)
			}
			// The torn frame is never decoded, not even its complete blocks.
			tf, err := ParseFrame(r, torn.Offset, size)
			if !errors.Is(err, ErrTorn) || tf.Size != torn.Size {
				t.Fatalf("ParseFrame(torn) = %+v, %v", tf, err)
			}
			if _, err := dec.NewReader(r, tf); !errors.Is(err, ErrTorn) {
				t.Fatalf("NewReader(torn frame) error = %v, want ErrTorn", err)
			}
		})
	}

	t.Run("zstd-bad-checksum-middle-frame", func(t *testing.T) {
		data := load(t, "zstd-bad-checksum-middle-frame", id)
		r, size := bytes.NewReader(data), int64(len(data))
		frames, torn, err := Walk(r, size)
		if err != nil || torn != (Torn{}) {
			t.Fatal(torn, err)
		}
		sameAsBase(t, frames, 9)
		for i, f := range frames {
			_, err := dec.DecodeAll(r, f, 1<<20)
			if i != 2 {
				if err != nil {
					t.Errorf("frame %d: %v", i, err)
				}
				continue
			}
			var ferr *Error
			if !errors.Is(err, ErrCorrupt) || !errors.Is(err, ErrChecksum) || errors.Is(err, ErrMagic) || !errors.As(err, &ferr) || ferr.Offset != 796 ||
				err.Error() != "frame at byte 796: checksum mismatch" || ferr.Detail() != "checksum mismatch" {
				t.Errorf("frame 2 decode error = %v", err)
			}
		}
		// The tail is intact: LastFrame does not read frame 2.
		last, err := LastFrame(r, size, LastOptions{Decoder: dec})
		if err != nil || last.Frame != frames[8] {
			t.Fatalf("LastFrame = %+v, %v", last, err)
		}
	})

	t.Run("zstd-skippable-frame", func(t *testing.T) {
		data := load(t, "zstd-skippable-frame", id)
		r, size := bytes.NewReader(data), int64(len(data))
		frames, _, err := Walk(r, size)
		sameAsBase(t, frames, 2)
		var ferr *Error
		if !errors.Is(err, ErrCorrupt) || !errors.Is(err, ErrMagic) || errors.Is(err, ErrChecksum) || !errors.As(err, &ferr) || ferr.Offset != 796 ||
			err.Error() != "invalid frame magic at byte 796" || ferr.Detail() != err.Error() {
			t.Fatalf("Walk error = %v", err)
		}
		// From the tail the file looks fine: the last frame is intact.
		last, err := LastFrame(r, size, LastOptions{Decoder: dec})
		if err != nil || last.Frame.Offset != base[8].Start+8 || last.Frame.End() != size {
			t.Fatalf("LastFrame = %+v, %v", last, err)
		}
	})

	t.Run("variant-zstd-cli-frames-with-content-size", func(t *testing.T) {
		data := load(t, "variant-zstd-cli-frames-with-content-size", id)
		r, size := bytes.NewReader(data), int64(len(data))
		frames, torn, err := Walk(r, size)
		if err != nil || torn != (Torn{}) || len(frames) != len(base) {
			t.Fatalf("Walk: %d frames, torn %+v, err %v", len(frames), torn, err)
		}
		contents := decodeFrames(t, dec, data, frames)
		for i, f := range frames {
			if !f.SingleSegment || !f.HasChecksum || f.ContentSize != int64(len(contents[i])) {
				t.Errorf("frame %d: %+v, content %d bytes", i, f, len(contents[i]))
			}
		}
		if !bytes.Equal(bytes.Join(contents, nil), plain) {
			t.Error("decoded content differs from the plain log")
		}
		last, err := LastFrame(r, size, LastOptions{Decoder: dec})
		if err != nil || last != (Last{Frame: frames[len(frames)-1]}) {
			t.Fatalf("LastFrame = %+v, %v", last, err)
		}
	})

	t.Run("zstd-header-frame-not-single-line", func(t *testing.T) {
		// Structurally valid; the single-line rule belongs to the JSONL layer.
		data := load(t, "zstd-header-frame-not-single-line", id)
		frames, torn, err := Walk(bytes.NewReader(data), int64(len(data)))
		if err != nil || torn != (Torn{}) || len(frames) != len(base)-1 {
			t.Fatalf("Walk: %d frames, torn %+v, err %v", len(frames), torn, err)
		}
		if got := bytes.Join(decodeFrames(t, dec, data, frames), nil); !bytes.Equal(got, plain) {
			t.Error("decoded content differs from the plain log")
		}
	})

	t.Run("zstd-empty-file", func(t *testing.T) {
		data := load(t, "zstd-empty-file", "session-c3d4e5f6-a7b8-4c9d-8e0f-1a2b3c4d5e6f")
		if len(data) != 0 {
			t.Fatalf("fixture is %d bytes", len(data))
		}
		frames, torn, err := Walk(bytes.NewReader(data), 0)
		if len(frames) != 0 || torn != (Torn{}) || err != nil {
			t.Fatalf("Walk = %v, %+v, %v", frames, torn, err)
		}
		last, err := LastFrame(bytes.NewReader(data), 0, LastOptions{Decoder: dec})
		if !errors.Is(err, ErrNoFrame) || last != (Last{}) {
			t.Fatalf("LastFrame = %+v, %v", last, err)
		}
	})
}
