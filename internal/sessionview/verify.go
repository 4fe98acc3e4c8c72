package sessionview

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/dshctl/dshctl/internal/seam"
	"github.com/dshctl/dshctl/internal/termui"
	"github.com/dshctl/dshctl/internal/verify"
)

// The JSON shape of verify's reports: every field present, null when
// unknown or absent, as for sessions.
type (
	// VerifySummaryJSON counts the sessions of a verify run by status.
	VerifySummaryJSON struct {
		Sessions int `json:"sessions"`
		Clean    int `json:"clean"`
		Warnings int `json:"warnings"`
		Errors   int `json:"errors"`
		Failed   int `json:"failed"`
	}
	// VerifyJSON is one session's verify report.
	VerifyJSON struct {
		ID       string             `json:"id"`
		Stray    bool               `json:"stray"`
		Location verifyLocationJSON `json:"location"`
		Status   string             `json:"status"`
		// The counts of the log are null when it could not be checked
		// (status "failed", no repair tried): not known, not zero.
		Events   *int64        `json:"eventCount"`
		LastSeq  *int64        `json:"lastSeq"`
		Bytes    *int64        `json:"sizeBytes"`
		Frames   *int64        `json:"frames"`
		Lines    *int64        `json:"lines"`
		Findings []findingJSON `json:"findings"`
		Prefix   *prefixJSON   `json:"prefix"`
		Repair   *repairJSON   `json:"repair"`
		Error    *string       `json:"error"`
	}
	verifyLocationJSON struct {
		Backend          *string `json:"backend"`
		Path             *string `json:"path"`
		Encoding         *string `json:"encoding"`
		Generation       *int    `json:"generation"`
		OlderGenerations []int   `json:"olderGenerations"`
	}
	findingJSON struct {
		Severity string       `json:"severity"`
		Code     string       `json:"code"`
		Message  string       `json:"message"`
		Repaired bool         `json:"repaired"`
		Location positionJSON `json:"location"`
	}
	positionJSON struct {
		Path   *string `json:"path"`
		Frame  *int    `json:"frame"`
		Offset *int64  `json:"offsetBytes"`
		Line   *int    `json:"line"`
		Seq    *int64  `json:"seq"`
	}
	prefixJSON struct {
		Events int64  `json:"eventCount"`
		Bytes  *int64 `json:"sizeBytes"`
		After  *int64 `json:"afterBytes"`
		Hidden int    `json:"hiddenFindings"`
	}
	repairJSON struct {
		DryRun       bool                 `json:"dryRun"`
		Skipped      *string              `json:"skipped"`
		Removed      []RepairJSON         `json:"removed"`
		Rewrite      int                  `json:"rewrittenRecords"`
		Salvaged     int64                `json:"salvaged"`
		SalvagedFrom *int64               `json:"salvagedFrom"`
		Renumber     *seam.RenumberResult `json:"renumber"`
		Before       *stateJSON           `json:"before"`
		After        *stateJSON           `json:"after"`
	}
	stateJSON struct {
		Frames  int64  `json:"frames"`
		Lines   int64  `json:"lines"`
		Bytes   int64  `json:"sizeBytes"`
		Events  int64  `json:"eventCount"`
		LastSeq *int64 `json:"lastSeq"`
	}
)

// VerifyDocJSON is verify's -o json document: the mode, every report and
// the summary.
type VerifyDocJSON struct {
	Mode     string            `json:"mode"`
	Sessions []VerifyJSON      `json:"sessions"`
	Summary  VerifySummaryJSON `json:"summary"`
}

// VerifyPrinter prints verify's reports as they come, in o.Format, and
// the run's summary: for people (stdout a terminal), a line per finding,
// prefix and repair, then the summary; for scripts, a row per finding
// (VerifyRow), the rest on stderr after "dshctl: "; or JSON: a line per
// report (JSONL), or one document at the end (JSON).
type VerifyPrinter struct {
	o         termui.Out
	w         *bufio.Writer
	backupDir string
	reports   []VerifyJSON
	// overLimit names the reader limits (the flags that raise them) that
	// kept records or frames from being checked.
	overLimit map[string]bool
}

// limitFlags are the flags that raise the reader limits.
var limitFlags = map[verify.Remedy]string{verify.RemedyRecordLimit: "--max-record-bytes", verify.RemedyFrameLimit: "--max-frame-bytes"}

// remedyWords end the message of a finding with the command that deals
// with it.
var remedyWords = map[verify.Remedy]string{
	verify.RemedySalvage:   ": --repair --salvage re-appends them",
	verify.RemedyCloseTurn: ", as dshctl append --close-interrupted does",
}

