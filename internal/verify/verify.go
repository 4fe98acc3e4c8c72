package verify

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/dshctl/dshctl/internal/seam"
)

// Mode is how strict verify is, after RocksDB's WAL recovery modes.
type Mode int

const (
	// ModeTolerateTail reports a torn or uncommitted tail, and anything
	// dsh tolerates but its writer never leaves, as warnings; damaged
	// committed data is an error.
	ModeTolerateTail Mode = iota
	// ModeStrict makes every irregularity an error.
	ModeStrict
	// ModePointInTime reports the longest sound prefix of each log and
	// what lies after it: the first problem in the body ends the prefix
	// and is a warning, and what follows it is summed up, not listed.
	// Problems outside the body (layout, header) remain errors.
	ModePointInTime
)

var modeNames = [...]string{"tolerate-tail", "strict", "point-in-time"}

func (m Mode) String() string { return modeNames[m] }

// ParseMode returns the Mode named s.
func ParseMode(s string) (Mode, error) {
	for i, n := range modeNames {
		if n == s {
			return Mode(i), nil
		}
	}
	return 0, fmt.Errorf("unknown mode %q (want tolerate-tail, strict or point-in-time)", s)
}

// Severity is how a verify mode judges a finding.
type Severity int

const (
	SeverityNote Severity = iota
	SeverityWarning
	SeverityError
)

func (s Severity) String() string { return [...]string{"note", "warning", "error"}[s] }

// Finding is a finding as the chosen mode judges it.
type Finding struct {
	seam.Finding
	Severity Severity
	// Repaired is set on the tail findings a repair removed.
	Repaired bool
	// Remedy says what a user can do about it, for the command line to
	// word with its flags; "" when nothing is to be said.
	Remedy Remedy
}

// Remedy is what a user can do about a finding.
type Remedy string

const (
	// RemedyRecordLimit: a record over the reader's record limit (the
	// backend's MaxRecordBytes) was not checked; raising it checks it.
	RemedyRecordLimit Remedy = "record-limit"
	// RemedyFrameLimit: the same for a zstd frame (MaxFrameBytes).
	RemedyFrameLimit Remedy = "frame-limit"
	// RemedySalvage: a torn final frame holds complete records that a
	// repair with salvage re-appends.
	RemedySalvage Remedy = "salvage"
	// RemedyCloseTurn: an open tail turn that an append which closes
	// interrupted turns closes now (dsh closes it on resume).
	RemedyCloseTurn Remedy = "close-turn"
)

// Status sums up a session's report.
type Status string

const (
	StatusClean    Status = "clean" // nothing, or only notes
	StatusWarnings Status = "warnings"
	StatusErrors   Status = "errors"
	StatusFailed   Status = "failed" // the check could not run
)

// LogState is the size of a log: before and after a repair.
type LogState struct {
	// Frames counts the complete zstd frames (0 for other encodings),
	// Lines the complete records; the header's included in both.
	Frames, Lines int64
	Bytes         int64
	Events        int64 // committed events
	LastSeq       int64 // -1 when there is none
}

// Prefix is the longest sound prefix of a log (ModePointInTime).
type Prefix struct {
	// Events counts the events before the first problem, from seq 0.
	Events int64
	// Bytes is where the first problem starts in the log; After counts
	// the bytes from there to the end (both -1 when not known).
	Bytes, After int64
	// Hidden counts the findings after the prefix that are not listed.
	Hidden int
}

// RepairReport says what a repair did, or in a dry run would do.
type RepairReport struct {
	DryRun bool
	// Skipped says why nothing was done ("" when something was).
	Skipped string
	// Removed lists the tails removed (a dry run: to be removed, Backup
	// empty).
	Removed []seam.Repair
	// Rewrite counts the committed records of the frame that held the
	// first uncommitted record, written back as a frame of their own.
	Rewrite int
	// Salvaged counts the records of a torn final frame re-appended, from
	// SalvagedFrom on.
	Salvaged, SalvagedFrom int64
	// Renumber is what renumbering did (or would do): nil when none ran.
	Renumber      *seam.RenumberResult
	Before, After *LogState
}

// SessionReport is what verify found about one session, or about one
// entry of a store that is not a readable session (Stray).
type SessionReport struct {
	ID       string
	Stray    bool
	Location seam.Location
	Findings []Finding
	Status   Status
	State    LogState
	Prefix   *Prefix
	Repair   *RepairReport
	// Err is an operational failure: the check (or repair) could not run.
	Err error
	// NotRepaired says Err is the failure of a repair: the session was
	// checked (Findings hold what was found), but its tail is still there.
	NotRepaired bool
}

