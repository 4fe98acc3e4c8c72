package seam

import "context"

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
