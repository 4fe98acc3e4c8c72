package search

import (
	"context"
	"fmt"
	"path/filepath"
	"sync/atomic"

	"github.com/dshctl/dshctl/internal/seam"
)

// Mode is what a search prints of the matches.
type Mode int

const (
	// Lines prints every matching line.
	Lines Mode = iota
	// Files prints each session with a match, once (grep -l).
	Files
	// Count prints each session with a match and its number of matching
	// lines (grep -c).
	Count
	// Quiet prints nothing and stops at the first match (grep -q).
	Quiet
)

// SessionInfo is what the output says of a session besides its matches.
type SessionInfo struct {
	ID, Cwd string
}

// Printer makes the output of a search: its pieces are made on the
// searching goroutines, then written (Out) in the order of the sessions.
type Printer interface {
	Out
	// Match appends what is printed of match m of session s (Lines);
	// first says it is the session's first.
	Match(dst []byte, s *SessionInfo, m *Match, first bool) []byte
	// File appends what is printed of a session with a match (Files).
	File(dst []byte, s *SessionInfo) []byte
	// Count appends what is printed of a session with n matching lines
	// (Count).
	Count(dst []byte, s *SessionInfo, n int) []byte
}

// RunOptions say what Run looks for and prints.
type RunOptions struct {
	Options
	Mode Mode
	// Project, when set, keeps only the sessions whose cwd is this folder
	// (cleaned); a session whose header cannot be read is left out.
	Project string
}

// Result counts what Run did.
type Result struct {
	// Searched counts the sessions searched (in full, or until Max or
	// the first match that settles it); Matched those with a match;
	// Failed those that could not be searched.
	Searched, Matched, Failed int
	// Lines counts the matching lines found.
	Lines int
}

// SessionError is the failure of one session's search, given to
// Printer.Fail.
type SessionError struct {
	ID  string
	Err error
}

func (e *SessionError) Error() string { return fmt.Sprintf("session %q: %v", e.ID, e.Err) }
func (e *SessionError) Unwrap() error { return e.Err }

// Run searches the sessions each visits (EachSession, EachSource) in
// parallel, and gives p the output in the order of the visits. A session
// that cannot be read is given to p.Fail, in its place, and the others
// are still searched. Run fails only when ctx ends (or p cannot write);
// Quiet ends the search at the first match without an error.
func Run(ctx context.Context, each func(context.Context, Visit) error, o RunOptions, p Printer) (Result, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ord := newOrdered(p)
	so := o.Options
	if o.Mode != Lines {
		so.NoSpans = true // only the lines are counted
	}
	var searched, matched, failed, lines atomic.Int64
	var found atomic.Bool // Quiet: the match that ends the search
	err := each(ctx, func(job int, e seam.Entry, h seam.Handle, err error) {
		defer ord.done(job)
		if ctx.Err() != nil {
			return
		}
		info := SessionInfo{ID: e.Snapshot.Header.ID, Cwd: e.Snapshot.Header.Cwd}
		if e.Err != nil {
			h, err = nil, e.Err
		}
		if h != nil {
			hdr := h.Header()
			info.ID, info.Cwd = hdr.ID, hdr.Cwd
		}
		if o.Project != "" && (err != nil || filepath.Clean(info.Cwd) != o.Project) {
			return
		}
		if err != nil {
			failed.Add(1)
			ord.fail(job, &SessionError{ID: info.ID, Err: err})
			return
		}
		var buf []byte
		k := 0 // matches given
		n, err := Session(ctx, h, &so, func(m *Match) error {
			k++
			switch o.Mode {
			case Quiet:
				found.Store(true)
				cancel()
				return ErrStop
			case Files:
				buf = p.File(buf[:0], &info)
				if err := ord.write(job, buf); err != nil {
					return err
				}
				return ErrStop
			case Lines:
				buf = p.Match(buf[:0], &info, m, k == 1)
				return ord.write(job, buf)
			}
			return nil
		})
		lines.Add(int64(n))
		if n > 0 {
			matched.Add(1)
		}
		switch {
		case err != nil && ctx.Err() != nil:
			return // interrupted, or Quiet's match was found
		case err != nil:
			failed.Add(1)
			ord.fail(job, &SessionError{ID: info.ID, Err: err})
			return
		}
		searched.Add(1)
		if o.Mode == Count && n > 0 {
			ord.write(job, p.Count(buf[:0], &info, n))
		}
	})
	res := Result{Searched: int(searched.Load()), Matched: int(matched.Load()), Failed: int(failed.Load()), Lines: int(lines.Load())}
	switch {
	case found.Load():
		return res, nil
	case ord.error() != nil:
		return res, ord.error()
	}
	return res, err
}
