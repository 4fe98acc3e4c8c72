package export

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/dshctl/dshctl/internal/inspect"
	"github.com/dshctl/dshctl/internal/seam"
)

// Options configure an export.
type Options struct {
	// NoSubagents leaves the descendant sessions out.
	NoSubagents bool
	// Progress, when set, is called with written 0 and the number of
	// events to write before the first one (total, from the stores'
	// snapshots: a log that grows meanwhile gives more), then as events
	// are written. It is called from the exporting goroutine only.
	Progress func(written, total int64)
}

// Entry is one log in an export.
type Entry struct {
	// ID is the session the log belongs to.
	ID string `json:"id"`
	// Name is the entry's path inside the ZIP.
	Name    string `json:"name"`
	Version int    `json:"version"`
	Events  int64  `json:"events"`
	// Unsupported is set when the log holds event types its format does
	// not know and that are not ignorable (a plugin's): it is exported
	// whole, but dsh refuses it unless the plugin registers them.
	Unsupported *inspect.UnknownTypesError `json:"-"`
}

// Session writes the ZIP export of session id of svc to w: its canonical
// log, then, unless opts.NoSubagents, the canonical log of each of its
// descendants (see Descendants) under subagents/. It returns the entries
// written. Every backend gives the same bytes for the same logical
// sessions: the ZIP is made from what read handles serve and List reports,
// never from stored bytes.
func Session(ctx context.Context, svc seam.Service, id string, w io.Writer, opts Options) ([]Entry, error) {
	var subagents []string
	var total int64
	switch {
	case !opts.NoSubagents:
		entries, err := svc.List(ctx)
		if err != nil {
			return nil, err
		}
		subagents = Descendants(entries, id)
		counts := make(map[string]int64, len(entries))
		for i := range entries {
			counts[entries[i].Snapshot.Header.ID] = entries[i].Snapshot.EventCount
		}
		total = counts[id]
		for _, sub := range subagents {
			total += counts[sub]
		}
	case opts.Progress != nil:
		snap, err := svc.Stat(ctx, id)
		if err != nil {
			return nil, err
		}
		total = snap.EventCount
	}
	var progress func(int64)
	if opts.Progress != nil {
		var written int64
		progress = func(n int64) {
			written += n
			opts.Progress(written, max(total, written))
		}
		opts.Progress(0, total)
	}
	return writeZip(ctx, svc, id, subagents, w, progress)
}

// writeZip writes the ZIP of session id of svc to w with the sessions
// subagents, in that order, under subagents/<SafeName(id)>/ (made unique).
// progress, when set, is called with the events written since its last
// call.
func writeZip(ctx context.Context, svc seam.Service, id string, subagents []string, w io.Writer, progress func(int64)) ([]Entry, error) {
	a := newArchive(w)
	names := newNamer()
	out := make([]Entry, 0, 1+len(subagents))
	e, err := writeLog(ctx, a, svc, id, "", progress)
	if err != nil {
		return nil, err
	}
	out = append(out, e)
	for _, sub := range subagents {
		e, err := writeLog(ctx, a, svc, sub, subagentsDir+names.name(sub)+"/", progress)
		if err != nil {
			return out, &SubagentError{Parent: id, ID: sub, Err: err}
		}
		out = append(out, e)
	}
	return out, a.close()
}

// writeLog adds the canonical log of session id to a, in folder dir. The
// log is what `cat` prints (the same writer, Canonical, fed by the same
// inspect.Stream), header line included (Header).
func writeLog(ctx context.Context, a *archive, svc seam.Service, id, dir string, progress func(int64)) (Entry, error) {
	h, err := svc.Open(ctx, id, seam.Read)
	if err != nil {
		return Entry{}, err
	}
	defer h.Close()
	hdr := h.Header()
	e := Entry{ID: id, Name: dir + LogName(hdr.Version), Version: hdr.Version}
	zw, err := a.create(e.Name, time.UnixMilli(hdr.CreatedAt))
	if err != nil {
		return e, err
	}
	p := newPipe(zw)
	sink := &logSink{Canonical: NewCanonical(p), progress: progress}
	_, err = inspect.Stream(ctx, h, inspect.StreamOptions{}, sink)
	e.Events = sink.events
	sink.report()
	// A plugin's event types, unknown to the format: the log is exported
	// whole, as cat shows it, and the entry says why dsh would refuse it.
	if ut := (*inspect.UnknownTypesError)(nil); errors.As(err, &ut) {
		e.Unsupported, err = ut, nil
	}
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		p.abort()
		return e, err
	}
	return e, p.Close()
}

// logSink is the canonical writer counting the events it writes.
type logSink struct {
	*Canonical
	progress         func(int64)
	events, reported int64
}

// progressEvery is how many events pass between two progress reports.
const progressEvery = 4096

func (s *logSink) Event(e *seam.Event) error {
	s.events++
	if s.events-s.reported >= progressEvery {
		s.report()
	}
	return s.Canonical.Event(e)
}

// report gives progress the events written since the last report.
func (s *logSink) report() {
	if s.progress != nil && s.events > s.reported {
		s.progress(s.events - s.reported)
	}
	s.reported = s.events
}

// SubagentError is the failure to export a session that descends from
// the exported one.
type SubagentError struct {
	Parent, ID string
	Err        error
}

func (e *SubagentError) Error() string { return fmt.Sprintf("subagent of %q: %v", e.Parent, e.Err) }
func (e *SubagentError) Unwrap() error { return e.Err }

// Header returns h as the header line of an export writes it: every field
// of the stored header, in the shape of its format, so that the log put
// back in a store is read as it was. A v0 or v1 header keeps seedLength
// (when stored) and has no isSeeded; a v2+ header has isSeeded and no
// seedLength. delegationDepth is always there (0 when the stored header
// has none), as dsh's JSONL readers require it. Every backend stores the
// same header for the same session, so the line is the same whichever
// holds it.
func Header(h seam.Header) seam.Header {
	if h.Version < 2 {
		h.IsSeeded = nil
	} else {
		seeded := h.Seeded()
		h.SeedLength, h.IsSeeded = nil, &seeded
	}
	return h
}
