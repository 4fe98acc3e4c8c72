package reconcile

import (
	"io"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// TestStreamedReplayBoundedMemory: a recorded session of millions of
// records, written into a pipe as it is made, replays while it is decoded
// with a live heap bounded by the window and the client's state, not by
// the records: its peak stays under 24 MiB plus 2 KiB per turn, which the
// model and the checker remember (its messages, its seal, its request;
// ~160 records each here), with the Go memory limit 32 MiB above that.
// $DSHCTL_REPLAY_RECORDS sets the size (CI: 10,000,000; default 1,000,000).
func TestStreamedReplayBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	records := 1_000_000
	if s := os.Getenv("DSHCTL_REPLAY_RECORDS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("DSHCTL_REPLAY_RECORDS=%q", s)
		}
		records = n
	}
	const perTurn = 160 // records of one turn of recordedSession, on average
	turns := records/perTurn + 1
	limit := uint64(24<<20 + 2<<10*turns)
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(int64(limit) + 32<<20))
	pr, pw := io.Pipe()
	written := make(chan error, 1)
	go func() {
		err := writeRecorded(pw, "long session", turns)
		pw.CloseWithError(err)
		written <- err
	}()
	var peak atomic.Uint64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		// The heap marked live by the last collection: what the replay
		// holds, not the garbage a collection has yet to free.
		sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			metrics.Read(sample)
			if v := sample[0].Value.Uint64(); v > peak.Load() {
				peak.Store(v)
			}
		}
	}()
	start := time.Now()
	res := Run(ReadTrace("long session", pr), Options{Policy: Membership})
	close(stop)
	<-sampled
	if err := <-written; err != nil {
		t.Fatal(err)
	}
	if res.Verdict != Pass || res.Events < records*99/100 {
		t.Fatalf("%s after %d events: %+v %v %s", res.Verdict, res.Events, res.First(), res.Warnings, res.Error)
	}
	t.Logf("%d records, %d reconciles in %v; peak live heap %.1f MiB", res.Events, res.Reconciles, time.Since(start), float64(peak.Load())/(1<<20))
	if p := peak.Load(); p > limit {
		t.Fatalf("peak live heap %.1f MiB: more than %.1f MiB", float64(p)/(1<<20), float64(limit)/(1<<20))
	}
}
