package main

import (
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
)

// progressDelay is how long work runs before a bar appears: short runs
// print nothing, so a bar never flashes.
const progressDelay = time.Second

// progress is a bar on stderr for long work. It shows only when stderr is a
// terminal and never in JSON mode, so scripts and pipes see nothing of it.
// It is safe for concurrent use.
type progress struct {
	mu      sync.Mutex
	e       *env
	what    string
	total   int
	done    int
	start   time.Time
	bar     *progressbar.ProgressBar
	enabled bool
}

// newProgress returns a progress bar for total items.
func newProgress(e *env, format, what string, total int) *progress {
	return &progress{
		e: e, what: what, total: total, start: e.now(),
		enabled: e.stderrTTY && format != formatJSON && format != formatJSONL && total > 1,
	}
}

// add records n more items done.
func (p *progress) add(n int) {
	if !p.enabled {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done += n
	if p.bar == nil {
		if p.e.now().Sub(p.start) < progressDelay {
			return
		}
		p.bar = progressbar.NewOptions(p.total,
			progressbar.OptionSetWriter(p.e.stderr),
			progressbar.OptionSetDescription(p.what),
			progressbar.OptionShowCount(),
			progressbar.OptionSetWidth(30),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionClearOnFinish(),
		)
		p.bar.Set(p.done)
		return
	}
	p.bar.Add(n)
}

// finish clears the bar, if one was shown.
func (p *progress) finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar != nil {
		p.bar.Finish()
	}
}
