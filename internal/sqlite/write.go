package sqlite

import (
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/dshctl/dshctl/internal/procfd"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/dshctl/dshctl/internal/durable"
	"github.com/dshctl/dshctl/internal/seam"
)

// writer is the state of a write handle.
type writer struct {
	pending bool       // a create not stored yet
	owner   *ownership // the session's write lock; nil while pending
	next    int64      // next seq
	// lastFirst is the seq of the last committed row (-1: none): the
	// stored tail the next append expects.
	lastFirst int64
	// incarnation and revision are the session's revision as this handle
	// last stored or saw it; an append fails when they moved.
	incarnation string
	revision    int64
	// torn is the final row that does not decode; the next append removes
	// it, after saving it to the backup directory.
	torn    *RawRow
	repairs []seam.Repair
}

// Create reserves a new session. Nothing is written until the first
// Append or Flush; closing the handle before either erases the
// reservation.
func (s *Store) Create(ctx context.Context, h seam.Header, opts seam.CreateOptions) (seam.Handle, error) {
	if err := s.check(ctx, "create"); err != nil {
		return nil, err
	}
	if err := s.checkWritable("create", h.ID); err != nil {
		return nil, err
	}
	if err := seam.CheckCreate(h, opts); err != nil {
		return nil, err
	}
	if h.Version > s.MaxFormatVersion() {
		return nil, seam.Errorf(seam.ErrInvalid, "create", h.ID, seam.NoPos,
			"a schema-%d database holds log format v0 only (the dsh that writes it refuses any other), not v%d", s.schema, h.Version)
	}
	hd := &handle{s: s, id: h.ID, access: seam.Write, hdr: h, inherited: opts.InheritedEventCount,
		w: &writer{pending: true, lastFirst: -1}}
	if err := s.writers.Create(h.ID, hd); err != nil {
		return nil, err
	}
	_, found, err := s.loadSession(ctx, nil, h.ID)
	if err != nil || found {
		s.writers.Release(h.ID, hd)
		if err != nil {
			return nil, s.sqlErr("create", h.ID, err)
		}
		return nil, alreadyExists(h.ID)
	}
	s.ref()
	return hd, nil
}

// checkInUse refuses, before anything is written, a write to a database
// that another process (not dshctl, whose writers the lock keeps apart)
// has open for writing, where the OS tells (Options.ProbeWriters): dsh
// keeps its database open while it runs, and although every append checks
// the stored tail in its transaction, the append that then fails may be
// dsh's.
func (s *Store) checkInUse(ctx context.Context, id string) error {
	if !s.opts.ProbeWriters {
		return nil
	}
	hs, err := procfd.Writers(ctx, s.path, s.path+"-wal")
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err != nil || len(hs) == 0 {
		return nil
	}
	return &seam.Error{Kind: seam.ErrAlreadyOwned, Op: "open", ID: id, Pos: seam.PathPos(s.path),
		Err: &seam.InUseError{PID: hs[0].PID, Command: hs[0].Command, Path: hs[0].Path, AnyAccess: hs[0].AnyAccess}}
}

// MaxFormatVersion is the newest log format the database can hold: v0 in
// schema 14, whose dsh (0.0.1) refuses any other; every format in 17.
func (s *Store) MaxFormatVersion() int {
	if s.schema == Schema14 {
		return 0
	}
	return seam.MaxVersion
}

func alreadyExists(id string) error {
	return &seam.Error{Kind: seam.ErrAlreadyExists, Op: "create", ID: id, Pos: seam.NoPos,
		Err: fmt.Errorf("session %q already exists", id)}
}

// pendingSnapshot describes a create that is not stored yet.
func (h *handle) pendingSnapshot() seam.Snapshot {
	return seam.Snapshot{Header: h.hdr, Revision: "pending", Location: h.s.location(h.hdr.Version)}
}

