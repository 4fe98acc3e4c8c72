// Package inspect is the pure logic dshctl runs over a session's events:
// the closers dsh's resume appends to an interrupted tail turn, the cheap
// metadata `list` and `stat` show, exact statistics, the text transcript of
// `cat -o text`, and `cat`'s event filters.
//
// It reaches a store only through seam interfaces and never touches files or
// physical formats. Everything streams: callers feed events one by one, and
// the state kept is bounded by one turn, never by the log.
package inspect
