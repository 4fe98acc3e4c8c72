package reconcile

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// TestRunTracesStopsWithinATrace: a replay honours its context inside one
// long trace, not only between traces (#24 item 7: replay ignored SIGINT).
func TestRunTracesStopsWithinATrace(t *testing.T) {
	var sb strings.Builder
	sb.WriteString(`{"k":"ws","ev":{"type":"tab-created","tabId":"t1","id":"t1"}}` + "\n")
	sb.WriteString(`{"k":"ws","ev":{"type":"turn-start","tabId":"t1","turnId":"a"}}` + "\n")
	for i := range 40000 {
		fmt.Fprintf(&sb, `{"k":"ws","ev":{"type":"message-queued","tabId":"t1","messageId":"q%d","message":"m%d"}}`+"\n", i, i)
	}
	tr, err := DecodeTrace(strings.NewReader(sb.String()), "queued")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	err = RunTraces(ctx, []*Trace{tr}, Options{Policy: Legacy}, 1, func(int, Result) error { return nil })
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("RunTraces: %v, want the context's error", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("stopped %v after the context was done", d)
	}
}

// TestMain checks the machine's id indexes against a scan on every lookup
// in the tests (not in benchmarks).
func TestMain(m *testing.M) {
	flag.Parse()
	checkIndexes = flag.Lookup("test.bench").Value.String() == ""
	os.Exit(m.Run())
}