// lock takes the session's write lock for op.
func (s *Store) lock(op, id string, busy error) (*ownership, error) {
	o, err := acquire(s.path, id)
	switch {
	case errors.Is(err, errBusy) || errors.Is(err, errInProcess):
		return nil, &seam.Error{Kind: busy, Op: op, ID: id, Pos: seam.PathPos(s.path + lockSuffix), Err: err}
	case err != nil:
		return nil, &seam.Error{Kind: seam.ErrIO, Op: op, ID: id, Pos: seam.PathPos(s.path + lockSuffix), Err: err}
	}
	return o, nil
}

// openWrite claims id, takes its lock and validates the whole session.
func (s *Store) openWrite(ctx context.Context, id string) (seam.Handle, error) {
	if err := s.checkWritable("open", id); err != nil {
		return nil, err
	}
	h := &handle{s: s, id: id, access: seam.Write, w: &writer{lastFirst: -1}}
	if err := s.writers.Claim("open", id, h); err != nil {
		return nil, err
	}
	if err := s.loadWriter(ctx, h); err != nil {
		if h.w.owner != nil {
			h.w.owner.release()
		}
		s.writers.Release(id, h)
		return nil, err
	}
	s.ref()
	return h, nil
}

func (s *Store) loadWriter(ctx context.Context, h *handle) error {
	r, found, err := s.loadSession(ctx, nil, h.id)
	if err != nil {
		return s.sqlErr("open", h.id, err)
	}
	if !found {
		return seam.NotFound("open", h.id)
	}
	if h.w.owner, err = s.lock("open", h.id, seam.ErrAlreadyOwned); err != nil {
		return err
	}
	if err := s.checkInUse(ctx, h.id); err != nil {
		return err
	}
	// Read the row again and the whole log in one transaction, now that
	// no other dshctl writer can change them.
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return s.sqlErr("open", h.id, err)
	}
	defer tx.Rollback()
	if r, found, err = s.loadSession(ctx, tx, h.id); err != nil || !found {
		if err == nil {
			return seam.NotFound("open", h.id)
		}
		return s.sqlErr("open", h.id, err)
	}
	if h.hdr, err = r.header(); err != nil {
		return s.rowErr("open", h.id, -1, err)
	}
	h.inherited = inheritedOf(&r, &h.hdr)
	end, err := s.forward(ctx, tx, h, 0, 0, false, true, func(*seam.Event) bool { return true })
	if err != nil {
		return s.sqlErr("open", h.id, err)
	}
	if err := h.checkMarker(&end); err != nil {
		return err
	}
	w := h.w
	w.next, w.lastFirst, w.torn = end.next, end.lastFirst, end.torn
	w.incarnation, w.revision = r.incarnation, r.revision
	return nil
}

// writable checks that h is an open write handle.
func (h *handle) writable(op string) error {
	return seam.CheckWritable(op, h.id, h.closed, h.access)
}

// Append validates the batch and stores it in one write transaction: it
// checks that the stored tail and revision are the ones this handle knows,
// removes a torn final row (saved to the backup directory first), inserts
// the batch's rows and bumps the revision once.
func (h *handle) Append(ctx context.Context, events []seam.Event) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.writable("append"); err != nil {
		return err
	}
	batch, err := seam.PrepareBatch(h.id, h.hdr.Version, h.w.next, events)
	if err != nil {
		return err
	}
	if len(batch) == 0 {
		return nil
	}
	rows, err := encodeRows(batch, h.s.schema, h.hdr.Version)
	if err != nil {
		return seam.Errorf(seam.ErrInvalid, "append", h.id, seam.NoPos, "%v", err)
	}
	if h.w.pending {
		return h.materialize(ctx, rows, int64(len(batch)))
	}
	return h.appendRows(ctx, rows, int64(len(batch)))
}

// Flush is a durability barrier. Appends are durable when they commit, so
// it only stores a created session that has no event yet.
func (h *handle) Flush(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.writable("flush"); err != nil {
		return err
	}
	if h.w.pending {
		return h.materialize(ctx, nil, 0)
	}
	return nil
}

