package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/dshctl/dshctl/internal/seam"
	sqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

var (
	_ seam.LogVerifier    = (*Store)(nil)
	_ seam.LayoutVerifier = (*Store)(nil)
	_ seam.TailTrimmer    = (*handle)(nil)
)

// maxDatabaseFindings bounds the findings of the checks of the database as
// a whole (integrity_check lines, orphaned sessions); past it they are
// counted.
const maxDatabaseFindings = 20

// dbCheck is what the checks of the database file as a whole found; they
// run once per Store (see databaseFindings).
type dbCheck struct {
	done     bool
	findings []seam.Finding
	// reported is set once VerifyLayout gave the findings as the
	// database's own report, so that sessions do not repeat them.
	reported bool
}

// databaseFindings checks the database file as a whole, once per Store:
// PRAGMA integrity_check (b-trees, pages, indexes), the schema objects of
// its schema version, the text encoding, the persistence_state row, and
// events rows whose session has no sessions row (which no reader sees).
func (s *Store) databaseFindings(ctx context.Context) ([]seam.Finding, error) {
	s.dbMu.Lock()
	defer s.dbMu.Unlock()
	if s.dbc.done {
		return s.dbc.findings, nil
	}
	fs, err := s.checkDatabase(ctx)
	if err != nil {
		return nil, err
	}
	s.dbc.done, s.dbc.findings = true, fs
	return fs, nil
}

// dbFindings collects the findings about a database file.
type dbFindings struct {
	path string
	fs   []seam.Finding
}

func (d *dbFindings) add(class seam.FindingClass, code, format string, args ...any) {
	d.fs = append(d.fs, seam.Finding{Class: class, Code: code, Message: fmt.Sprintf(format, args...), Pos: seam.PathPos(d.path)})
}

// integrity adds the problems integrity_check listed, at most
// maxDatabaseFindings of them; more says to count those past it.
func (d *dbFindings) integrity(lines []string, more bool) {
	for i, l := range lines {
		if i == maxDatabaseFindings {
			if more {
				d.add(seam.ClassDamage, "integrity", "PRAGMA integrity_check reports more problems than the %d listed", maxDatabaseFindings)
			}
			break
		}
		d.add(seam.ClassDamage, "integrity", "PRAGMA integrity_check: %s", l)
	}
}

// checkDatabase is databaseFindings without the cache.
func (s *Store) checkDatabase(ctx context.Context) ([]seam.Finding, error) {
	d := &dbFindings{path: s.path}
	if s.damaged != nil {
		what := driverText(s.damaged)
		var oe *OpenError
		if errors.As(s.damaged, &oe) {
			what = strings.TrimPrefix(oe.Msg, oe.Path+" ")
		}
		d.add(seam.ClassDamage, "database-open", "the database %s; its sessions are not checked", what)
	}
	if f, ok, err := s.walFinding(); err != nil {
		return nil, s.sqlErr("verify", "", err)
	} else if ok {
		d.fs = append(d.fs, f)
	}
	lines, err := s.integrityCheck(ctx, maxDatabaseFindings+1)
	switch {
	case err != nil && isCorrupt(err) && s.damaged != nil:
		// The check fails as the open did: nothing more to say.
	case err != nil && isCorrupt(err):
		lines = []string{driverText(err)}
	case err != nil:
		return nil, err
	}
	if s.damaged != nil {
		s.moreSchemaProblems(ctx, d)
		d.integrity(lines, false)
		return d.fs, nil
	}
	d.integrity(lines, true)
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return nil, s.sqlErr("verify", "", err)
	}
	defer conn.Close()
	// The checks below read tables that integrity_check may have found
	// damaged: a read that fails on damage adds nothing more.
	if err := s.tableFindings(ctx, conn, d); err != nil && (!isCorrupt(err) || len(d.fs) == 0) {
		return nil, s.sqlErr("verify", "", err)
	}
	return d.fs, nil
}

// moreSchemaProblems adds the schema problems of a database that did not
// open after the first, which the open reported.
func (s *Store) moreSchemaProblems(ctx context.Context, d *dbFindings) {
	if s.schema == 0 {
		return
	}
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return
	}
	defer conn.Close()
	if problems, err := schemaProblems(ctx, conn, s.schema); err == nil && len(problems) > 1 {
		for _, p := range problems[1:] {
			d.add(seam.ClassDamage, "schema", "schema %d: %s", s.schema, p)
		}
	}
}

