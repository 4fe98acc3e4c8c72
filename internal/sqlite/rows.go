package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"iter"

	"github.com/dshctl/dshctl/internal/seam"
)

// rowCols are the columns of an events row that rowScanner scans: flags
// tell a BLOB from TEXT and NULL from an empty value, since the driver
// hands both as bytes.
func (s *Store) rowCols() string { return s.rowColsOf("") }

func (s *Store) rowColsOf(p string) string {
	ignorable := "NULL"
	if s.schema == Schema17 {
		ignorable = p + "ignorable"
	}
	return p + "seq, " + p + "type, " + p + "time, " +
		"((typeof(" + p + "data) = 'blob') | ((typeof(" + p + "source_event_seqs) = 'blob') << 1) | ((" + p + "source_event_seqs IS NULL) << 2) | ((" + p + "surface_op IS NULL) << 3)), " +
		"CAST(" + p + "data AS BLOB), CAST(" + p + "source_event_seqs AS BLOB), CAST(" + p + "surface_op AS BLOB), " + ignorable
}

const (
	flagDataBlob = 1 << iota
	flagSeqsBlob
	flagSeqsNull
	flagSurfaceNull
)

// rowScanner scans events rows into a RawRow whose byte fields alias
// the driver's buffers until the next scan.
type rowScanner struct {
	r               RawRow
	seq, time, typ  any
	flags           sql.NullInt64
	data, seqs, sop sql.RawBytes
	ign             any
	// withLast scans one more column into last: whether the row is the
	// session's final row.
	withLast bool
	last     sql.NullBool
	dest     []any
}

func (sc *rowScanner) scan(rows *sql.Rows) (*RawRow, error) {
	return sc.scanWith(rows, nil, false)
}

// scanWith scans a row whose first columns go to prefix and the rest are
// rowCols; with nullable the events columns may all be NULL (an outer
// join without a row), which is not an error. Columns of the wrong type
// (only a damaged file holds them: the tables are STRICT) are ErrCorrupt,
// as directRows.next says.
func (sc *rowScanner) scanWith(rows *sql.Rows, prefix []any, nullable bool) (*RawRow, error) {
	sc.dest = append(append(sc.dest[:0], prefix...), &sc.seq, &sc.typ, &sc.time, &sc.flags, &sc.data, &sc.seqs, &sc.sop, &sc.ign)
	if sc.withLast {
		sc.dest = append(sc.dest, &sc.last)
	}
	if err := rows.Scan(sc.dest...); err != nil {
		return nil, err
	}
	if sc.seq == nil && nullable {
		return nil, nil
	}
	r := &sc.r
	*r = RawRow{Ignorable: -1}
	var err error
	if r.Seq, err = intValue(sc.seq, "seq"); err != nil {
		return nil, err
	}
	if r.Time, err = intValue(sc.time, "time"); err != nil {
		return nil, err
	}
	switch t := sc.typ.(type) {
	case string:
		r.Type = t
	case nil:
	default:
		return nil, corruptf("row seq %d: type is not text", r.Seq)
	}
	f := sc.flags.Int64
	r.Data, r.DataBlob = nonNil(sc.data), f&flagDataBlob != 0
	if f&flagSeqsNull == 0 {
		r.Seqs, r.SeqsBlob = nonNil(sc.seqs), f&flagSeqsBlob != 0
	}
	if f&flagSurfaceNull == 0 {
		r.SurfaceOp = nonNil(sc.sop)
	}
	switch v := sc.ign.(type) {
	case nil:
	case int64:
		r.Ignorable = v
	default:
		return nil, corruptf("row seq %d: ignorable is not an integer", r.Seq)
	}
	return r, nil
}

// intValue is the integer column name of an events row.
func intValue(v any, name string) (int64, error) {
	switch v := v.(type) {
	case int64:
		return v, nil
	case nil:
		return 0, corruptf("events row without %s", name)
	}
	return 0, corruptf("events row: %s is not an integer", name)
}

