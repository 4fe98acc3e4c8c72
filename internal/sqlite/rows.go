package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
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
	r                RawRow
	seq, time, flags sql.NullInt64
	typ              sql.NullString
	data, seqs, sop  sql.RawBytes
	ign              sql.NullInt64
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
// join without a row), which is not an error.
func (sc *rowScanner) scanWith(rows *sql.Rows, prefix []any, nullable bool) (*RawRow, error) {
	sc.dest = append(append(sc.dest[:0], prefix...), &sc.seq, &sc.typ, &sc.time, &sc.flags, &sc.data, &sc.seqs, &sc.sop, &sc.ign)
	if sc.withLast {
		sc.dest = append(sc.dest, &sc.last)
	}
	if err := rows.Scan(sc.dest...); err != nil {
		return nil, err
	}
	if !sc.seq.Valid {
		if nullable {
			return nil, nil
		}
		return nil, errors.New("events row without seq")
	}
	r := &sc.r
	*r = RawRow{Seq: sc.seq.Int64, Time: sc.time.Int64, Type: sc.typ.String, Ignorable: -1}
	f := sc.flags.Int64
	r.Data, r.DataBlob = nonNil(sc.data), f&flagDataBlob != 0
	if f&flagSeqsNull == 0 {
		r.Seqs, r.SeqsBlob = nonNil(sc.seqs), f&flagSeqsBlob != 0
	}
	if f&flagSurfaceNull == 0 {
		r.SurfaceOp = nonNil(sc.sop)
	}
	if sc.ign.Valid {
		r.Ignorable = sc.ign.Int64
	}
	return r, nil
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
		rows, err := s.query(ctx, nil, "SELECT "+s.rowCols()+" FROM events WHERE session_id = ? ORDER BY seq", id)
		if err != nil {
			yield(RawRow{}, s.sqlErr("raw", id, err))
			return
		}
		defer rows.Close()
		var sc rowScanner
		for rows.Next() {
			r, err := sc.scan(rows)
			if err != nil {
				yield(RawRow{}, s.sqlErr("raw", id, err))
				return
			}
			if !yield(r.clone(), nil) {
				return
			}
		}
		if err := rows.Err(); err != nil {
			yield(RawRow{}, s.sqlErr("raw", id, err))
		}
	}
}

// DecodeRow decodes and validates one raw row of a session of log format
// version, as reads do: the record, or an ErrCorrupt error naming the
// database and seq. Vocabulary and contiguity are the caller's, as with
// seam.DecodeRecord.
func (s *Store) DecodeRow(r *RawRow, version int) (seam.Record, error) {
	rec, err := decodeRow(r, s.schema, version)
	if err != nil {
		return rec, s.rowErr("verify", "", r.Seq, err)
	}
	return rec, nil
}
