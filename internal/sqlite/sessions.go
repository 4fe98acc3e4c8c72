package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"sort"
	"strconv"
	"strings"

	"github.com/dshctl/dshctl/internal/seam"
)

// sessionCols are the columns of a sessions row that sessionRow scans.
const sessionCols = "version, created_at, cwd, parent_session, seed_length, origin, delegation_depth, agent_preset, incarnation, revision"

// sessionRow is a sessions row: the header in columns and the revision.
type sessionRow struct {
	id                          string
	version                     int64
	createdAt                   int64
	cwd, parent, origin, preset sql.NullString
	seedLength, depth           sql.NullInt64
	incarnation                 string
	revision                    int64
}

func (r *sessionRow) dest() []any {
	return []any{&r.version, &r.createdAt, &r.cwd, &r.parent, &r.seedLength, &r.origin, &r.depth, &r.preset, &r.incarnation, &r.revision}
}

// revisionToken is the session's revision: its incarnation, set at
// creation, and its revision, bumped by every append.
func (r *sessionRow) revisionToken() string {
	return r.incarnation + ":" + strconv.FormatInt(r.revision, 10)
}

// header returns the header the row holds. The columns map to header
// fields one to one, but for two rules: a NULL delegation_depth is 0 (the
// value dsh's writers emit; its live path left the column NULL) with
// NoDelegationDepth set, so that it is shown as absent, and from
// v2 on a header is seeded exactly when seed_length is set, which then
// holds the inherited event count. The header is then checked as a header
// line would be.
func (r *sessionRow) header() (seam.Header, error) {
	// A version dshctl does not know fails ParseHeader below, before the
	// shape, as ErrUnsupportedFormat.
	h := seam.Header{ID: r.id, Version: int(r.version), CreatedAt: r.createdAt, DelegationDepth: r.depth.Int64}
	for _, f := range []struct {
		col sql.NullString
		dst *string
		key string
	}{{r.cwd, &h.Cwd, "cwd"}, {r.parent, &h.ParentSession, "parent_session"}, {r.origin, &h.Origin, "origin"}, {r.preset, &h.AgentPreset, "agent_preset"}} {
		if f.col.Valid && f.col.String == "" {
			return h, corruptf("header: empty %s (NULL when absent)", f.key)
		}
		*f.dst = f.col.String
	}
	if r.seedLength.Valid && r.seedLength.Int64 < 0 {
		return h, corruptf("header: negative seed_length %d", r.seedLength.Int64)
	}
	if h.Version < 2 {
		if r.seedLength.Valid {
			n := r.seedLength.Int64
			h.SeedLength = &n
		}
	} else {
		seeded := r.seedLength.Valid
		h.IsSeeded = &seeded
	}
	parsed, err := seam.ParseHeader(h.AppendJSON(nil))
	if err != nil {
		return h, err
	}
	if parsed.ID != r.id {
		return h, corruptf("header id %q does not match session %q", parsed.ID, r.id)
	}
	parsed.NoDelegationDepth = !r.depth.Valid
	return parsed, nil
}

// loadSession reads the sessions row of id; found is false when there is
// none.
func (s *Store) loadSession(ctx context.Context, q querier, id string) (sessionRow, bool, error) {
	r := sessionRow{id: id}
	rows, err := s.query(ctx, q, "SELECT "+sessionCols+" FROM sessions WHERE id = ?", id)
	if err != nil {
		return r, false, err
	}
	defer rows.Close()
	if !rows.Next() {
		return r, false, rows.Err()
	}
	if err := rows.Scan(r.dest()...); err != nil {
		return r, false, err
	}
	return r, true, rows.Close()
}

// tail is what the last rows of a session say: the next seq, and the final
// packed row when it does not decode (a torn row, which readers skip and
// the next append removes).
type tail struct {
	next      int64
	lastFirst int64 // seq of the last committed row; -1 when none
	torn      *RawRow
	tornErr   error
	last      seam.Record // the last committed record, when there is one
}

// events returns the events of the last committed record.
func (t *tail) events() []seam.Event {
	if t.lastFirst < 0 {
		return nil
	}
	return t.last.Events()
}

// readTail reads the last two rows of session id (by seq, through the
// primary key) and returns its tail. Only a final packed row may be torn.
func (s *Store) readTail(ctx context.Context, q querier, id string, v int) (tail, error) {
	t := tail{lastFirst: -1}
	rows, err := s.query(ctx, q, "SELECT "+s.rowCols()+" FROM events WHERE session_id = ? ORDER BY seq DESC LIMIT 2", id)
	if err != nil {
		return t, err
	}
	defer rows.Close()
	var sc rowScanner
	for i := 0; rows.Next(); i++ {
		r, err := sc.scan(rows)
		if err != nil {
			return t, err
		}
		rec, err := decodeRow(r, s.schema, v, false)
		if err != nil {
			if i > 0 || !errors.Is(err, seam.ErrCorrupt) || !s.tornable(r) {
				return t, s.rowErr("stat", id, r.Seq, err)
			}
			c := r.clone()
			t.torn, t.tornErr = &c, err
			continue
		}
		t.next, t.lastFirst, t.last = rec.NextSeq(), rec.FirstSeq(), rec
		return t, nil
	}
	return t, rows.Err()
}