// rowSource is a running query of events rows.
type rowSource interface {
	// next returns the next row, valid until the following call; nil at
	// the end.
	next() (*RawRow, error)
	// isFinal reports, for a query that selects it, whether the row read
	// last is its session's last row.
	isFinal() bool
	close() error
}

// sqlRows is a rowSource of database/sql.
type sqlRows struct {
	rows *sql.Rows
	sc   rowScanner
}

func (r *sqlRows) next() (*RawRow, error) {
	if !r.rows.Next() {
		return nil, r.rows.Err()
	}
	return r.sc.scan(r.rows)
}

func (r *sqlRows) isFinal() bool { return r.sc.last.Bool }
func (r *sqlRows) close() error  { return r.rows.Close() }

// finalCol is the column that says whether a row is its session's last
// (the session id is the query's first parameter).
const finalCol = "seq = (SELECT max(seq) FROM events WHERE session_id = ?1)"

// eventRows runs "SELECT <events row> FROM events <rest>" with args, with
// final one more column that says whether each row is its session's last
// row: in q when it is not nil (a transaction, a pinned connection), else
// on a direct connection.
func (s *Store) eventRows(ctx context.Context, q querier, final bool, rest string, args ...any) (rowSource, error) {
	if q == nil {
		cols := "seq, type, time, data, source_event_seqs, surface_op, NULL"
		if s.schema == Schema17 {
			cols = "seq, type, time, data, source_event_seqs, surface_op, ignorable"
		}
		if final {
			cols += ", " + finalCol
		}
		return s.queryDirect(ctx, "SELECT "+cols+" FROM events "+rest, final, args...)
	}
	cols := s.rowCols()
	if final {
		cols += ", " + finalCol
	}
	rows, err := s.query(ctx, q, "SELECT "+cols+" FROM events "+rest, args...)
	if err != nil {
		return nil, err
	}
	return &sqlRows{rows: rows, sc: rowScanner{withLast: final}}, nil
}

func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// clone returns a copy of r that owns its bytes.
func (r *RawRow) clone() RawRow {
	c := *r
	c.inflated, c.plain, c.plainErr = false, nil, nil
	c.Data = bytes.Clone(r.Data)
	if r.Seqs != nil {
		c.Seqs = append([]byte{}, r.Seqs...)
	}
	if r.SurfaceOp != nil {
		c.SurfaceOp = append([]byte{}, r.SurfaceOp...)
	}
	return c
}

// RawRows streams the rows of session id as stored, in seq order, for
// `cat --raw` and verify: nothing is decoded or validated.
func (s *Store) RawRows(ctx context.Context, id string) iter.Seq2[RawRow, error] {
	return func(yield func(RawRow, error) bool) {
		if err := s.check(ctx, "raw"); err != nil {
			yield(RawRow{}, err)
			return
		}
		if _, found, err := s.loadSession(ctx, nil, id); err != nil || !found {
			if err == nil {
				err = seam.NotFound("raw", id)
			}
			yield(RawRow{}, s.sqlErr("raw", id, err))
			return
		}
		rows, err := s.eventRows(ctx, nil, false, "WHERE session_id = ?1 ORDER BY seq", id)
		if err != nil {
			yield(RawRow{}, s.sqlErr("raw", id, err))
			return
		}
		defer rows.close()
		for {
			r, err := rows.next()
			if err != nil {
				yield(RawRow{}, s.rowErr("raw", id, -1, err))
				return
			}
			if r == nil || !yield(r.clone(), nil) {
				return
			}
		}
	}
}

// DecodeRow decodes and validates one raw row of a session of log format
// version, as reads do: the record, or an ErrCorrupt error naming the
// database and seq. Vocabulary and contiguity are the caller's, as with
// seam.DecodeRecord.
func (s *Store) DecodeRow(r *RawRow, version int) (seam.Record, error) {
	rec, err := decodeRow(r, s.schema, version, false)
	if err != nil {
		return rec, s.rowErr("verify", "", r.Seq, err)
	}
	return rec, nil
}
