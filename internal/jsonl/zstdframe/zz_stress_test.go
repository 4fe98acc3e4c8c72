package zstdframe

import (
	"math/rand/v2"
	"os"
	"testing"
	"time"
)

func TestZZStress(t *testing.T) {
	var seeds [][]byte
	addSeeds(&testing.F{}, func(b []byte) { seeds = append(seeds, b) })
	dec := newTestDecoder(t)
	rng := rand.New(rand.NewPCG(1, 2))
	var worst time.Duration
	deadline := time.Now().Add(20 * time.Second)
	n := 0
	for time.Now().Before(deadline) {
		s := seeds[rng.IntN(len(seeds))]
		d := append([]byte(nil), s...)
		for range 1 + rng.IntN(4) {
			if len(d) == 0 {
				break
			}
			switch rng.IntN(4) {
			case 0:
				d[rng.IntN(len(d))] = byte(rng.Uint32())
			case 1:
				d = d[:rng.IntN(len(d))]
			case 2:
				i := rng.IntN(len(d))
				d = d[i:]
			case 3:
				i, j := rng.IntN(len(d)), rng.IntN(len(d))
				if i > j { i, j = j, i }
				d = append(d[:i:i], append(append([]byte(nil), d[i:j]...), d[i:]...)...)
			}
		}
		st := time.Now()
		checkLastFrame(t, dec, d, int64(rng.IntN(3))*int64(rng.IntN(65536)))
		if e := time.Since(st); e > worst {
			worst = e
			os.WriteFile("/tmp/worst.bin", d, 0o644)
			t.Logf("new worst %v len %d", e, len(d))
		}
		n++
	}
	t.Logf("%d runs, worst %v", n, worst)
}