// rowErr places a row's error in the database at seq.
func (s *Store) rowErr(op, id string, seq int64, err error) error {
	var e *seam.Error
	if errors.As(err, &e) && e.Pos.Path == "" {
		c := *e
		c.Op, c.ID = op, id
		c.Pos = seam.Pos{Path: s.path, Offset: -1, Frame: -1, Line: -1, Seq: seq}
		return &c
	}
	return s.sqlErr(op, id, err)
}

// snapshot builds a Snapshot from a sessions row and its tail.
func (s *Store) snapshot(r *sessionRow, h seam.Header, t *tail) seam.Snapshot {
	snap := seam.Snapshot{Header: h, Revision: r.revisionToken(), EventCount: t.next, SizeBytes: s.size(),
		Location: s.location(h.Version)}
	if t.torn != nil {
		snap.Location.TornBytes = t.torn.size()
	}
	return snap
}

// Stat returns the metadata of a session from its sessions row and its
// last row, in one read transaction.
func (s *Store) Stat(ctx context.Context, id string) (seam.Snapshot, error) {
	if err := s.check(ctx, "stat"); err != nil {
		return seam.Snapshot{}, err
	}
	if h, ok := s.writers.Pending(id); ok {
		return h.pendingSnapshot(), nil
	}
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return seam.Snapshot{}, s.sqlErr("stat", id, err)
	}
	defer tx.Rollback()
	return s.statIn(ctx, tx, id)
}

// statIn is Stat reading in q.
func (s *Store) statIn(ctx context.Context, q querier, id string) (seam.Snapshot, error) {
	r, found, err := s.loadSession(ctx, q, id)
	if err != nil {
		return seam.Snapshot{}, s.sqlErr("stat", id, err)
	}
	if !found {
		return seam.Snapshot{}, seam.NotFound("stat", id)
	}
	snap := seam.Snapshot{Header: seam.Header{ID: id}, Location: s.location(int(r.version))}
	h, err := r.header()
	if err != nil {
		return snap, s.rowErr("stat", id, -1, err)
	}
	t, err := s.readTail(ctx, q, id, h.Version)
	if err != nil {
		return snap, s.sqlErr("stat", id, err)
	}
	return s.snapshot(&r, h, &t), nil
}

// List returns every session of the store, sorted by id, with the pending
// creates of this store. One statement reads every sessions row with its
// last events row (found through the primary key); a session whose last
// row is torn costs one more lookup.
func (s *Store) List(ctx context.Context) ([]seam.Entry, error) {
	var out []seam.Entry
	err := s.list(ctx, "list", func(e seam.Entry, _ *sessionRow, _ []seam.Event) { out = append(out, e) })
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, e := range out {
		seen[e.Snapshot.Header.ID] = true
	}
	for _, h := range s.writers.PendingOwners() {
		if !seen[h.id] {
			out = append(out, seam.Entry{Snapshot: h.pendingSnapshot()})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Snapshot.Header.ID < out[j].Snapshot.Header.ID })
	return out, nil
}

// list visits every stored session in one read transaction, with its row
// and the events of its last committed row ([]seam.Event{} when it has
// none).
func (s *Store) list(ctx context.Context, op string, visit func(seam.Entry, *sessionRow, []seam.Event)) error {
	if err := s.check(ctx, op); err != nil {
		return err
	}
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return s.sqlErr(op, "", err)
	}
	defer tx.Rollback()
	return s.listIn(ctx, tx, op, visit)
}

