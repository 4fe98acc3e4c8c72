package inspect

import (
	"context"

	"github.com/dshctl/dshctl/internal/seam"
)

// StatReport is what `stat` shows about one session, in its JSON shape.
type StatReport struct {
	ID           string        `json:"id"`
	Header       seam.Header   `json:"header"`
	Location     seam.Location `json:"location"`
	SizeBytes    int64         `json:"sizeBytes"`
	EventCount   int64         `json:"eventCount"`
	Revision     string        `json:"revision"`
	CreatedAt    *Time         `json:"createdAt"`
	UpdatedAt    *Time         `json:"updatedAt"`
	LastPromptAt *Time         `json:"lastPromptAt"`
	Blank        bool          `json:"blank"`
	OpenTurn     *OpenTurn     `json:"openTurn"`
	Approximate  bool          `json:"approximate"`
	// LockHeld says another process holds the session's write lock, for
	// backends that can tell (seam.LockProber).
	LockHeld  bool         `json:"lockHeld"`
	Inherited int64        `json:"inheritedEventCount"`
	Exact     *ExactReport `json:"exact,omitempty"`
}

// ExactReport is what a full scan adds to a StatReport.
type ExactReport struct {
	ByType    map[string]int64 `json:"byType"`
	Turns     int64            `json:"turns"`
	TurnEnds  map[string]int64 `json:"turnEnds"`
	FirstTime *Time            `json:"firstTime"`
	LastTime  *Time            `json:"lastTime"`
}

// StatOptions tune Stat.
type StatOptions struct {
	// Exact adds a full scan, which also settles what the bounded reads of
	// the head and tail may leave approximate.
	Exact bool
}

// Stat reports on session id of svc from one read handle: its snapshot and
// the Meta proven from the head and tail of its log (or, with Exact, from a
// full scan), so the numbers describe one state of the log. A session that
// cannot be opened is reported with Stat's error when Stat fails too (the
// metadata cannot be read at all), else with the open's.
func Stat(ctx context.Context, svc seam.Service, id string, o StatOptions) (*StatReport, error) {
	h, err := svc.Open(ctx, id, seam.Read)
	if err != nil {
		if _, serr := svc.Stat(ctx, id); serr != nil {
			return nil, serr
		}
		return nil, err
	}
	defer h.Close()
	snap, err := h.Snapshot(ctx)
	if err != nil {
		return nil, err
	}
	var meta Meta
	var st Stats
	if o.Exact {
		if st, err = ExactStats(ctx, h); err != nil {
			return nil, err
		}
		meta = st.Meta(snap.Header.CreatedAt)
	} else if meta, err = ReadMeta(ctx, h, MetaOptions{}); err != nil {
		return nil, err
	}
	r := &StatReport{
		ID:          snap.Header.ID,
		Header:      snap.Header,
		Location:    snap.Location,
		SizeBytes:   snap.SizeBytes,
		EventCount:  snap.EventCount,
		Revision:    snap.Revision,
		CreatedAt:   TimeOf(snap.Header.CreatedAt),
		UpdatedAt:   TimeOf(meta.UpdatedAt),
		Blank:       meta.Blank,
		OpenTurn:    meta.OpenTurn,
		Inherited:   h.InheritedEventCount(),
		Approximate: meta.Approximate,
	}
	if meta.LastPromptAt > 0 {
		r.LastPromptAt = TimeOf(meta.LastPromptAt)
	}
	if p, ok := svc.(seam.LockProber); ok {
		if r.LockHeld, err = p.WriterActive(ctx, id); err != nil {
			return nil, err
		}
	}
	if o.Exact {
		r.Exact = &ExactReport{ByType: st.ByType, Turns: st.Turns, TurnEnds: st.TurnEnds}
		if st.Events > 0 {
			r.Exact.FirstTime, r.Exact.LastTime = TimeOf(st.FirstTime), TimeOf(st.LastTime)
		}
	}
	return r, nil
}
