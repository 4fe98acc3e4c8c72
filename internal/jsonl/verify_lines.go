package jsonl

import (
	"bytes"
	"context"

	"github.com/dshctl/dshctl/internal/seam"
)

// verifyMaxRecord, when positive, replaces the record limit of verify's
// reads, for tests; verify otherwise skips (and reports) a record longer
// than the store's record limit (Options.MaxRecordBytes), as every read
// does.
var verifyMaxRecord int64

// verifyNoJunkRuns turns off the counting of junk runs (see junkRunAfter),
// for the tests that compare verify's findings with and without it.
var verifyNoJunkRuns bool

// junkRunAfter is how many junk records in a row (see isJunk) verify's
// walk sends one by one, to be decoded and reported with their causes,
// before it counts the rest of the run in bulk (junkVisitor). It is above
// the findings a LogCheck keeps per log, so a count stands only for
// records that would be counted, not listed: the findings are the same
// either way, and a tail of millions of junk lines costs a byte scan.
const junkRunAfter = 1024

// junkVisitor is a seam.LogVisitor that takes a run of junk records as a
// count: BadRecords(p, n) stands for n calls of BadRecord, from p on, of
// records that do not decode and are not turn/ends, which follow at least
// junkRunAfter such records of the same unit passed one by one.
type junkVisitor interface {
	BadRecords(p seam.Pos, n int64)
}

// isJunk reports whether a complete line (with its '\n') can be neither a
// valid record (plausibleRow) nor a turn/end, whatever the log's state:
// it is a bad record that cannot commit anything.
func isJunk(line []byte) bool {
	return !plausibleRow(line[:len(line)-1]) && !bytes.Contains(line, turnEndType)
}

// skipJunk consumes the complete junk lines that follow, counted as
// records as next would return them (a run of empty lines is one), and
// returns how many records, lines and bytes it consumed. It stops before
// the first line that is not junk, that is longer than max, or that the
// buffer cannot hold whole, and at the end of the stream: next takes over.
func (lr *lineReader) skipJunk(ctx context.Context) (records, lines, n int64) {
	blank := false // the last line consumed was empty: a next one continues its run
	for {
		win := lr.buf[lr.r:lr.w]
		for {
			i := bytes.IndexByte(win, '\n')
			if i < 0 {
				break
			}
			if i == 0 {
				k := newlines(win)
				if !blank {
					records++
				}
				blank = true
				lines += int64(k)
				n += int64(k)
				lr.r += k
				win = win[k:]
				continue
			}
			if int64(i) > lr.max || !isJunk(win[:i+1]) {
				return records, lines, n
			}
			blank = false
			records++
			lines++
			n += int64(i + 1)
			lr.r += i + 1
			win = win[i+1:]
		}
		if lr.eof || lr.err != nil || lr.r == 0 && lr.w == len(lr.buf) || ctx.Err() != nil {
			return records, lines, n
		}
		lr.fill()
	}
}

// skipJunkIn is skipJunk over lines held in memory, where each empty line
// is a record of its own (as verify's check of a frame held whole counts
// them): it returns the records (and lines) and bytes of junk that b
// starts with.
func skipJunkIn(b []byte) (records, n int64) {
	for {
		i := bytes.IndexByte(b[n:], '\n')
		if i < 0 || !isJunk(b[n:n+int64(i)+1]) {
			return records, n
		}
		records++
		n += int64(i + 1)
	}
}