// inTx runs fn in a write transaction (BEGIN IMMEDIATE, which waits up to
// the busy timeout for another connection's write lock) and commits.
func (s *Store) inTx(ctx context.Context, op, id string, fn func(tx *sql.Tx) error) error {
	if err := s.checkWrite(ctx, op, id); err != nil {
		return err
	}
	if err := s.ensureWAL(ctx); err != nil {
		return s.sqlErr(op, id, err)
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return s.sqlErr(op, id, err)
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return s.sqlErr(op, id, err)
	}
	err = tx.Commit()
	writes.Add(1) // even a failed commit may have committed
	return s.sqlErr(op, id, err)
}

const insertRow = `INSERT INTO events (session_id, seq, type, time, data, source_event_seqs, surface_op%s) VALUES (?, ?, ?, ?, ?, ?, ?%s)`

// insertRows inserts rows of session id.
func (s *Store) insertRows(ctx context.Context, tx *sql.Tx, id string, rows []row) error {
	if len(rows) == 0 {
		return nil
	}
	q := fmt.Sprintf(insertRow, "", "")
	if s.schema == Schema17 {
		q = fmt.Sprintf(insertRow, ", ignorable", ", ?")
	}
	stmt, err := tx.PrepareContext(ctx, q)
	if err != nil {
		return err
	}
	defer stmt.Close()
	for _, r := range rows {
		args := []any{id, r.seq, r.typ, r.time, r.data, r.seqs, r.surfaceOp}
		if s.schema == Schema17 {
			args = append(args, r.ignorable)
		}
		if _, err := stmt.ExecContext(ctx, args...); err != nil {
			return err
		}
	}
	return nil
}

// materialize stores a created session with its first rows (n events).
// Another writer storing the same id first makes it ErrAlreadyExists.
func (h *handle) materialize(ctx context.Context, rows []row, n int64) error {
	return h.materializeWith(ctx, n > 0, rowsInserter(h, rows, n))
}

// rowsInserter inserts rows (n events) for materializeWith and
// appendRowsWith.
func rowsInserter(h *handle, rows []row, n int64) inserter {
	return func(ctx context.Context, tx *sql.Tx) (int64, int64, error) {
		if err := h.s.insertRows(ctx, tx, h.id, rows); err != nil {
			return 0, 0, err
		}
		if len(rows) == 0 {
			return 0, -1, nil
		}
		return n, rows[len(rows)-1].seq, nil
	}
}

// inserter inserts the rows of a batch in tx and returns the events they
// hold and the seq of the last row (-1: none).
type inserter func(ctx context.Context, tx *sql.Tx) (n, lastFirst int64, err error)

