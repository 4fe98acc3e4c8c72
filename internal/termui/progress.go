package termui

import (
	"io"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
)

// progressDelay is how long work runs before a bar appears: short runs
// print nothing, so a bar never flashes.
const progressDelay = time.Second

// Progress is a bar on stderr for long work. It shows only when stderr is
// a terminal and the output is not JSON, so scripts and pipes see nothing
// of it, and only after a second of work. It is safe for concurrent use.
type Progress struct {
	mu      sync.Mutex
	w       io.Writer
	now     func() time.Time
	what    string
	total   int
	done    int
	start   time.Time
	bar     *progressbar.ProgressBar
	enabled bool
}

// NewProgress returns a progress bar for total items, written to stderr
// when show is set (stderr is a terminal, and the output is not JSON).
func NewProgress(stderr io.Writer, show bool, now func() time.Time, what string, total int) *Progress {
	return &Progress{w: stderr, now: now, what: what, total: total, start: now(), enabled: show && total > 1}
}

// Add records n more items done. A nil Progress does nothing, so a bar
// made only once the work's size is known needs no checks.
func (p *Progress) Add(n int) {
	if p == nil || !p.enabled {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done += n
	if p.bar == nil {
		if p.now().Sub(p.start) < progressDelay {
			return
		}
		p.bar = progressbar.NewOptions(p.total,
			progressbar.OptionSetWriter(p.w),
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

// Finish clears the bar, if one was shown.
func (p *Progress) Finish() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar != nil {
		p.bar.Finish()
	}
}