// NewVerifyPrinter prints to o; backupDir is where repairs save what they
// remove, as reports say it.
func NewVerifyPrinter(o termui.Out, backupDir string) *VerifyPrinter {
	// With a progress bar on the terminal, the reports wait in a large
	// buffer, so that they do not cut through the bar.
	w := bufio.NewWriter(o.Stdout)
	if o.ErrTTY && o.TTY && o.Format == termui.FormatTable {
		w = bufio.NewWriterSize(o.Stdout, 1<<20)
	}
	return &VerifyPrinter{o: o, w: w, backupDir: backupDir, overLimit: map[string]bool{}}
}

// Report prints r, and on stderr why it could not be checked.
func (p *VerifyPrinter) Report(r *verify.SessionReport) error {
	if r.Err != nil && !errors.Is(r.Err, context.Canceled) {
		// The line names the session: the operation and id a seam error
		// starts with would say it twice.
		err := Explain(withoutOp(r.Err, "verify", r.ID))
		fmt.Fprintf(p.o.Stderr, "dshctl: verify %s: %s\n", r.ID, termui.OneLineError(err))
		if h := termui.Hint(err); h != "" {
			fmt.Fprintf(p.o.Stderr, "hint: %s\n", h)
		}
	}
	for i := range r.Findings {
		f := &r.Findings[i]
		if flag, ok := limitFlags[f.Remedy]; ok {
			p.overLimit[flag] = true
		}
		// The command that deals with a finding is no advice once this
		// run dealt with it (or, in a dry run, plans to salvage).
		if !f.Repaired && (f.Remedy != verify.RemedySalvage || r.Repair == nil || r.Repair.Salvaged == 0) {
			f.Message += remedyWords[f.Remedy]
		}
	}
	switch p.o.Format {
	case termui.FormatJSON:
		p.reports = append(p.reports, NewVerifyJSON(r))
		return nil
	case termui.FormatJSONL:
		return p.o.WriteJSON(p.w, NewVerifyJSON(r))
	}
	lines := r.Lines(verify.TextOptions{Colour: p.o.Colour, BackupDir: p.backupDir})
	if p.o.TTY {
		for _, line := range lines {
			if _, err := fmt.Fprintln(p.w, line); err != nil {
				return err
			}
		}
		return nil
	}
	// Findings come first in Lines; the prefix and repair lines after them
	// are for people, on stderr.
	rows := p.o.NewTable(p.w)
	for i := range r.Findings {
		rows.Row(VerifyRow(r, &r.Findings[i])...)
	}
	for _, line := range lines[len(r.Findings):] {
		fmt.Fprintln(p.o.Stderr, "dshctl: "+line)
	}
	return rows.Render()
}

// Flush writes the reports printed so far.
func (p *VerifyPrinter) Flush() error { return p.w.Flush() }

// Summary prints the end of a run in mode that counted s, and flushes. Its
// error is the run's outcome: sessions that could not be checked, or a
// termui.FindingsError when a finding is an error in mode.
func (p *VerifyPrinter) Summary(mode verify.Mode, s verify.Summary) error {
	var err error
	switch {
	case p.o.Format == termui.FormatJSON:
		err = p.o.WriteJSON(p.w, VerifyDocJSON{mode.String(), append([]VerifyJSON{}, p.reports...), VerifySummaryJSON{
			Sessions: s.Sessions, Clean: s.Clean, Warnings: s.Warnings, Errors: s.Errors, Failed: s.Failed}})
	case p.o.Format == termui.FormatJSONL:
	case !p.o.TTY:
		_, err = fmt.Fprintln(p.o.Stderr, "dshctl: "+s.String())
	default:
		_, err = fmt.Fprintln(p.w, s.String())
	}
	if err == nil {
		err = p.w.Flush()
	}
	if len(p.overLimit) > 0 {
		flags := slices.Sorted(maps.Keys(p.overLimit))
		fmt.Fprintf(p.o.Stderr, "hint: what was over a reader limit was not checked; to check it, raise %s\n", strings.Join(flags, " and "))
	}
	switch {
	case err != nil:
		return err
	case s.Failed > 0:
		return fmt.Errorf("%s could not be checked or repaired (see above)", termui.Count(s.Failed, "session"))
	case s.Errors > 0:
		return termui.Findings(s.String())
	}
	return nil
}

// ExplainVerify words the failure of a verify run.
func ExplainVerify(err error) error {
	if errors.Is(err, context.Canceled) {
		return errors.New("verify interrupted: the sessions reported above were checked (and repaired where they say so)")
	}
	return Explain(err)
}

