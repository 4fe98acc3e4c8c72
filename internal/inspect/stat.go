package inspect

import (
	"context"
	"errors"

	"github.com/dshctl/dshctl/internal/seam"
)

// StatReport is what `stat` shows about one session: what list shows, and
// what only one session's worth of reading gives.
type StatReport struct {
	Session
	// LockHeld says another process holds the session's write lock, for
	// backends that can tell (seam.LockProber).
	LockHeld bool
	// Inherited is the number of events copied from a parent session.
	Inherited int64
	// Exact holds the figures of a full scan, with StatOptions.Exact.
	Exact *Stats
}

// StatOptions tune Stat.
type StatOptions struct {
	// Exact adds a full scan, which also settles what the bounded reads of
	// the head and tail may leave approximate.
	Exact bool
}

// Stat reports on session id of svc from one read handle: its snapshot and
// the Meta proven from the head and tail of its log (or, with Exact, from a
// full scan), so the numbers describe one state of the log.
//
// A session dsh would refuse is still reported as far as it can be read,
// with State StateError, and Stat returns the reason too: a log holding
// events of types its format does not know (when svc serves them, see
// jsonl.Options.AllowUnknownTypes) is an *UnknownTypesError; a log whose
// head or tail cannot be read, the read's error. When the session cannot
// be opened at all, the report holds the snapshot Stat gives, if any (a
// backend may give the location of a log it cannot read), else it is nil.
func Stat(ctx context.Context, svc seam.Service, id string, o StatOptions) (*StatReport, error) {
	h, err := svc.Open(ctx, id, seam.Read)
	if err != nil {
		snap, serr := svc.Stat(ctx, id)
		switch {
		case serr == nil:
			return &StatReport{Session: newSession(snap, true, nil, err)}, err
		case snap.Location.Path != "" && !errors.Is(serr, seam.ErrNotFound):
			return &StatReport{Session: newSession(snap, false, nil, serr)}, serr
		}
		return nil, serr
	}
	defer h.Close()
	snap, err := h.Snapshot(ctx)
	if err != nil {
		return nil, err
	}
	r := &StatReport{Inherited: h.InheritedEventCount()}
	if p, ok := svc.(seam.LockProber); ok {
		if r.LockHeld, err = p.WriterActive(ctx, id); err != nil {
			return nil, err
		}
	}
	u := newUnknownTypes(snap.Header.Version)
	var meta Meta
	if o.Exact {
		var st Stats
		st, err = ExactStats(ctx, u.watch(h))
		if err == nil {
			r.Exact, meta = &st, st.Meta(snap.Header.CreatedAt)
		}
	} else {
		meta, err = ReadMeta(ctx, u.watch(h), MetaOptions{})
	}
	if err != nil {
		r.Session = newSession(snap, true, nil, err)
		return r, err
	}
	r.Session = newSession(snap, true, &meta, u.err(snap, !o.Exact))
	return r, r.Err
}
