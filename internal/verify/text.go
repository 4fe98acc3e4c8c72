package verify

import (
	"fmt"
	"strings"

	"github.com/dshctl/dshctl/internal/seam"
	"github.com/dshctl/dshctl/internal/termui"
)

// TextOptions shape the human form of verify's reports.
type TextOptions struct {
	// Colour marks warnings yellow and errors red (ANSI).
	Colour bool
	// BackupDir is where a dry run says the removed bytes would go.
	BackupDir string
}

// Lines returns the report as verify prints it for people: one line per
// finding, "SESSION: SEVERITY: WHERE: WHAT [CODE]" (a stray entry is named
// by its path), then the sound prefix and what a repair did or would do.
func (r *SessionReport) Lines(o TextOptions) []string {
	name := r.ID
	if r.Stray {
		name = r.Location.Path
	}
	var out []string
	for _, f := range r.Findings {
		sev := f.Severity.String()
		if f.Repaired {
			sev += " (repaired)"
		}
		if o.Colour && f.Severity > SeverityNote {
			sev = termui.Styled([...]termui.Style{SeverityWarning: termui.Yellow, SeverityError: termui.Red}[f.Severity], sev)
		}
		where := f.Pos
		where.Path = "" // the session names the file
		line := name + ": " + sev + ": "
		if w := where.String(); w != "" {
			line += w + ": "
		}
		out = append(out, line+f.Message+" ["+f.Code+"]")
	}
	if p := r.Prefix; p != nil {
		msg := "sound prefix: " + count64(p.Events, "event")
		if p.Events > 0 {
			msg += fmt.Sprintf(" (seq 0–%d)", p.Events-1)
		}
		if p.Bytes >= 0 {
			msg += fmt.Sprintf(", up to byte %d; after it: %d bytes", p.Bytes, p.After)
		}
		if p.Hidden > 0 {
			msg += fmt.Sprintf(" (%s after it not listed)", count64(int64(p.Hidden), "more finding"))
		}
		out = append(out, name+": "+msg)
	}
	if rp := r.Repair; rp != nil {
		for _, l := range rp.lines(o.BackupDir) {
			out = append(out, name+": "+l)
		}
	}
	return out
}

// lines say what a repair did or would do.
func (rp *RepairReport) lines(backupDir string) []string {
	if rp.Skipped != "" {
		return []string{"not repaired: " + rp.Skipped}
	}
	did := func(done, planned string) string {
		if rp.DryRun {
			return planned
		}
		return done
	}
	var out []string
	for _, rm := range rp.Removed {
		s := fmt.Sprintf("%s %d bytes at byte %d (%s tail)", did("repaired: removed", "would remove"), rm.Bytes, rm.Offset, rm.Kind)
		switch {
		case rm.Seq != nil: // a row of a database
			s = fmt.Sprintf("%s the row at seq %d, %d bytes (%s tail)", did("repaired: removed", "would remove"), *rm.Seq, rm.Bytes, rm.Kind)
		case rm.Kind == seam.RepairUncommitted && rp.Rewrite > 0:
			// The cut starts at the frame that holds the first uncommitted
			// record: not all of its bytes are removed.
			s = fmt.Sprintf("%s %d bytes at byte %d (uncommitted tail, from the start of its frame; the %s before it in that frame %s back as a frame of their own)",
				did("repaired: cut", "would cut"), rm.Bytes, rm.Offset, count64(int64(rp.Rewrite), "committed record"), did("were written", "would be written"))
		}
		switch {
		case rm.Backup != "":
			s += ", saved to " + rm.Backup
		case rp.DryRun:
			s += ", saving them first under " + backupDir
		}
		out = append(out, s)
	}
	if rn := rp.Renumber; rn != nil {
		s := fmt.Sprintf("%s %s from seq %d on (%s where seqs repeated, %s moved), keeping all %s",
			did("repaired: renumbered", "would renumber"), count64(rn.Renumbered, "event"), rn.FirstSeq,
			count64(int64(rn.Overlaps), "place"), count64(rn.Cites, "citation"), count64(rn.Events, "event"))
		switch {
		case rn.Backup != "":
			s += "; the log as it was is saved to " + rn.Backup
		case rp.DryRun:
			s += "; the log as it is would be saved first under " + backupDir
		}
		out = append(out, s)
	}
	if rp.Salvaged > 0 {
		out = append(out, fmt.Sprintf("%s %s of the torn frame (seq %d–%d) as a new frame", did("re-appended", "would re-append"),
			count64(rp.Salvaged, "salvaged event"), rp.SalvagedFrom, rp.SalvagedFrom+rp.Salvaged-1))
	}
	if rp.Before != nil && rp.After != nil {
		out = append(out, "before: "+rp.Before.String()+"; after: "+rp.After.String())
	}
	return out
}

// String says the size of a log: "11 frames, 109444 bytes, last seq 97".
func (s LogState) String() string {
	last := "none"
	if s.LastSeq >= 0 {
		last = fmt.Sprint(s.LastSeq)
	}
	units := count64(s.Lines, "line")
	if s.Frames > 0 {
		units = count64(s.Frames, "frame")
	}
	return fmt.Sprintf("%s, %d bytes, last seq %s", units, s.Bytes, last)
}

// String is verify's summary line: "12 sessions, 10 clean, 1 with warnings,
// 1 with errors", and how many could not be checked, if any.
func (s Summary) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s, %d clean, %d with warnings, %d with errors", count64(int64(s.Sessions), "session"), s.Clean, s.Warnings, s.Errors)
	if n := s.Failed - s.NotRepaired; n > 0 {
		fmt.Fprintf(&b, ", %d not checked", n)
	}
	if s.NotRepaired > 0 {
		fmt.Fprintf(&b, ", %d not repaired", s.NotRepaired)
	}
	return b.String()
}

// Add sums the counts of t into s.
func (s *Summary) Add(t Summary) {
	s.Sessions += t.Sessions
	s.Clean += t.Clean
	s.Warnings += t.Warnings
	s.Errors += t.Errors
	s.Failed += t.Failed
	s.NotRepaired += t.NotRepaired
}
