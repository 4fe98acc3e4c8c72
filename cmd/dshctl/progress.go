package main

import (
	"time"

	"github.com/schollz/progressbar/v3"
)

// progress is a bar on stderr for long work. It shows only when stderr is a
// terminal and never in JSON mode, so scripts and pipes see nothing of it.
type progress struct {
	bar *progressbar.ProgressBar
}

// newProgress returns a progress bar for total items, or a no-op one.
func newProgress(e *env, format, what string, total int) *progress {
	if !e.stderrTTY || format == formatJSON || format == formatJSONL || total < 2 {
		return &progress{}
	}
	return &progress{bar: progressbar.NewOptions(total,
		progressbar.OptionSetWriter(e.stderr),
		progressbar.OptionSetDescription(what),
		progressbar.OptionShowCount(),
		progressbar.OptionSetWidth(30),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionSetRenderBlankState(false),
		progressbar.OptionClearOnFinish(),
	)}
}

// add advances the bar by n items.
func (p *progress) add(n int) {
	if p.bar != nil {
		p.bar.Add(n)
	}
}

// done clears the bar.
func (p *progress) done() {
	if p.bar != nil {
		p.bar.Finish()
	}
}