// RepairJSON is a repair (seam.Repair) as JSON, in the names every
// command uses: where the bytes started (null for a row of a database,
// which has its seq instead), how many, and what was written back.
type RepairJSON struct {
	Path           string `json:"path"`
	OffsetBytes    *int64 `json:"offsetBytes"`
	SizeBytes      int64  `json:"sizeBytes"`
	Kind           string `json:"kind"`
	Backup         string `json:"backup"`
	RewrittenBytes int64  `json:"rewrittenBytes"`
	Seq            *int64 `json:"seq"`
}

// NewRepairsJSON are repairs as JSON, [] for none.
func NewRepairsJSON(repairs []seam.Repair) []RepairJSON {
	out := make([]RepairJSON, len(repairs))
	for i, r := range repairs {
		out[i] = RepairJSON{Path: r.Path, OffsetBytes: seqPtr(r.Offset), SizeBytes: r.Bytes, Kind: r.Kind, Backup: r.Backup,
			RewrittenBytes: r.Rewritten, Seq: r.Seq}
	}
	return out
}

// NewVerifyJSON is the JSON of r.
func NewVerifyJSON(r *verify.SessionReport) VerifyJSON {
	loc := r.Location
	v := VerifyJSON{ID: r.ID, Stray: r.Stray, Status: string(r.Status), LastSeq: seqPtr(r.State.LastSeq), Findings: []findingJSON{},
		Location: verifyLocationJSON{Backend: termui.OrNull(loc.Backend), Path: termui.OrNull(loc.Path), Encoding: termui.OrNull(loc.Encoding),
			OlderGenerations: append([]int{}, loc.OlderGenerations...)}}
	if r.Status != verify.StatusFailed || r.NotRepaired || r.Repair != nil { // the log was checked
		st := r.State
		v.Events, v.Bytes, v.Frames, v.Lines = &st.Events, &st.Bytes, &st.Frames, &st.Lines
	}
	if loc.Backend != "" {
		v.Location.Generation = &loc.Generation
	}
	for _, f := range r.Findings {
		v.Findings = append(v.Findings, findingJSON{Severity: f.Severity.String(), Code: f.Code, Message: f.Message,
			Repaired: f.Repaired, Location: toPositionJSON(f.Pos)})
	}
	if pr := r.Prefix; pr != nil {
		v.Prefix = &prefixJSON{Events: pr.Events, Bytes: seqPtr(pr.Bytes), After: seqPtr(pr.After), Hidden: pr.Hidden}
	}
	if rp := r.Repair; rp != nil {
		v.Repair = &repairJSON{DryRun: rp.DryRun, Skipped: termui.OrNull(rp.Skipped), Removed: NewRepairsJSON(rp.Removed), Rewrite: rp.Rewrite,
			Salvaged: rp.Salvaged, Renumber: rp.Renumber, Before: toStateJSON(rp.Before), After: toStateJSON(rp.After)}
		if rp.Salvaged > 0 {
			v.Repair.SalvagedFrom = &rp.SalvagedFrom
		}
	}
	if r.Err != nil {
		v.Error = ptr(r.Err.Error())
	}
	return v
}

func toStateJSON(s *verify.LogState) *stateJSON {
	if s == nil {
		return nil
	}
	return &stateJSON{Frames: s.Frames, Lines: s.Lines, Bytes: s.Bytes, Events: s.Events, LastSeq: seqPtr(s.LastSeq)}
}

func toPositionJSON(p seam.Pos) positionJSON {
	j := positionJSON{Path: termui.OrNull(p.Path), Offset: seqPtr(p.Offset), Seq: seqPtr(p.Seq)}
	if p.Frame >= 0 {
		j.Frame = &p.Frame
	}
	if p.Line > 0 {
		j.Line = &p.Line
	}
	return j
}

// seqPtr returns nil for a negative (unknown) value.
func seqPtr(n int64) *int64 {
	if n < 0 {
		return nil
	}
	return &n
}

// VerifyRow is a finding as verify prints it to a script: the session (or,
// for a stray entry, its path), severity, code, frame, byte offset, line
// and seq (empty when unknown), "repaired" when a repair removed it, and
// the message.
func VerifyRow(r *verify.SessionReport, f *verify.Finding) []string {
	name := r.ID
	if r.Stray {
		name = r.Location.Path
	}
	num := func(n int64, ok bool) string {
		if !ok {
			return ""
		}
		return strconv.FormatInt(n, 10)
	}
	p := f.Pos
	repaired := ""
	if f.Repaired {
		repaired = "repaired"
	}
	return []string{name, f.Severity.String(), f.Code, num(int64(p.Frame), p.Frame >= 0), num(p.Offset, p.Offset >= 0),
		num(int64(p.Line), p.Line > 0), num(p.Seq, p.Seq >= 0), repaired, f.Message}
}