// materializeWith is materialize with the rows inserted by insert; events
// says whether it inserts any.
func (h *handle) materializeWith(ctx context.Context, events bool, insert inserter) error {
	s, w := h.s, h.w
	owner, err := s.lock("create", h.id, seam.ErrAlreadyExists)
	if err != nil {
		return err
	}
	incarnation, err := newToken()
	if err != nil {
		owner.release()
		return &seam.Error{Kind: seam.ErrIO, Op: "create", ID: h.id, Pos: seam.NoPos, Err: err}
	}
	var revision int64
	if events {
		revision = 1
	}
	var n, lastFirst int64 = 0, -1
	hd := &h.hdr
	var seed any
	switch {
	case hd.Version < 2 && hd.SeedLength != nil:
		seed = *hd.SeedLength
	case hd.Version >= 2 && hd.Seeded():
		seed = h.inherited
	}
	exists := false
	err = s.inTx(ctx, "create", h.id, func(tx *sql.Tx) error {
		if _, found, err := s.loadSession(ctx, tx, h.id); err != nil || found {
			exists = found
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO sessions (id, `+sessionCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			h.id, hd.Version, hd.CreatedAt, nullString(hd.Cwd), nullString(hd.ParentSession), seed, nullString(hd.Origin),
			hd.DelegationDepth, nullString(hd.AgentPreset), incarnation, revision); err != nil {
			return err
		}
		var err error
		n, lastFirst, err = insert(ctx, tx)
		return err
	})
	if err == nil && exists {
		err = alreadyExists(h.id)
	}
	if err != nil {
		owner.release()
		return err
	}
	w.pending, w.owner = false, owner
	h.s.writers.EndPending(h.id, h)
	w.next, w.incarnation, w.revision = n, incarnation, revision
	if lastFirst >= 0 {
		w.lastFirst = lastFirst
	}
	return nil
}

func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// appendRows stores rows holding n events after the stored tail.
func (h *handle) appendRows(ctx context.Context, rows []row, n int64) error {
	return h.appendRowsWith(ctx, rowsInserter(h, rows, n))
}

// appendRowsWith is appendRows with the rows inserted by insert.
func (h *handle) appendRowsWith(ctx context.Context, insert inserter) error {
	s, w := h.s, h.w
	var backup string
	if w.torn != nil {
		var err error
		if backup, err = s.backup("append", h.id, w.torn); err != nil {
			return err
		}
	}
	var n, lastFirst int64
	err := s.inTx(ctx, "append", h.id, func(tx *sql.Tx) error {
		if err := h.checkStored(ctx, tx, "append"); err != nil {
			return err
		}
		var err error
		if n, lastFirst, err = insert(ctx, tx); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, "UPDATE sessions SET revision = revision + 1 WHERE id = ?", h.id)
		return err
	})
	if err != nil {
		return err
	}
	if w.torn != nil {
		w.repairs = append(w.repairs, w.torn.repair(s.path, backup))
		w.torn = nil
	}
	w.next += n
	w.revision++
	w.lastFirst = lastFirst
	return nil
}

// checkStored checks, in the write transaction tx, that the session is as
// this handle stored or found it (revision, stored tail), and deletes the
// torn final row it found.
func (h *handle) checkStored(ctx context.Context, tx *sql.Tx, op string) error {
	s, w := h.s, h.w
	lost := func(format string, args ...any) error {
		return &seam.Error{Kind: seam.ErrOwnershipLost, Op: op, ID: h.id, Pos: seam.PathPos(s.path), Err: fmt.Errorf(format, args...)}
	}
	r, found, err := s.loadSession(ctx, tx, h.id)
	if err != nil {
		return err
	}
	if !found {
		return lost("the session was deleted")
	}
	if r.incarnation != w.incarnation || r.revision != w.revision {
		return lost("another writer changed the session (revision %s, this handle stored %s:%d)", r.revisionToken(), w.incarnation, w.revision)
	}
	if w.torn != nil {
		res, err := tx.ExecContext(ctx, "DELETE FROM events WHERE session_id = ? AND seq = ?", h.id, w.torn.Seq)
		if err != nil {
			return err
		}
		if k, err := res.RowsAffected(); err != nil || k != 1 {
			return lost("the torn row at seq %d is gone", w.torn.Seq)
		}
	}
	var last sql.NullInt64
	if err := tx.QueryRowContext(ctx, "SELECT max(seq) FROM events WHERE session_id = ?", h.id).Scan(&last); err != nil {
		return err
	}
	if stored := nullInt(last); stored != w.lastFirst {
		return lost("the stored tail is the row at seq %d, not %d", stored, w.lastFirst)
	}
	return nil
}

func nullInt(v sql.NullInt64) int64 {
	if !v.Valid {
		return -1
	}
	return v.Int64
}

// Repairs returns the torn rows this write handle removed before its
// appends, oldest first; nil for a read handle. It implements
// seam.TailRepairer.
func (h *handle) Repairs() []seam.Repair {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.w == nil {
		return nil
	}
	return slices.Clone(h.w.repairs)
}

var _ seam.TailRepairer = (*handle)(nil)

// backedUpRow is how a removed row is saved: every column as stored, data
// and source_event_seqs as text or, for BLOBs, base64.
type backedUpRow struct {
	Database  string  `json:"database"`
	SessionID string  `json:"sessionId"`
	Seq       int64   `json:"seq"`
	Type      string  `json:"type"`
	Time      int64   `json:"time"`
	Data      *string `json:"data,omitempty"`
	DataBlob  *string `json:"dataBase64,omitempty"`
	Seqs      *string `json:"sourceEventSeqs,omitempty"`
	SeqsBlob  *string `json:"sourceEventSeqsBase64,omitempty"`
	SurfaceOp *string `json:"surfaceOp,omitempty"`
	Ignorable *int64  `json:"ignorable,omitempty"`
}

// backup saves row r of session id to <BackupDir>/<safe id>/<time>-seq<N>.json
// and fsyncs it and its directory, for op.
func (s *Store) backup(op, id string, r *RawRow) (string, error) {
	fail := func(err error) error {
		return &seam.Error{Kind: seam.ErrIO, Op: op, ID: id, Pos: seam.Pos{Path: s.path, Offset: -1, Frame: -1, Line: -1, Seq: r.Seq},
			Err: fmt.Errorf("saving the torn row before removing it: %w", err)}
	}
	if s.opts.BackupDir == "" {
		return "", fail(seam.ErrNoBackupDir)
	}
	b := backedUpRow{Database: s.path, SessionID: id, Seq: r.Seq, Type: r.Type, Time: r.Time}
	text := func(p []byte, blob bool) (*string, *string) {
		v := string(p)
		if blob {
			v = base64.StdEncoding.EncodeToString(p)
			return nil, &v
		}
		return &v, nil
	}
	b.Data, b.DataBlob = text(r.Data, r.DataBlob)
	if r.Seqs != nil {
		b.Seqs, b.SeqsBlob = text(r.Seqs, r.SeqsBlob)
	}
	if r.SurfaceOp != nil {
		b.SurfaceOp, _ = text(r.SurfaceOp, false)
	}
	if r.Ignorable >= 0 {
		b.Ignorable = &r.Ignorable
	}
	content, err := json.Marshal(b)
	if err != nil {
		return "", fail(err)
	}
	dir := filepath.Join(s.opts.BackupDir, seam.SafeName(id))
	if err := durable.MkdirAll(durable.OS, dir, 0o700); err != nil {
		return "", fail(err)
	}
	name := fmt.Sprintf("%s-seq%d.json", time.Now().UTC().Format("20060102T150405.000000000Z"), r.Seq)
	path := filepath.Join(dir, name)
	f, err := durable.CreateIn(dir, name, 0o600) // never through a linked folder
	if err != nil {
		return "", fail(err)
	}
	_, err = f.Write(append(content, '\n'))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = durable.SyncDir(dir)
	}
	if err != nil {
		os.Remove(path)
		return "", fail(err)
	}
	return path, nil
}

// Flush stores every created session of the store that has no event yet
// and joins the handles' errors.
func (s *Store) Flush(ctx context.Context) error {
	var errs []error
	for _, h := range s.writers.Owners() {
		if err := h.Flush(ctx); err != nil && !errors.Is(err, seam.ErrHandleClosed) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// AppendStream implements seam.StreamAppender: the whole batch is one
// transaction, its chunks inserted as they come, so it is all or nothing
// whatever its size. Rows are packed (schema 17, v0/v1) within a chunk.
func (h *handle) AppendStream(ctx context.Context, next func() ([]seam.Event, error)) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.writable("append"); err != nil {
		return err
	}
	chunk, err := next()
	if err != nil || len(chunk) == 0 {
		return err
	}
	seq := h.w.next
	insert := func(ctx context.Context, tx *sql.Tx) (int64, int64, error) {
		var n, last int64 = 0, -1
		for len(chunk) > 0 {
			if err := ctx.Err(); err != nil {
				return n, last, err
			}
			batch, err := seam.PrepareBatchAlias(h.id, h.hdr.Version, seq, chunk)
			if err != nil {
				return n, last, err
			}
			rows, err := encodeRows(batch, h.s.schema, h.hdr.Version)
			if err != nil {
				return n, last, seam.Errorf(seam.ErrInvalid, "append", h.id, seam.NoPos, "%v", err)
			}
			if err := h.s.insertRows(ctx, tx, h.id, rows); err != nil {
				return n, last, err
			}
			n += int64(len(batch))
			seq += int64(len(batch))
			last = rows[len(rows)-1].seq
			if chunk, err = next(); err != nil {
				return n, last, err
			}
		}
		return n, last, nil
	}
	if h.w.pending {
		return h.materializeWith(ctx, true, insert)
	}
	return h.appendRowsWith(ctx, insert)
}