// Summary counts the sessions of a verify run by status.
type Summary struct {
	Sessions, Clean, Warnings, Errors int
	// Failed counts the sessions that could not be checked or repaired;
	// NotRepaired those of them that were checked, but whose repair
	// failed.
	Failed, NotRepaired int
}

// DefaultJobs caps the sessions checked at once by default: each check
// holds a read buffer and a decoder window (about 10 MiB), and a few
// saturate a disk.
const DefaultJobs = 8

// Options configure Run and Check.
type Options struct {
	Mode Mode
	// Repair removes torn and uncommitted tails (see repairSession);
	// Salvage also re-appends the complete records of a torn final frame;
	// DryRun only plans.
	Repair, Salvage, DryRun bool
	// Renumber (with Repair) rewrites a log whose seqs repeat, as two
	// writers leave it, keeping every event (seam.Renumberer).
	Renumber bool
	// Jobs is how many sessions are checked at once; 0 means GOMAXPROCS,
	// at most DefaultJobs.
	Jobs int
	// Total, if set, is called once with the number of reports to come.
	Total func(n int)
	// Progress, if set, is called as each session is done, in any order.
	Progress func()
	// Report is called with each report, in order: the store's stray
	// entries, then the sessions in the order given (or the store's).
	// An error stops the run.
	Report func(*SessionReport) error
}

