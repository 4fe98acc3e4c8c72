package jsonl

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/dshctl/dshctl/internal/seam"
)

// BenchmarkAppend measures durable appends of a 10-event batch through a
// write handle (validation, one zstd frame or the lines, write, fsync), next
// to the floor of the same number of bytes written and fsynced with no
// format work at all, in the same run.
func BenchmarkAppend(b *testing.B) {
	ctx := context.Background()
	const batch = 10
	for _, enc := range []Encoding{Zstd, None} {
		b.Run(string(enc), func(b *testing.B) {
			s, err := Open(b.TempDir(), Options{Compression: enc, BackupDir: b.TempDir()})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			no := false
			h, err := s.Create(ctx, seam.Header{Version: seam.MaxVersion, ID: "bench", CreatedAt: 1, Cwd: "/bench", IsSeeded: &no}, seam.CreateOptions{})
			if err != nil {
				b.Fatal(err)
			}
			defer h.Close()
			events := make([]seam.Event, batch)
			var next int64
			b.ResetTimer()
			for range b.N {
				for k := range events {
					events[k] = seam.Event{Type: "session/title", Seq: next, Time: 1785400000000 + next,
						Data: fmt.Appendf(nil, `{"title":"event %d of a durable batch, with some text to compress"}`, next)}
					next++
				}
				if err := h.Append(ctx, events); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*batch)/b.Elapsed().Seconds(), "events/s")
		})
	}
	b.Run("floor-write-fsync", func(b *testing.B) {
		f, err := os.OpenFile(filepath.Join(b.TempDir(), "floor"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		line := []byte(`{"type":"session/title","seq":0,"time":1785400000000,"data":{"title":"event 0 of a durable batch, with some text to compress"}}` + "\n")
		var buf []byte
		for range batch {
			buf = append(buf, line...)
		}
		b.ResetTimer()
		for range b.N {
			if _, err := f.Write(buf); err != nil {
				b.Fatal(err)
			}
			if err := f.Sync(); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N*batch)/b.Elapsed().Seconds(), "events/s")
	})
}
