package jsonl

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/dshctl/dshctl/internal/verify"
)

// BenchmarkVerifyLog checks one log with verify's rules: the fixture's main
// session, or the session "bench" of the root $DSHCTL_BENCH_ROOT (see
// scripts/genlog -batches dsh).
func BenchmarkVerifyLog(b *testing.B) {
	root, id := filepath.Join(fixturesDir(b), "dsh-0.1.0", "jsonl-zstd"), mainID
	if r := os.Getenv("DSHCTL_BENCH_ROOT"); r != "" {
		root, id = r, "bench"
	}
	s, _ := openStore(b, root, Options{})
	ctx := context.Background()
	var size int64
	for b.Loop() {
		c := verify.NewLogCheck()
		sum, err := s.VerifyLog(ctx, id, c)
		if err != nil {
			b.Fatal(err)
		}
		if res := c.Result(); len(res.Findings()) > 0 {
			b.Fatalf("findings: %+v", res.Findings())
		}
		size = sum.Size
	}
	b.SetBytes(size)
}