// Run checks the sessions ids of svc (all of them, and the layout of
// the store, when ids is empty) in parallel, and hands the reports to
// o.Report in order. The error is operational: listing the store failed,
// ctx was cancelled, or Report failed; a session that cannot be checked
// is a report with StatusFailed.
func Run(ctx context.Context, svc seam.Service, ids []string, o Options) (Summary, error) {
	var sum Summary
	var strays []seam.Stray
	if len(ids) == 0 {
		var err error
		if ids, strays, err = storeSubjects(ctx, svc); err != nil {
			return sum, err
		}
	}
	var cycles map[string]string
	if o.Mode == ModeStrict {
		var err error
		if cycles, err = parentCycles(ctx, svc, ids); err != nil {
			return sum, err
		}
	}
	n := len(strays) + len(ids)
	if o.Total != nil {
		o.Total(n)
	}
	reports := make([]*SessionReport, n)
	for i, s := range strays {
		reports[i] = strayReport(s, o.Mode)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var mu sync.Mutex
	next := 0
	var reportErr error
	emit := func() {
		for next < n && reports[next] != nil {
			r := reports[next]
			reports[next] = nil // done with it: memory stays bounded by the reports in flight
			next++
			sum.add(r)
			if reportErr == nil && o.Report != nil {
				if reportErr = o.Report(r); reportErr != nil {
					cancel()
				}
			}
		}
	}
	mu.Lock()
	emit()
	mu.Unlock()
	jobs := o.Jobs
	if jobs <= 0 {
		jobs = min(runtime.GOMAXPROCS(0), DefaultJobs)
	}
	work := make(chan int)
	var wg sync.WaitGroup
	for range min(jobs, len(ids)) {
		wg.Go(func() {
			for i := range work {
				r := Check(ctx, svc, ids[i], o)
				if msg, ok := cycles[ids[i]]; ok && r.Status != StatusFailed {
					r.Findings = append(r.Findings, Finding{Severity: severity(seam.ClassIrregular, o.Mode, false), Finding: seam.Finding{
						Class: seam.ClassIrregular, Code: "parent-cycle", Message: msg,
						Pos: seam.PathPos(r.Location.Path)}})
					r.Status = status(r.Findings)
				}
				if o.Progress != nil {
					o.Progress()
				}
				mu.Lock()
				reports[len(strays)+i] = r
				emit()
				mu.Unlock()
			}
		})
	}
feed:
	for i := range ids {
		select {
		case work <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(work)
	wg.Wait()
	if reportErr != nil {
		return sum, reportErr
	}
	return sum, ctx.Err()
}

func (s *Summary) add(r *SessionReport) {
	s.Sessions++
	switch r.Status {
	case StatusClean:
		s.Clean++
	case StatusWarnings:
		s.Warnings++
	case StatusErrors:
		s.Errors++
	default:
		s.Failed++
		if r.NotRepaired {
			s.NotRepaired++
		}
	}
}

// storeSubjects returns the sessions of svc and the entries that are not
// readable sessions.
func storeSubjects(ctx context.Context, svc seam.Service) ([]string, []seam.Stray, error) {
	if lv, ok := svc.(seam.LayoutVerifier); ok {
		l, err := lv.VerifyLayout(ctx)
		return l.Sessions, l.Strays, err
	}
	entries, err := svc.List(ctx)
	if err != nil {
		return nil, nil, err
	}
	var ids []string
	var strays []seam.Stray
	for _, en := range entries {
		if en.Err != nil {
			strays = append(strays, seam.Stray{Name: en.Snapshot.Header.ID, Path: en.Snapshot.Location.Path,
				Findings: []seam.Finding{errorFinding(en.Err)}})
			continue
		}
		ids = append(ids, en.Snapshot.Header.ID)
	}
	return ids, strays, nil
}

func strayReport(s seam.Stray, mode Mode) *SessionReport {
	r := &SessionReport{ID: s.Name, Stray: true, Location: seam.Location{Path: s.Path}, State: LogState{LastSeq: -1}}
	for _, f := range s.Findings {
		r.Findings = append(r.Findings, Finding{Finding: f, Severity: severity(f.Class, mode, false)})
	}
	r.Status = status(r.Findings)
	return r
}

// errorFinding is the finding for an error a read path returned about
// stored data.
func errorFinding(err error) seam.Finding {
	f := seam.Finding{Class: seam.ClassDamage, Code: "unreadable", Message: causeText(err), Pos: seam.NoPos}
	var se *seam.Error
	if errors.As(err, &se) {
		f.Pos = se.Pos
		if errors.Is(err, seam.ErrUnsupportedFormat) {
			f.Code = "unsupported"
		}
	}
	return f
}

// severity maps a class to a severity in mode; body says the finding is
// about the log's body, where point-in-time tolerates anything.
func severity(c seam.FindingClass, mode Mode, body bool) Severity {
	switch {
	case c == seam.ClassNote:
		return SeverityNote
	case mode == ModeStrict || c == seam.ClassDamage && !(mode == ModePointInTime && body):
		return SeverityError
	}
	return SeverityWarning
}

func status(fs []Finding) Status {
	st := StatusClean
	for _, f := range fs {
		switch {
		case f.Repaired:
		case f.Severity == SeverityError:
			return StatusErrors
		case f.Severity == SeverityWarning:
			st = StatusWarnings
		}
	}
	return st
}

// Check verifies one session and, with o.Repair, repairs its tail
// (see repairSession).
func Check(ctx context.Context, svc seam.Service, id string, o Options) *SessionReport {
	res, sum, err := checkLog(ctx, svc, id)
	if err != nil {
		return &SessionReport{ID: id, Location: sum.Location, Status: StatusFailed, Err: err, State: LogState{LastSeq: -1}}
	}
	r := judge(id, &res, sum, o.Mode, o.Repair)
	if lp, ok := svc.(seam.LockProber); ok && (res.Torn != nil || res.Uncommitted != nil || res.OpenTurn != nil) {
		// A tail or an open turn is what a writer at work leaves too.
		if active, err := lp.WriterActive(ctx, id); err == nil && active {
			r.Findings = append(r.Findings, Finding{Severity: SeverityNote, Finding: seam.Finding{Class: seam.ClassNote, Code: "writer-active",
				Pos:     seam.PathPos(sum.Location.Path),
				Message: "another process holds the session's write lock: the tail or open turn may be an append in progress; verify again once it is done"}})
		}
	}
	if o.Repair && o.Renumber && hasCode(r.Findings, "seq-overlap") {
		return renumberSession(ctx, svc, id, o, r)
	}
	switch why := untouchable(&res); {
	case !o.Repair:
	case why != "":
		r.Repair = &RepairReport{DryRun: o.DryRun, Skipped: why}
	case res.Uncommitted != nil && res.Uncommitted.NotChecked:
		// The write open would stop at the same record: a dry run says
		// what the repair would.
		r.Err, r.Status, r.NotRepaired = fmt.Errorf("repair: %w", ErrTailNotChecked), StatusFailed, true
	case res.Torn == nil && res.Uncommitted == nil:
	case o.DryRun:
		p, from := trimPlan(&res, sum, o.Salvage)
		before := state(&res, sum)
		r.Repair = &RepairReport{DryRun: true, Removed: p.Tails, Rewrite: p.Rewrite, Salvaged: p.Salvage, SalvagedFrom: from, Before: &before}
	default:
		return repairSession(ctx, svc, id, o, r)
	}
	return r
}

// checkLog runs a LogCheck over session id: through the backend's
// LogVerifier, or else over the events a read handle serves.
func checkLog(ctx context.Context, svc seam.Service, id string) (CheckResult, seam.LogSummary, error) {
	c := NewLogCheck()
	if lv, ok := svc.(seam.LogVerifier); ok {
		sum, err := lv.VerifyLog(ctx, id, c)
		return c.Result(), sum, err
	}
	var sum seam.LogSummary
	snap, err := svc.Stat(ctx, id)
	if err != nil && !errors.Is(err, seam.ErrCorrupt) && !errors.Is(err, seam.ErrUnsupportedFormat) {
		return CheckResult{}, sum, err
	}
	sum.Location, sum.Size = snap.Location, snap.SizeBytes
	h, err := svc.Open(ctx, id, seam.Read)
	switch {
	case errors.Is(err, seam.ErrCorrupt) || errors.Is(err, seam.ErrUnsupportedFormat):
		c.Finding(errorFinding(err))
		return c.Result(), sum, nil
	case err != nil:
		return CheckResult{}, sum, err
	}
	defer h.Close()
	c.Header(h.Header(), true)
	for e, err := range h.Scan(ctx, seam.ScanOptions{}) {
		if err != nil {
			if !errors.Is(err, seam.ErrCorrupt) && !errors.Is(err, seam.ErrUnsupportedFormat) {
				return CheckResult{}, sum, err
			}
			c.Finding(errorFinding(err))
			break
		}
		c.Record(&seam.Record{Event: e}, seam.Pos{Path: sum.Location.Path, Offset: -1, Frame: -1, Line: -1, Seq: e.Seq})
	}
	return c.Result(), sum, nil
}

// judge turns a check's result into a report in mode.
func judge(id string, res *CheckResult, sum seam.LogSummary, mode Mode, repair bool) *SessionReport {
	r := &SessionReport{ID: id, Location: sum.Location, State: state(res, sum)}
	pit := mode == ModePointInTime && !repair
	first := -1
	if pit {
		for i, f := range res.findings {
			if f.body && (f.Class == seam.ClassDamage || f.Class == seam.ClassTail) {
				first = i
				break
			}
		}
	}
	for i, f := range res.findings {
		if first >= 0 && i > first && f.body {
			continue
		}
		m := mode
		if repair && m == ModePointInTime {
			m = ModeTolerateTail
		}
		r.Findings = append(r.Findings, Finding{Finding: f.Finding, Severity: severity(f.Class, m, f.body), Remedy: remedyOf(&f)})
	}
	if first >= 0 {
		f := res.findings[first]
		p := &Prefix{Events: f.events, Bytes: f.bytes, After: -1}
		if f.bytes >= 0 {
			p.After = sum.Size - f.bytes
		}
		for i := first + 1; i < len(res.findings); i++ {
			if res.findings[i].body {
				p.Hidden++
			}
		}
		r.Prefix = p
	}
	r.Status = status(r.Findings)
	return r
}

func state(res *CheckResult, sum seam.LogSummary) LogState {
	return LogState{Frames: sum.Frames, Lines: sum.Lines, Bytes: sum.Size, Events: res.Events, LastSeq: res.NextSeq - 1}
}

// untouchable says why a repair must not change the log res describes, or
// "" when it may: each finding of damage gives its own reason, and the
// first reason, in the order of refusals below, is the one given.
func untouchable(res *CheckResult) string {
	best := len(refusals)
	var kind string
	for _, f := range res.findings {
		if f.Class != seam.ClassDamage {
			continue
		}
		i := refusalOf(f.Code)
		if i < best {
			best, kind = i, f.FileType
		}
	}
	if best == len(refusals) {
		return ""
	}
	why := refusals[best].why
	if kind != "" && strings.Contains(why, "not a regular file") {
		why = strings.Replace(why, "not a regular file", "not a regular file ("+kind+")", 1)
	}
	return why
}

// refusals are why a repair leaves a log alone, by the codes of the
// findings that stop it, the first that applies winning: what makes any
// write unsafe (the lock or the log not a regular file, the session's
// place in the store), then damage, then what verify could not check,
// then what it does not know. Any other damage is damaged committed data.
var refusals = []struct {
	codes []string
	why   string
}{
	{[]string{"lock-not-regular"}, "the session's lock file is not a regular file: the session cannot be locked to write it, so it is not changed"},
	{[]string{"not-regular-file"}, "the log is not a regular file: not changed"},
	{[]string{"symlink", "duplicate-id", "encoding-mismatch", "folder-name", "flat-file", "unreadable"},
		"the session folder is not one dsh reads (see the findings): not changed"},
	{nil, "damaged committed data is never changed"},
	{[]string{"frame-too-large"}, "a frame over the frame limit is not checked, so it is not known to be a tail: not changed"},
	{[]string{"frame-window"}, "a frame that no reader here decodes is not known to be a tail: not changed"},
	{[]string{"record-too-large"}, "a record over the record limit, followed by a turn/end, was not checked: not changed"},
	{[]string{"header-unsupported", "unsupported"}, "the log is in a format dshctl does not know (written by a newer dsh), so it is not changed"},
	{[]string{"unknown-type"}, "the log holds an event type dshctl does not know (written by a newer dsh or a plugin), so it is not changed"},
}

// refusalOf is the index in refusals of the reason a damage finding of
// code gives.
func refusalOf(code string) int {
	damaged := 0
	for i, r := range refusals {
		if r.codes == nil {
			damaged = i
		}
		if slices.Contains(r.codes, code) {
			return i
		}
	}
	return damaged
}

// trimPlan is what a repair of res removes: the tails (an uncommitted one
// up to the torn one or the end, then the torn one), the committed records
// it writes back, and with salvage the events of a torn final unit it
// re-appends, from the seq it returns (-1 when none).
func trimPlan(res *CheckResult, sum seam.LogSummary, salvage bool) (seam.TrimPlan, int64) {
	var p seam.TrimPlan
	from := int64(-1)
	end := sum.Size
	if t := res.Torn; t != nil {
		end = t.Pos.Offset
	}
	if u := res.Uncommitted; u != nil {
		p.Tails = append(p.Tails, seam.Repair{Path: sum.Location.Path, Offset: u.Offset, Bytes: end - u.Offset, Kind: seam.RepairUncommitted})
		p.Rewrite = u.Rewrite
	}
	if t := res.Torn; t != nil {
		rm := seam.Repair{Path: sum.Location.Path, Offset: t.Pos.Offset, Bytes: t.Size, Kind: seam.RepairTorn}
		if t.Pos.Offset < 0 && t.Pos.Seq >= 0 {
			seq := t.Pos.Seq // a row of a database
			rm.Seq = &seq
		}
		p.Tails = append(p.Tails, rm)
		if salvage && res.Uncommitted == nil && t.Salvage > 0 {
			p.Salvage, from = t.Salvage, t.SalvageFrom
		}
	}
	return p, from
}

// ErrTailNotChecked is the error of a repair of a tail whose first record
// is over the reader's record limit: the repair must read it to remove it.
var ErrTailNotChecked = errors.New("the uncommitted tail starts with a record over the record limit, which a repair must read")

// ErrInterruptedAfterRepair is the error of a report whose repair was
// done when the run was cancelled, before the check of its result.
var ErrInterruptedAfterRepair = errors.New("interrupted after the repair, before it was checked: run verify again to see the result")

// repairSession removes the torn or uncommitted tail of session id, as
// verify --repair does. It opens the session for writing, which takes its
// write lock (and fails at once when another process holds it), and checks
// the log again under the lock. Only when that check finds a tail and no
// damaged committed data does the handle trim it (seam.TailTrimmer), and
// it trims exactly what that check found: the handle refuses
// (seam.ErrTailMismatch) when its own reading of the log differs. The
// removed bytes are saved to a backup first and fsynced; with o.Salvage
// the complete records of a torn final frame are re-appended. Then the log
// is checked once more. Damaged committed data is never changed. found is
// the report of the check made before, without the lock, which a failure
// to take the lock keeps.
func repairSession(ctx context.Context, svc seam.Service, id string, o Options, found *SessionReport) *SessionReport {
	failed := func(r *SessionReport, err error) *SessionReport {
		if r == nil {
			r = &SessionReport{ID: id, State: LogState{LastSeq: -1}}
		}
		r.Err, r.Status, r.NotRepaired = err, StatusFailed, true
		return r
	}
	h, err := svc.Open(ctx, id, seam.Write)
	if err != nil {
		return failed(found, fmt.Errorf("repair: %w", err))
	}
	defer h.Close()
	tt, ok := h.(seam.TailTrimmer)
	if !ok {
		return failed(found, fmt.Errorf("repair %q: this store cannot remove a tail", id))
	}
	res, sum, err := checkLog(ctx, svc, id)
	if err != nil {
		return failed(found, err)
	}
	r := judge(id, &res, sum, o.Mode, true)
	if why := untouchable(&res); why != "" {
		r.Repair = &RepairReport{Skipped: why}
		return r
	}
	if res.Torn == nil && res.Uncommitted == nil {
		r.Repair = &RepairReport{Skipped: "nothing to repair (the log changed before the lock was taken)"}
		return r
	}
	plan, _ := trimPlan(&res, sum, o.Salvage)
	before := state(&res, sum)
	tr, err := tt.TrimTail(ctx, plan)
	r.Repair = &RepairReport{Removed: tr.Repairs, Rewrite: plan.Rewrite, Salvaged: tr.Salvaged, SalvagedFrom: tr.SalvagedFrom, Before: &before}
	if tr.Salvaged == 0 {
		r.Repair.SalvagedFrom = -1
	}
	if err != nil {
		if len(tr.Repairs) == 0 {
			r.Repair.Rewrite = 0 // nothing was done
		}
		return failed(r, err)
	}
	for i := range r.Findings {
		if r.Findings[i].Class == seam.ClassTail {
			r.Findings[i].Repaired = true
		}
	}
	after, asum, err := checkLog(ctx, svc, id)
	switch {
	case err != nil && ctx.Err() != nil:
		r.Err, r.Status = ErrInterruptedAfterRepair, StatusFailed
		return r
	case err != nil:
		return failed(r, fmt.Errorf("check after the repair: %w", err))
	}
	ar := judge(id, &after, asum, o.Mode, true)
	as := ar.State
	r.Repair.After = &as
	// What the check after the repair finds that the one before did not
	// (there should be nothing) is listed too.
	for _, f := range ar.Findings {
		if f.Class != seam.ClassNote && !hasFinding(r.Findings, f) {
			r.Findings = append(r.Findings, f)
		}
	}
	r.Status = status(r.Findings)
	return r
}

// renumberSession rewrites session id, whose check found seqs that repeat
// (found), keeping every event (seam.Renumberer): the backend takes the
// session's write lock, refuses a log with any other damage and saves the
// whole log first. The log is then checked again, turn and step
// bracketing included, and that check is the report: the findings before
// that the renumbering mended are marked repaired.
func renumberSession(ctx context.Context, svc seam.Service, id string, o Options, found *SessionReport) *SessionReport {
	rn, ok := svc.(seam.Renumberer)
	if !ok {
		found.Repair = &RepairReport{DryRun: o.DryRun, Skipped: "this store cannot hold seqs that repeat, so it has nothing to renumber"}
		return found
	}
	before := found.State
	res, err := rn.Renumber(ctx, id, seam.RenumberOptions{DryRun: o.DryRun})
	if err != nil {
		found.Err, found.Status, found.NotRepaired = fmt.Errorf("renumber: %w", err), StatusFailed, true
		return found
	}
	found.Repair = &RepairReport{DryRun: o.DryRun, Renumber: &res, SalvagedFrom: -1, Before: &before}
	if res.Overlaps == 0 {
		found.Repair.Skipped = "nothing to renumber (the log changed before the lock was taken)"
		return found
	}
	if o.DryRun {
		return found
	}
	after, asum, err := checkLog(ctx, svc, id)
	switch {
	case err != nil && ctx.Err() != nil:
		found.Err, found.Status = ErrInterruptedAfterRepair, StatusFailed
		return found
	case err != nil:
		found.Err, found.Status, found.NotRepaired = fmt.Errorf("check after renumbering: %w", err), StatusFailed, true
		return found
	}
	ar := judge(id, &after, asum, o.Mode, true)
	as := ar.State
	found.Repair.After = &as
	var fs []Finding
	for _, f := range found.Findings {
		if f.Class == seam.ClassDamage && !hasFinding(ar.Findings, f) {
			f.Repaired = true
			fs = append(fs, f)
		}
	}
	found.Findings = append(fs, ar.Findings...)
	found.Location, found.State = ar.Location, ar.State
	found.Status = status(ar.Findings)
	return found
}

func hasCode(fs []Finding, code string) bool {
	for _, f := range fs {
		if f.Code == code {
			return true
		}
	}
	return false
}

func hasFinding(fs []Finding, f Finding) bool {
	for _, g := range fs {
		if g.Code == f.Code && g.Message == f.Message {
			return true
		}
	}
	return false
}
