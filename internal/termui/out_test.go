package termui

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// TestBar: a bar appears only once its work is sized and a second has
// passed, for people only; Track turns running totals into steps.
func TestBar(t *testing.T) {
	clock := time.Unix(1785331618, 0)
	now := func() time.Time { clock = clock.Add(700 * time.Millisecond); return clock }
	var stderr bytes.Buffer
	o := Out{Stderr: &stderr, ErrTTY: true, Now: now, Format: FormatTable}

	b := o.NewBar("exporting")
	b.Finish() // nothing made yet: nothing to do
	for _, done := range []int64{0, 10, 50, 90} {
		b.Track(done, 90)
	}
	b.Finish()
	if !strings.Contains(stderr.String(), "exporting") || !strings.Contains(stderr.String(), "/90)") {
		t.Fatalf("no bar: %q", stderr.String())
	}

	stderr.Reset()
	step := b.Start(3)
	step()
	b.Step()
	b.Step()
	b.Finish()
	if !strings.Contains(stderr.String(), "/3)") {
		t.Errorf("started bar: %q", stderr.String())
	}

	for _, o := range []Out{{Stderr: &stderr, Now: now}, {Stderr: &stderr, ErrTTY: true, Now: now, Format: FormatJSONL}} {
		stderr.Reset()
		b := o.NewBar("x")
		step := b.Start(5)
		for range 5 {
			step()
		}
		b.Finish()
		if stderr.Len() != 0 {
			t.Errorf("%+v: a bar for scripts: %q", o, stderr.String())
		}
	}
}
