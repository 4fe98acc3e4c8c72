package inspect

import (
	"io"
	"testing"

	"github.com/dshctl/dshctl/internal/seam"
)

// manyEvents repeats a real log (chunks, a 300 KB tool result, three turns)
// n times with contiguous seqs.
func manyEvents(b *testing.B, n int) ([]seam.Event, int64) {
	one := fixtureEvents(b, "session-4f1c2a9e-8b3d-4e6f-a1c2-7d9e0b1f2a3c")
	var events []seam.Event
	var size int64
	for range n {
		events = append(events, one...)
	}
	events = renumber(events)
	for i := range events {
		size += int64(len(events[i].Data))
	}
	return events, size
}

func BenchmarkTranscript(b *testing.B) {
	events, size := manyEvents(b, 10)
	b.SetBytes(size)
	for b.Loop() {
		tr := NewTranscript(io.Discard, TranscriptOptions{Width: 120, Color: true})
		for i := range events {
			if err := tr.Render(&events[i]); err != nil {
				b.Fatal(err)
			}
		}
	}
}

func BenchmarkFilter(b *testing.B) {
	events, _ := manyEvents(b, 100)
	for _, c := range []struct {
		name string
		o    FilterOptions
	}{
		{"glob", FilterOptions{Types: []string{"tool/*", "turn/*"}}},
		{"turn", FilterOptions{Turn: 2, HasTurn: true}}, // matches turn 2 of every copy: never done
		{"range", FilterOptions{From: 1000, To: 9000, HasTo: true}},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportMetric(float64(len(events)), "events/op")
			for b.Loop() {
				f, err := NewFilter(c.o)
				if err != nil {
					b.Fatal(err)
				}
				n := 0
				for i := range events {
					if f.Match(&events[i]) {
						n++
					}
				}
				if n == 0 {
					b.Fatal("nothing matched")
				}
			}
		})
	}
}

func BenchmarkStats(b *testing.B) {
	events, size := manyEvents(b, 10)
	b.SetBytes(size)
	for b.Loop() {
		c := newStatsCollector(0)
		for i := range events {
			c.Observe(&events[i])
		}
	}
}
