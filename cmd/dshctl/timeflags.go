package main

import (
	"time"

	"github.com/dshctl/dshctl/internal/termui"
	"github.com/dshctl/dshctl/internal/timespec"
	"github.com/spf13/pflag"
)

// timeFlags are --since and --until, which list, cat, grep and export
// read alike (timespec.Parse).
type timeFlags struct{ since, until string }

// timeForms are examples of the times the flags take, for their help.
const timeForms = " (2026-12-01, 2026-12-01T13:00:00Z, 13:00, 2h, 3d, yesterday, …)"

// add defines the flags on f: only what is at or after --since (since
// says what: "events", "sessions updated") and at or before --until.
func (t *timeFlags) add(f *pflag.FlagSet, since, until string) {
	f.StringVar(&t.since, "since", "", "only "+since+" at or after `TIME`"+timeForms)
	f.StringVar(&t.until, "until", "", "only "+until+" at or before `TIME`")
}

// parse reads the flags relative to e's clock, in local time; a bad time
// is a usage error.
func (t *timeFlags) parse(e *env) (timespec.Range, error) {
	r, err := timespec.ParseRange(t.since, t.until, e.now(), time.Local)
	if err != nil {
		return r, termui.Usage(err)
	}
	return r, nil
}
