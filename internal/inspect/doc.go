// Package inspect is the logic dshctl runs over a session's events: the
// rows of `list` (List) and the report of `stat` (Stat) with the cheap
// metadata they show, exact statistics, the closers dsh's resume appends to
// an interrupted tail turn, the filtered, followed stream `cat` prints
// (Stream), its event filters and the text transcript of `cat -o text`.
//
// It reaches a store only through seam interfaces and never touches files or
// physical formats. Everything streams: callers feed events one by one, and
// the state kept is bounded by one turn, never by the log.
package inspect