// listIn is list in the read transaction tx.
func (s *Store) listIn(ctx context.Context, q querier, op string, visit func(seam.Entry, *sessionRow, []seam.Event)) error {
	rows, err := s.query(ctx, q, `SELECT s.id, `+prefixed("s.", sessionCols)+`, e.seq IS NOT NULL, `+s.rowColsOf("e.")+`
		FROM sessions s LEFT JOIN events e ON e.session_id = s.id AND e.seq = (SELECT max(seq) FROM events WHERE session_id = s.id)
		ORDER BY s.id`)
	if err != nil {
		return s.sqlErr(op, "", err)
	}
	defer rows.Close()
	size := s.size()
	var sc rowScanner
	type tornEntry struct {
		entry seam.Entry
		row   sessionRow
	}
	var torn []tornEntry
	for rows.Next() {
		var r sessionRow
		var hasRow bool
		dest := append(append([]any{&r.id}, r.dest()...), &hasRow)
		er, err := sc.scanWith(rows, dest, true)
		if err != nil {
			return s.sqlErr(op, "", err)
		}
		snap := seam.Snapshot{Header: seam.Header{ID: r.id}, Revision: r.revisionToken(), SizeBytes: size, Location: s.location(int(r.version))}
		h, err := r.header()
		if err != nil {
			visit(seam.Entry{Snapshot: snap, Err: s.rowErr(op, r.id, -1, err)}, &r, nil)
			continue
		}
		snap.Header = h
		last := []seam.Event{}
		if hasRow {
			rec, err := decodeRow(er, s.schema, h.Version, false)
			if err != nil && !s.tornable(er) {
				visit(seam.Entry{Snapshot: snap, Err: s.rowErr(op, r.id, er.Seq, err)}, &r, nil)
				continue
			}
			if err != nil {
				// A torn final row: its predecessor gives the count.
				torn = append(torn, tornEntry{seam.Entry{Snapshot: snap}, r})
				continue
			}
			snap.EventCount = rec.NextSeq()
			last = rec.Events()
		}
		visit(seam.Entry{Snapshot: snap}, &r, last)
	}
	if err := rows.Err(); err != nil {
		return s.sqlErr(op, "", err)
	}
	for _, te := range torn {
		t, err := s.readTail(ctx, q, te.row.id, te.entry.Snapshot.Header.Version)
		if err != nil {
			te.entry.Err = s.sqlErr(op, te.row.id, err)
		} else {
			te.entry.Snapshot = s.snapshot(&te.row, te.entry.Snapshot.Header, &t)
		}
		visit(te.entry, &te.row, append([]seam.Event{}, t.events()...))
	}
	return nil
}

// ListOpen visits every session List returns with a read handle made from
// the rows the listing read, without another query per session. The
// listing and the handles' reads share one pinned connection and read
// transaction, which costs far less than a transaction per statement; a
// handle leaves it for a fresh one as soon as a store of the process
// commits a write, so that a read started after an Append returns sees it.
// The visits run one after another: on two cores, several connections
// listing at once were slower (each has its own page cache).
func (s *Store) ListOpen(ctx context.Context, found func(n int), visit func(e seam.Entry, h seam.Handle, err error)) error {
	return s.ListOpenOrdered(ctx, func(heads []seam.Entry) []int {
		if found != nil {
			found(len(heads))
		}
		order := make([]int, len(heads))
		for i := range order {
			order[i] = i
		}
		return order
	}, func(_ int, e seam.Entry, h seam.Handle, err error) { visit(e, h, err) })
}

var _ seam.OrderedLister = (*Store)(nil)

// ListOpenOrdered is ListOpen in an order the caller picks from the
// sessions' headers (seam.OrderedLister); ListOpen is built on it. The one
// statement that lists the store reads every header and last row at once,
// so the order costs no extra read.
func (s *Store) ListOpenOrdered(ctx context.Context, order func([]seam.Entry) []int, visit func(int, seam.Entry, seam.Handle, error)) error {
	if err := s.check(ctx, "list"); err != nil {
		return err
	}
	pin, err := s.pin(ctx)
	if err != nil {
		return s.sqlErr("list", "", err)
	}
	defer pin.close()
	before := writes.Load()
	type item struct {
		row  sessionRow
		last []seam.Event
	}
	var (
		items []item
		heads []seam.Entry
	)
	err = s.listIn(ctx, pin, "list", func(e seam.Entry, r *sessionRow, last []seam.Event) {
		items = append(items, item{*r, last})
		heads = append(heads, e)
	})
	if err != nil {
		return err
	}
	pending := s.writers.PendingOwners()
	for _, p := range pending {
		heads = append(heads, seam.Entry{Snapshot: p.pendingSnapshot()})
	}
	perm := order(heads)
	if err := seam.CheckOrder(perm, len(heads)); err != nil {
		return err
	}
	for pos, i := range perm {
		if err := ctx.Err(); err != nil {
			return err
		}
		e := heads[i]
		if i >= len(items) {
			p := pending[i-len(items)]
			h := &handle{s: s, id: p.id, access: seam.Read, hdr: p.hdr, inherited: p.inherited}
			s.ref()
			visit(pos, e, h, nil)
			h.Close()
			continue
		}
		if e.Err != nil {
			visit(pos, e, nil, nil)
			continue
		}
		h, err := s.readHandle(ctx, &items[i].row, e.Snapshot.Header, items[i].last)
		if err != nil {
			visit(pos, e, nil, err)
			continue
		}
		h.pin, h.pinWrites = pin, before
		visit(pos, e, h, nil)
		h.Close()
	}
	return nil
}

func prefixed(prefix, cols string) string {
	parts := strings.Split(cols, ",")
	for i, c := range parts {
		parts[i] = prefix + strings.TrimSpace(c)
	}
	return strings.Join(parts, ", ")
}
