package jsonl

import (
	"context"
	"fmt"
	"testing"

	"github.com/dshctl/dshctl/internal/seam"
)

// BenchmarkScan measures a full forward scan (decode and validation of
// every record) in MB/s of log file.
func BenchmarkScan(b *testing.B) {
	ctx := context.Background()
	for _, enc := range []Encoding{None, Zstd} {
		b.Run(string(enc), func(b *testing.B) {
			root, _, events := genLog(b, enc, true, 32<<20)
			s, _ := openStore(b, root, Options{})
			id := fmt.Sprintf("big-%s-true", enc)
			snap, err := s.Stat(ctx, id)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(snap.SizeBytes)
			b.ResetTimer()
			for range b.N {
				h, err := s.Open(ctx, id, seam.Read)
				if err != nil {
					b.Fatal(err)
				}
				var n int64
				for _, err := range h.Scan(ctx, seam.ScanOptions{}) {
					if err != nil {
						b.Fatal(err)
					}
					n++
				}
				h.Close()
				if n != events {
					b.Fatalf("scanned %d events, want %d", n, events)
				}
			}
		})
	}
}

// BenchmarkStat measures Stat on a 32 MB log, and reports the bytes it
// reads.
func BenchmarkStat(b *testing.B) {
	ctx := context.Background()
	for _, enc := range []Encoding{None, Zstd} {
		b.Run(string(enc), func(b *testing.B) {
			root, _, events := genLog(b, enc, true, 32<<20)
			s, tfs := openStore(b, root, Options{})
			id := fmt.Sprintf("big-%s-true", enc)
			tfs.read.Store(0)
			b.ResetTimer()
			for range b.N {
				snap, err := s.Stat(ctx, id)
				if err != nil || snap.EventCount != events {
					b.Fatalf("Stat: %+v %v", snap, err)
				}
			}
			b.ReportMetric(float64(tfs.read.Load())/float64(b.N), "bytes-read/op")
		})
	}
}
