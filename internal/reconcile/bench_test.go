package reconcile

import "testing"

// BenchmarkMachine measures records per second through the machine and the
// checker (Run, deferral replay included), on generated traces.
func BenchmarkMachine(b *testing.B) {
	traces := make([]*Trace, 64)
	events := 0
	for i := range traces {
		traces[i] = Generate(99, i, Membership)
		events += len(traces[i].Records)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, tr := range traces {
			Run(tr, Options{})
		}
	}
	b.ReportMetric(float64(events)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkGenerate measures generated traces per second.
func BenchmarkGenerate(b *testing.B) {
	for i := 0; i < b.N; i++ {
		Generate(99, i, Membership)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "traces/s")
}