// tableFindings adds what the tables of an open database say: its schema
// objects, its persistence_state rows and its orphan events rows.
func (s *Store) tableFindings(ctx context.Context, conn *sql.Conn, d *dbFindings) error {
	problems, err := schemaProblems(ctx, conn, s.schema)
	if err != nil {
		return err
	}
	for _, p := range problems {
		d.add(seam.ClassDamage, "schema", "schema %d: %s", s.schema, p)
	}
	var states int64
	if err := conn.QueryRowContext(ctx, "SELECT count(*) FROM persistence_state").Scan(&states); err != nil {
		return err
	}
	if states != 1 {
		d.add(seam.ClassIrregular, "persistence-state", "persistence_state holds %d rows; dsh writes exactly one (the store id)", states)
	}
	rows, err := conn.QueryContext(ctx, `SELECT e.session_id, count(*) FROM events e
		WHERE NOT EXISTS (SELECT 1 FROM sessions s WHERE s.id = e.session_id) GROUP BY e.session_id ORDER BY e.session_id LIMIT ?`, maxDatabaseFindings+1)
	if err != nil {
		return err
	}
	defer rows.Close()
	for n := 0; rows.Next(); n++ {
		var id string
		var count int64
		if err := rows.Scan(&id, &count); err != nil {
			return err
		}
		if n == maxDatabaseFindings {
			d.add(seam.ClassIrregular, "orphan-rows", "more sessions than the %d listed have events rows but no sessions row", maxDatabaseFindings)
			break
		}
		d.add(seam.ClassIrregular, "orphan-rows", "%d events rows of session %q, which has no sessions row: no reader sees them", count, id)
	}
	return rows.Err()
}

// VerifyLayout checks the database as a whole (see databaseFindings) and
// returns every stored session; the database's own findings, if any, are
// a report of their own, named by the database file
// (seam.LayoutVerifier).
func (s *Store) VerifyLayout(ctx context.Context) (seam.StoreLayout, error) {
	var l seam.StoreLayout
	if err := s.check(ctx, "verify"); err != nil {
		return l, err
	}
	fs, err := s.databaseFindings(ctx)
	if err != nil {
		return l, err
	}
	if s.damaged != nil {
		return seam.StoreLayout{Strays: []seam.Stray{{Name: filepath.Base(s.path), Path: s.path, Findings: fs}}}, nil
	}
	err = func() error {
		rows, err := s.db.QueryContext(ctx, "SELECT id FROM sessions ORDER BY id")
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				return err
			}
			l.Sessions = append(l.Sessions, id)
		}
		return rows.Err()
	}()
	switch {
	case err != nil && isCorrupt(err):
		fs = append(fs, seam.Finding{Class: seam.ClassDamage, Code: "database-read", Pos: seam.PathPos(s.path),
			Message: fmt.Sprintf("the sessions table cannot be read whole (%s): sessions after %d are not checked", driverText(err), len(l.Sessions))})
	case err != nil:
		return l, s.sqlErr("verify", "", err)
	}
	if len(fs) > 0 {
		l.Strays = []seam.Stray{{Name: filepath.Base(s.path), Path: s.path, Findings: fs}}
	}
	s.dbMu.Lock()
	s.dbc.reported = true
	s.dbMu.Unlock()
	return l, nil
}

