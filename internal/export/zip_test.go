package export

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/dshctl/dshctl/internal/fixture"
)

// corpus returns the events dsh wrote in the fixtures, as one JSONL text:
// real payloads (prompts, code, a 300 KB tool result of file hashes), the
// kind of text an export compresses.
func corpus(tb testing.TB) []byte {
	tb.Helper()
	fx := fixture.Dir(tb)
	a, _ := filepath.Glob(filepath.Join(fx, "dsh-0.1.0", "expected", "jsonl-none", "*.events.jsonl"))
	b, _ := filepath.Glob(filepath.Join(fx, "dsh-v2-v4", "*", "*", "*.jsonl"))
	files := append(a, b...)
	var out []byte
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, b...)
	}
	if len(out) < 100<<10 {
		tb.Fatalf("corpus is only %d bytes", len(out))
	}
	return out
}

// zipOf writes entries name → text in order, writing each text in pieces
// of the given size.
func zipOf(t *testing.T, piece int, names []string, texts map[string][]byte, mod time.Time) []byte {
	t.Helper()
	var buf bytes.Buffer
	a := newArchive(&buf)
	for _, name := range names {
		w, err := a.create(name, mod)
		if err != nil {
			t.Fatal(err)
		}
		p := newPipe(w)
		for text := texts[name]; len(text) > 0; {
			n := min(piece, len(text))
			if _, err := p.Write(text[:n]); err != nil {
				t.Fatal(err)
			}
			text = text[n:]
		}
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestArchiveDeterministic: the bytes depend on the entries alone, not on
// how the text was written, nor on the time zone of the machine.
func TestArchiveDeterministic(t *testing.T) {
	text := corpus(t)
	texts := map[string][]byte{"session.jsonl": text, "subagents/x/session.v4.jsonl": text[:len(text)/3]}
	names := []string{"session.jsonl", "subagents/x/session.v4.jsonl"}
	mod := time.UnixMilli(1785331618180)
	want := zipOf(t, len(text), names, texts, mod)
	for _, piece := range []int{1 << 10, 4093, 64 << 10, blockSize + 1} {
		if got := zipOf(t, piece, names, texts, mod); !bytes.Equal(got, want) {
			t.Fatalf("writes of %d bytes give other bytes", piece)
		}
	}
	if got := zipOf(t, 1<<20, names, texts, mod.In(time.FixedZone("X", 5*3600))); !bytes.Equal(got, want) {
		t.Fatal("the time zone shows in the bytes")
	}

	zr, err := zip.NewReader(bytes.NewReader(want), int64(len(want)))
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range zr.File {
		if f.Name != names[i] || f.Method != zip.Deflate || f.Mode() != entryMode ||
			!f.Modified.Equal(mod.Truncate(time.Second)) || f.NonUTF8 {
			t.Errorf("entry %d: %s method %d mode %v time %v", i, f.Name, f.Method, f.Mode(), f.Modified)
		}
		rc, _ := f.Open()
		got, err := io.ReadAll(rc)
		if err != nil || !bytes.Equal(got, texts[f.Name]) {
			t.Errorf("%s does not read back: %v", f.Name, err)
		}
	}
}

func TestZipTime(t *testing.T) {
	for _, c := range []struct{ in, want time.Time }{
		{time.UnixMilli(0), minZipTime},
		{time.UnixMilli(1785331618180), time.Unix(1785331618, 0).UTC()},
		{time.Unix(1<<40, 0), maxZipTime},
	} {
		if got := zipTime(c.in); !got.Equal(c.want) || got.Location() != time.UTC {
			t.Errorf("zipTime(%v) = %v, want %v UTC", c.in, got, c.want)
		}
	}
}

// BenchmarkDeflate compares the DEFLATE coders at Level on the fixtures'
// events: klauspost/compress (registered as the ZIP compressor) and the
// standard library. It reports the compressed size as a share of the input.
func BenchmarkDeflate(b *testing.B) {
	text := corpus(b)
	for _, c := range []struct {
		name string
		new  func(io.Writer) (io.WriteCloser, error)
	}{
		{"klauspost", newDeflater},
		{"stdlib", func(w io.Writer) (io.WriteCloser, error) { return flate.NewWriter(w, Level) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			var out countWriter
			out.w = io.Discard
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				out.n = 0
				w, err := c.new(&out)
				if err != nil {
					b.Fatal(err)
				}
				w.Write(text)
				w.Close()
			}
			b.ReportMetric(float64(out.n)/float64(len(text))*100, "%size")
		})
	}
}
