package verify

import (
	"context"
	"errors"
	"fmt"

	"github.com/dshctl/dshctl/internal/seam"
)

// BatchCheck holds the events a batch appends to verify's rules (LogCheck)
// as they will stand in the log: after the log's open turn, so that what
// an append writes, verify accepts. It reads the open turn once (from the
// last turn/start, when no turn/end follows it), then takes the batch one
// event at a time: memory is the open turn's tool calls, not the batch.
type BatchCheck struct {
	c       *LogCheck
	seen    int // findings made so far (about the log itself, before the batch)
	dropped int // and those past the cap
}

// BatchRuleError is an event of a batch that breaks a rule of verify.
type BatchRuleError struct {
	// Code is the finding's code ("turn-bracketing", "record-rule", ...).
	Code, Message string
}

func (e *BatchRuleError) Error() string { return e.Message + " (verify: " + e.Code + ")" }

// NewBatchCheck returns a BatchCheck for a batch appended to h's log.
// budget bounds the reading of the open turn (seam.ScanOptions.MaxBytes,
// 0 for none): past it, as after damage, the turn rules wait for the
// batch's first turn/start, so a hostile tail costs no more than that; a
// budget below 0 reads nothing.
func NewBatchCheck(ctx context.Context, h seam.Handle, budget int64) (*BatchCheck, error) {
	c := NewLogCheck()
	c.Header(h.Header(), true)
	c.st.resync = true // the first record read sets the seq
	if budget < 0 {
		c.st.brk.off = true
		return &BatchCheck{c: c}, nil
	}
	from := int64(-1)
	for e, err := range h.Scan(ctx, seam.ScanOptions{Reverse: true, MaxBytes: budget}) {
		if errors.Is(err, seam.ErrScanBudget) {
			c.st.brk.off = true
			return &BatchCheck{c: c}, nil
		}
		if err != nil {
			return nil, err
		}
		if e.Type == typeTurnEnd {
			break
		}
		if e.Type == typeTurnStart {
			from = e.Seq
			break
		}
	}
	if from >= 0 {
		for e, err := range h.Scan(ctx, seam.ScanOptions{From: from, MaxBytes: budget}) {
			if errors.Is(err, seam.ErrScanBudget) {
				c = NewLogCheck()
				c.Header(h.Header(), true)
				c.st.resync, c.st.brk.off = true, true
				return &BatchCheck{c: c}, nil
			}
			if err != nil {
				return nil, err
			}
			c.Record(&seam.Record{Event: e}, seam.NoPos)
		}
	}
	return &BatchCheck{c: c, seen: len(c.found), dropped: c.st.dropped}, nil
}

// Add checks the next event of the batch; it fails with a *BatchRuleError
// when the event breaks a rule of verify (a finding of a class above a
// note), e.g. a turn/start while a turn is open.
func (b *BatchCheck) Add(e *seam.Event) error {
	c := b.c
	if c.st.resync {
		c.st.next, c.st.resync = e.Seq, false
	}
	c.Record(&seam.Record{Event: *e}, seam.Pos{Offset: -1, Frame: -1, Line: -1, Seq: e.Seq})
	for ; b.seen < len(c.found); b.seen++ {
		if f := c.found[b.seen]; f.Class > seam.ClassNote {
			return &BatchRuleError{Code: f.Code, Message: f.Message}
		}
	}
	if c.st.dropped > b.dropped {
		return &BatchRuleError{Code: "more-findings", Message: fmt.Sprintf("seq %d breaks a rule of verify", e.Seq)}
	}
	return nil
}

// Closers returns the closers of the turn the log and the batch so far
// leave open (see OpenTurnTracker.Closers).
func (b *BatchCheck) Closers() []seam.Event { return b.c.st.open.Closers() }