// VerifyLog checks session id (seam.LogVerifier): its sessions row as the
// header, then every events row in seq order, each decoded and validated
// as reads do and handed to v, with seq contiguity checked here. A row
// that does not decode is damaged committed data, unless it is the
// session's final row and a packed row (store.md 6): readers skip that one
// as a torn row, and a repair removes it. When the database as a whole was not reported on by
// VerifyLayout, its findings come first.
func (s *Store) VerifyLog(ctx context.Context, id string, v seam.LogVisitor) (seam.LogSummary, error) {
	sum := seam.LogSummary{Location: s.location(0)}
	if err := s.check(ctx, "verify"); err != nil {
		return sum, err
	}
	fs, err := s.databaseFindings(ctx)
	if err != nil {
		return sum, err
	}
	s.dbMu.Lock()
	reported := s.dbc.reported
	s.dbMu.Unlock()
	if !reported {
		for _, f := range fs {
			v.Finding(f)
		}
	}
	r, found, err := s.loadSession(ctx, nil, id)
	switch {
	case err != nil && isCorrupt(err):
		v.Finding(seam.Finding{Class: seam.ClassDamage, Code: "database-read", Pos: seam.PathPos(s.path),
			Message: fmt.Sprintf("the sessions row cannot be read: %s", driverText(err))})
		v.Header(seam.Header{ID: id}, false)
		return sum, nil
	case err != nil:
		return sum, s.sqlErr("verify", id, err)
	case !found:
		return sum, seam.NotFound("verify", id)
	}
	sum.Location = s.location(int(r.version))
	hdr, err := r.header()
	hdrOK := err == nil
	switch {
	case errors.Is(err, seam.ErrUnsupportedFormat):
		v.Finding(seam.Finding{Class: seam.ClassDamage, Code: "header-unsupported", Pos: seam.PathPos(s.path),
			Message: fmt.Sprintf("%v; the session's rows are not checked", causeOf(err))})
		v.Header(seam.Header{ID: id, Version: seam.MaxVersion}, false)
		return sum, nil
	case err != nil:
		v.Finding(seam.Finding{Class: seam.ClassDamage, Code: "header-invalid", Pos: seam.PathPos(s.path),
			Message: fmt.Sprintf("sessions row: %v", causeOf(err))})
		v.Header(seam.Header{ID: id, Version: int(r.version)}, false)
	default:
		v.Header(hdr, true)
	}
	w := rowWalk{s: s, v: v, ver: int(r.version)}
	err = w.rows(ctx, id)
	// The size of a session is that of its rows (ScanOptions.MaxBytes's
	// measure), so that a repair's before and after differ by the row
	// it removed; the sessions row is the header line.
	sum.Size, sum.Lines = w.bytes, 1+w.rowsRead
	if err != nil {
		return sum, s.sqlErr("verify", id, err)
	}
	// v2+: the seed marker must sit where seed_length says (LogCheck
	// checks the marker against the header).
	if hdrOK && w.complete && hdr.Version >= 2 {
		if n, err := w.marker.Result(&hdr); err == nil && n != inheritedOf(&r, &hdr) {
			v.Finding(seam.Finding{Class: seam.ClassDamage, Code: "seed-length", Pos: seam.PathPos(s.path),
				Message: fmt.Sprintf("the seed marker is at seq %d, but the sessions row's seed_length is %d", n, inheritedOf(&r, &hdr))})
		}
	}
	return sum, nil
}

// rowWalk is one front-to-back check of a session's events rows.
type rowWalk struct {
	s        *Store
	v        seam.LogVisitor
	ver      int
	next     int64 // the seq the next row must start at
	resync   bool  // the next row sets next: a row before did not decode
	rowsRead int64
	bytes    int64 // the size of the rows read
	marker   seam.SeedMarker
	complete bool // every row was read
}

func (w *rowWalk) pos(seq int64) seam.Pos {
	p := seam.PathPos(w.s.path)
	p.Seq = seq
	return p
}

// rows reads the rows of session id. The error is operational; what is
// wrong with the data goes to w.v.
func (w *rowWalk) rows(ctx context.Context, id string) error {
	s := w.s
	src, err := s.eventRows(ctx, nil, false, "WHERE session_id = ?1 ORDER BY seq", id)
	if err != nil {
		return err
	}
	rows := s.prefetch(src.(*directRows), 0)
	defer rows.close()
	var bad *RawRow // the row before, when it does not decode
	var badErr error
	for {
		r, err := rows.next()
		if err != nil {
			if !isCorrupt(err) {
				return err
			}
			at := "the first row"
			if w.rowsRead > 0 {
				at = fmt.Sprintf("the row after seq %d", w.next-1)
			}
			w.v.Finding(seam.Finding{Class: seam.ClassDamage, Code: "database-read", Pos: w.pos(-1),
				Message: fmt.Sprintf("reading %s failed: %s; the rows after it are not checked", at, driverText(err))})
			return nil
		}
		if r == nil {
			break
		}
		if bad != nil {
			w.damaged(bad, badErr)
			bad = nil
		}
		w.rowsRead++
		w.bytes += r.size()
		rec, err := decodeRow(r, s.schema, w.ver, true) // LogCheck keeps no payload
		if err != nil {
			c := r.clone()
			bad, badErr, w.resync = &c, err, true
			continue
		}
		first := rec.FirstSeq()
		if w.resync {
			// The rows a damaged one stands for are not known.
			w.next, w.resync = first, false
		}
		if first != w.next {
			w.v.Finding(seam.Finding{Class: seam.ClassDamage, Code: gapCode(w.next, first), Pos: w.pos(first), Message: gapText(w.next, first)})
		}
		w.v.Record(&rec, w.pos(first))
		w.next = rec.NextSeq()
		if rec.Packed == nil {
			w.marker.Observe(&rec.Event)
		}
	}
	switch {
	case bad != nil && s.tornable(bad):
		// The final packed row: a torn row, which readers skip.
		w.v.Finding(seam.Finding{Class: seam.ClassNote, Code: "torn-row", Pos: w.pos(bad.Seq),
			Message: fmt.Sprintf("the final row, a packed row, does not decode (%s): readers skip it as a torn row", causeOf(badErr))})
		w.v.TornTail(w.pos(bad.Seq), bad.size())
	case bad != nil:
		w.damaged(bad, badErr)
	}
	w.complete = true
	return nil
}

