package seam

import (
	"context"
	"fmt"
)

// OpenLister is implemented by services that can list their sessions and
// open each one for reading in the same pass, so that a consumer that reads
// every session's head and tail (`list`) costs one open per session instead
// of a listing read and then an Open of each id.
//
// ListOpen visits exactly the entries List would return (seam.md, Service:
// List), each once, in no particular order, possibly from several
// goroutines at once. For an entry without Err, h is a read handle of that
// session with the same contract as one from Open(ctx, id, Read) (Handle,
// including freshness: a read started after an Append returns sees it),
// or nil with err saying why Open would have failed. For an entry with Err,
// h and err are nil. The handle belongs to ListOpen: it is closed when
// visit returns, so visit must not keep it, and at most a few are open at
// any time. found, if not nil, is called once before the first visit with
// an upper bound of the number of visits (for progress reports).
//
// Consumers fall back to List and Open for services without it.
type OpenLister interface {
	ListOpen(ctx context.Context, found func(n int), visit func(e Entry, h Handle, err error)) error
}

// OrderedLister is implemented by services that can read each session's
// header alone, cheaply, before the rest: a consumer that shows sessions in
// an order known from their headers (`list --sort created`) can then read
// and print them in that order, as they come, instead of reading the whole
// store before the first.
//
// ListOpenOrdered first finds every entry ListOpen would visit, reading of
// each session no more than its header, and calls order once with them:
// each has its Snapshot's Header (or at least its id) and Location; Err is
// set for an entry whose header cannot be read, or that ListOpen would
// visit with Err (the other Snapshot fields are not read yet). order
// returns the positions of the entries in the order to visit them (a
// permutation of their indexes). Then every entry is visited once, as
// ListOpen visits it (read in full, with a read handle that visit must not
// keep), with its position: visit(i, ...) is called only once visit has
// been called for every position before i, so that a consumer may make a
// visit wait for its predecessors to finish. The visits may run on several
// goroutines at once. What visit receives is read then: a session that
// changed since its header was read is visited as it is now, and an entry
// may then differ from the one order saw (it may have an Err, or a
// different header).
type OrderedLister interface {
	ListOpenOrdered(ctx context.Context, order func(heads []Entry) []int, visit func(i int, e Entry, h Handle, err error)) error
}

// CheckOrder returns an error unless perm, what an OrderedLister's order
// returned for n entries, holds each of 0..n-1 once.
func CheckOrder(perm []int, n int) error {
	seen := make([]bool, n)
	for _, p := range perm {
		if p < 0 || p >= len(seen) || seen[p] {
			break
		}
		seen[p] = true
		n--
	}
	if n != 0 || len(perm) != len(seen) {
		return fmt.Errorf("list: an order of %d positions for %d entries is not a permutation of them", len(perm), len(seen))
	}
	return nil
}
