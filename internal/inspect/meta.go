package inspect

import (
	"bytes"
	"context"
	"errors"
	"slices"

	"github.com/dshctl/dshctl/internal/seam"
)

// DefaultScanBudget is the number of physical bytes each scan of ReadMeta
// may read: enough for the head and tail of a real session, small enough
// that listing thousands of sessions stays fast.
const DefaultScanBudget = 256 << 10

// MetaOptions tune ReadMeta.
type MetaOptions struct {
	// MaxBytes bounds each scan: 0 means DefaultScanBudget, a negative value
	// means no bound.
	MaxBytes int64
}

// Meta is what `list` and `stat` show about a session's activity, proven
// from a bounded read of the head and tail of its log. Past the bound every
// field degrades toward showing the session: never blank, updated at
// creation.
type Meta struct {
	CreatedAt int64 `json:"createdAt"`
	// Blank is set only when the log is proven to hold no turn/start.
	Blank bool `json:"blank"`
	// BlankKnown is false when neither scan settled the question.
	BlankKnown bool `json:"blankKnown"`
	// LastPromptAt is the time of the last user/message whose source kind is
	// "user", 0 when there is none or it was not found.
	LastPromptAt    int64 `json:"lastPromptAt,omitempty"`
	LastPromptKnown bool  `json:"lastPromptKnown"`
	// UpdatedAt is the later of CreatedAt and LastPromptAt, or CreatedAt when
	// the last prompt is not known. Never the file's mtime: opening a
	// session writes to it without any human activity.
	UpdatedAt int64 `json:"updatedAt"`
	// OpenTurn is the open tail turn, nil when there is none or it is not
	// known.
	OpenTurn      *OpenTurn `json:"openTurn,omitempty"`
	OpenTurnKnown bool      `json:"openTurnKnown"`
	// Approximate is set when a scan ran out of budget, so some field is not
	// known.
	Approximate bool `json:"approximate"`
}

// ReadMeta computes h's Meta with at most two bounded scans. A forward scan
// stops at the first turn/start (when it reads the whole log instead, the
// session is blank and everything else is known too). Otherwise a reverse
// scan walks from the tail until it has both the last human prompt and the
// last turn boundary, keeping the events of an open turn to replay them in
// order.
//
// The forward scan comes first even though the reverse scan usually meets a
// turn/start too: only reading from the head proves that turn/start is
// committed. A bad record before it starts an uncommitted tail (dsh then
// sees a blank session) or makes the log corrupt, which the forward scan
// reports and a scan from the tail cannot see.
//
// A Scan error other than seam.ErrScanBudget is returned with the
// conservative Meta built so far.
func ReadMeta(ctx context.Context, h seam.Handle, opts MetaOptions) (Meta, error) {
	budget := opts.MaxBytes
	switch {
	case budget == 0:
		budget = DefaultScanBudget
	case budget < 0:
		budget = 0
	}
	m := Meta{CreatedAt: h.Header().CreatedAt}
	err := m.scanHead(ctx, h, budget)
	if err == nil && !m.Blank {
		err = m.scanTail(ctx, h, budget)
	}
	m.settle()
	return m, err
}

// settle derives UpdatedAt and Approximate from the other fields: the one
// place that says what "updated" means.
func (m *Meta) settle() {
	m.UpdatedAt = m.CreatedAt
	if m.LastPromptKnown {
		m.UpdatedAt = max(m.CreatedAt, m.LastPromptAt)
	}
	m.Approximate = !(m.BlankKnown && m.LastPromptKnown && m.OpenTurnKnown)
}

// scanHead reads forward until the first turn/start.
func (m *Meta) scanHead(ctx context.Context, h seam.Handle, budget int64) error {
	var prompt int64
	for e, err := range h.Scan(ctx, seam.ScanOptions{MaxBytes: budget}) {
		if errors.Is(err, seam.ErrScanBudget) {
			return nil
		}
		if err != nil {
			return err
		}
		if e.Type == typeTurnStart {
			m.BlankKnown = true
			return nil
		}
		if isHumanPrompt(&e) {
			prompt = e.Time
		}
	}
	// The whole log was read without a turn/start.
	m.Blank, m.BlankKnown = true, true
	m.LastPromptAt, m.LastPromptKnown = prompt, true
	m.OpenTurnKnown = true
	return nil
}

// scanTail reads backward until it knows the last human prompt and the last
// turn boundary, and has read the record before the last turn/start: the
// reverse scan checks that each record's seqs end where the next one's
// start, so a turn that a second writer appended from a stale next seq
// (its seqs repeating those before it, which dsh refuses) is an error here
// too, not a "done" session.
func (m *Meta) scanTail(ctx context.Context, h seam.Handle, budget int64) error {
	// turn holds the events after the last boundary, newest first, while the
	// boundary is not found; the tracker reads only Type, Seq, Time and Data.
	var turn []seam.Event
	lastStart := int64(-1) // the seq of the last turn/start, once read
	for e, err := range h.Scan(ctx, seam.ScanOptions{Reverse: true, MaxBytes: budget}) {
		if errors.Is(err, seam.ErrScanBudget) {
			return nil
		}
		if err != nil {
			return err
		}
		if !m.LastPromptKnown && isHumanPrompt(&e) {
			m.LastPromptAt, m.LastPromptKnown = e.Time, true
		}
		if !m.OpenTurnKnown {
			e.Data = bytes.Clone(e.Data)
			turn = append(turn, e)
			switch e.Type {
			case typeTurnEnd:
				m.OpenTurnKnown, turn = true, nil
			case typeTurnStart:
				t := NewOpenTurnTracker(h.Header().Version)
				for _, te := range slices.Backward(turn) {
					t.Observe(&te)
				}
				m.OpenTurn, m.OpenTurnKnown, turn = t.OpenTurn(), true, nil
			}
		}
		if e.Type == typeTurnStart {
			m.BlankKnown = true
			if lastStart < 0 {
				lastStart = e.Seq
			}
		}
		if m.LastPromptKnown && m.OpenTurnKnown && m.BlankKnown && lastStart >= 0 && e.Seq < lastStart {
			return nil
		}
	}
	// The whole log was read: what was not found does not exist.
	m.LastPromptKnown, m.OpenTurnKnown = true, true
	if !m.BlankKnown {
		m.Blank, m.BlankKnown = true, true
	}
	return nil
}
