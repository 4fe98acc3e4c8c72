package sessionview

import (
	"fmt"
	"strconv"

	"github.com/dshctl/dshctl/internal/ingest"
	"github.com/dshctl/dshctl/internal/seam"
	"github.com/dshctl/dshctl/internal/termui"
)

// AppendSummary is what append tells people it did: the events and their
// seqs, which of them close an interrupted turn, and the session made.
func AppendSummary(r *ingest.Result) string {
	switch {
	case r.Appended == 0 && r.Created:
		return fmt.Sprintf("created %s (no events)", r.ID)
	case r.Appended == 0:
		return fmt.Sprintf("nothing to append to %s", r.ID)
	}
	verb := "appended"
	if r.Created {
		verb = "created " + r.ID + ";"
	}
	msg := fmt.Sprintf("%s %s, seq %d", verb, termui.Count(r.Appended, "event"), r.FirstSeq)
	if r.Appended > 1 {
		msg += fmt.Sprintf("–%d", r.NextSeq-1)
	}
	switch {
	case r.Closers == r.Appended:
		msg += " (closers of the interrupted turn)"
	case r.Closers == 1:
		msg += " (the last closes the interrupted turn)"
	case r.Closers > 1:
		msg += fmt.Sprintf(" (the last %d close the interrupted turn)", r.Closers)
	}
	if !r.Created {
		msg += " to " + r.ID
	}
	return msg
}

// AppendRow is what append did, for scripts: the session id, the events
// appended, the seq of the first and the next seq, how many of them close
// an interrupted turn, and "created" when the session was made (else "").
func AppendRow(r *ingest.Result) []string {
	created := ""
	if r.Created {
		created = "created"
	}
	return []string{r.ID, strconv.Itoa(r.Appended), strconv.FormatInt(r.FirstSeq, 10), strconv.FormatInt(r.NextSeq, 10),
		strconv.Itoa(r.Closers), created}
}

// RepairNote says what a write removed before appending, and where the
// bytes were saved.
func RepairNote(r seam.Repair) string {
	kept := ""
	if r.Rewritten > 0 {
		kept = fmt.Sprintf(" (the %d bytes of committed records in its frame were written back)", r.Rewritten)
	}
	at := fmt.Sprintf("at byte %d", r.Offset)
	if r.Seq != nil { // a row of a database, which has no byte offset
		at = fmt.Sprintf("(the row at seq %d)", *r.Seq)
	}
	return fmt.Sprintf("removed a %d-byte %s tail %s of %s%s; saved to %s", r.Bytes, r.Kind, at, r.Path, kept, r.Backup)
}
