package jsonl

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/dshctl/dshctl/internal/inspect"
	"github.com/dshctl/dshctl/internal/seam"
)

// twoWriterLog writes the log two writers leave (issue 20): turn 1, then
// one writer's batch at seq 2, then the other's stale batch from the same
// next seq (a closed turn, seq 2–3), then, when later is set, turns that
// writer went on appending (seq 4 on). Each batch is a zstd frame, or
// lines.
func twoWriterLog(tb testing.TB, enc Encoding, overlap bool, later int) (root string) {
	w := newLogWriter(tb, enc, "race")
	defer w.close()
	turn := func(n int, seq int64) string {
		return fmt.Sprintf(`{"type":"turn/start","seq":%d,"time":%d,"data":{"turn":%d}}`+"\n"+
			`{"type":"turn/end","seq":%d,"time":%d,"data":{"turn":%d,"reason":{"kind":"completed"}}}`+"\n", seq, seq, n, seq+1, seq+1, n)
	}
	w.put([]byte(turn(1, 0)))
	w.put([]byte(`{"type":"session/title","seq":2,"time":2,"data":{"title":"t"}}` + "\n"))
	next := int64(2)
	if !overlap {
		next = 3
	}
	w.put([]byte(turn(2, next)))
	next += 2
	for i := range later {
		w.put([]byte(turn(3+i, next)))
		next += 2
	}
	return w.root
}

// TestWriteOpenRefusesOverlap checks that a write open refuses a log whose
// seqs repeat before its last turn/end (two writers appended from the same
// next seq), which dsh refuses: an append would extend it. The forward read
// from the last turn/end does not see it; the chain check does, also when
// the second writer went on for a few turns, and stat's tail scan (ReadMeta)
// reports it too. The same log without the overlap opens.
func TestWriteOpenRefusesOverlap(t *testing.T) {
	ctx := context.Background()
	for _, enc := range []Encoding{None, Zstd} {
		for _, later := range []int{0, 3} {
			t.Run(fmt.Sprintf("%s/%d later turns", enc, later), func(t *testing.T) {
				s, _ := openStore(t, twoWriterLog(t, enc, true, later), Options{BackupDir: t.TempDir()})
				_, err := s.Open(ctx, "race", seam.Write)
				var oe *seam.OverlapError
				if !errors.Is(err, seam.ErrCorrupt) || !errors.As(err, &oe) || oe.Seq != 2 || oe.Want != 3 {
					t.Fatalf("write open of a log whose seq 2 repeats: %v, want ErrCorrupt with an OverlapError at seq 2", err)
				}
				if !strings.Contains(err.Error(), "seq 2 overlaps: expected 3") {
					t.Errorf("message %q does not name the seq", err)
				}
				r, err := s.Open(ctx, "race", seam.Read)
				if err != nil {
					t.Fatal(err)
				}
				defer r.Close()
				if _, err := inspect.ReadMeta(ctx, r, inspect.MetaOptions{}); later == 0 && !errors.As(err, &oe) {
					t.Errorf("ReadMeta of the log: %v, want the overlap", err)
				}

				s, _ = openStore(t, twoWriterLog(t, enc, false, later), Options{BackupDir: t.TempDir()})
				w, err := s.Open(ctx, "race", seam.Write)
				if err != nil {
					t.Fatalf("write open of the sound log: %v", err)
				}
				w.Close()
			})
		}
	}
}