// damaged reports row r, which does not decode and is no torn final row.
func (w *rowWalk) damaged(r *RawRow, cause error) {
	code, why := "row-decode", "a scalar row is written whole, in one transaction, so it is never a torn tail"
	if w.s.tornable(r) {
		code, why = "packed-row", "only a session's final packed row can be a torn tail"
	}
	w.v.Finding(seam.Finding{Class: seam.ClassDamage, Code: code, Pos: w.pos(r.Seq),
		Message: fmt.Sprintf("%s; damaged committed data, which dsh refuses (%s)", causeOf(cause), why)})
}

// gapCode and gapText describe a row that starts at seq got where seq
// want was due, in the words of inspect's check of JSONL records.
func gapCode(want, got int64) string {
	if got < want {
		return "seq-overlap"
	}
	return "seq-gap"
}

func gapText(want, got int64) string {
	switch {
	case got < want:
		return fmt.Sprintf("seq overlap: %d → %d (seq %d again)", want-1, got, got)
	case got > want+1:
		return fmt.Sprintf("seq gap: %d → %d (seqs %d–%d are missing)", want-1, got, want, got-1)
	}
	return fmt.Sprintf("seq gap: %d → %d (seq %d is missing)", want-1, got, want)
}

// isCorrupt reports whether err says the stored data is damaged (not an
// I/O failure or a cancellation).
func isCorrupt(err error) bool {
	if errors.Is(err, seam.ErrCorrupt) {
		return true
	}
	var c interface{ Code() int }
	if errors.As(err, &c) {
		switch c.Code() & 0xff {
		case sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB:
			return true
		}
	}
	return false
}

// driverText is the message of the SQLite error in err, without the words
// dshctl wraps it in; else err's cause.
func driverText(err error) string {
	var c interface {
		error
		Code() int
	}
	if errors.As(err, &c) {
		return c.Error()
	}
	return causeOf(err).Error()
}

// isCorrupt and driverText rely on the driver's errors having a Code
// method.
var _ interface{ Code() int } = (*sqlite.Error)(nil)

// TrimTail removes the torn final row plan names, when the write open
// found that same row (else it changes nothing: ErrTailMismatch), as an
// append does before it writes (seam.TailTrimmer): the row is saved to
// the backup directory first (fsynced), then deleted in a write
// transaction that checks the stored tail and revision, and the revision
// is bumped. A SQLite row is never partly committed, so there is nothing
// to salvage. A database that fails its integrity check is not changed.
func (h *handle) TrimTail(ctx context.Context, plan seam.TrimPlan) (seam.TrimResult, error) {
	var res seam.TrimResult
	if err := ctx.Err(); err != nil {
		return res, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.writable("repair"); err != nil {
		return res, err
	}
	w := h.w
	s := h.s
	var own []seam.Repair
	if !w.pending && w.torn != nil {
		own = []seam.Repair{w.torn.repair(s.path, "")}
	}
	if !seam.SameTails(own, plan.Tails) || plan.Rewrite != 0 || plan.Salvage != 0 {
		return res, &seam.Error{Kind: seam.ErrTailMismatch, Op: "repair", ID: h.id, Pos: seam.PathPos(s.path),
			Err: fmt.Errorf("verification under the lock found %s, but the write path finds %s; nothing was changed",
				seam.DescribeTails(plan.Tails), seam.DescribeTails(own))}
	}
	if len(own) == 0 {
		return res, nil
	}
	fs, err := s.databaseFindings(ctx)
	if err != nil {
		return res, err
	}
	for _, f := range fs {
		if f.Class == seam.ClassDamage {
			return res, &seam.Error{Kind: seam.ErrCorrupt, Op: "repair", ID: h.id, Pos: seam.PathPos(s.path),
				Err: fmt.Errorf("the database is damaged (%s): dshctl does not write to it", f.Message)}
		}
	}
	backup, err := s.backup("repair", h.id, w.torn)
	if err != nil {
		return res, err
	}
	err = s.inTx(ctx, "repair", h.id, func(tx *sql.Tx) error {
		if err := h.checkStored(ctx, tx, "repair"); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, "UPDATE sessions SET revision = revision + 1 WHERE id = ?", h.id)
		return err
	})
	if err != nil {
		return res, err
	}
	rp := w.torn.repair(s.path, backup)
	w.repairs = append(w.repairs, rp)
	w.torn = nil
	w.revision++
	res.Repairs = []seam.Repair{rp}
	return res, nil
}
