package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/dshctl/dshctl/internal/jsonl"
	"github.com/dshctl/dshctl/internal/seam"
	"github.com/dshctl/dshctl/internal/suggest"
)

// ErrEmptyArg: a session was named by the empty string.
var ErrEmptyArg = errors.New("empty session argument")

// AmbiguousError: a prefix names several sessions.
type AmbiguousError struct {
	Prefix string
	// Matches are the ids it names, sorted.
	Matches []string
}

func (e *AmbiguousError) Error() string {
	return fmt.Sprintf("session prefix %q is ambiguous: %d sessions match", e.Prefix, len(e.Matches))
}

// NearError is a session argument that names no session (it wraps the
// store's seam.ErrNotFound) with the ids of the store nearest to it, a
// typo away from it or from their start, for a "did you mean".
type NearError struct {
	Err     error
	Nearest []string
}

func (e *NearError) Error() string { return e.Err.Error() }
func (e *NearError) Unwrap() error { return e.Err }

// Hint names the nearest ids.
func (e *NearError) Hint() string { return "did you mean " + strings.Join(e.Nearest, " or ") + "?" }

// Session is a session a command named, with the store that holds it.
type Session struct {
	Service seam.Service
	ID      string
}

// Close closes the store.
func (s *Session) Close() error { return s.Service.Close() }

// OtherStoreError is a session named by the path of its files in one
// store (Root) while --store named another (Flag): which was meant cannot
// be told.
type OtherStoreError struct {
	Arg, Root, Flag string
}

func (e *OtherStoreError) Error() string {
	return fmt.Sprintf("session path %s is in the store %s, not in --store %s", e.Arg, e.Root, e.Flag)
}

// OpenSession finds the session arg names and opens its store: the path of
// its folder or log file (then the store is the one holding it; a --store
// (r.Flag) naming another is an *OtherStoreError), else an exact id or the
// one id it is a prefix of in the store r asks for. An id that exists but cannot be read is returned as
// found, for the command to report the real problem when it reads it. A
// prefix that names nothing returns the store's seam.ErrNotFound for arg.
func OpenSession(ctx context.Context, r Request, arg string, o Options) (*Session, error) {
	if arg == "" {
		return nil, ErrEmptyArg
	}
	if looksLikePath(arg) {
		root, id, err := jsonl.SessionFromPath(arg)
		if err != nil {
			return nil, err
		}
		if r.Flag != "" && !isStore(Spec{r.Flag, FromFlag}, root) {
			return nil, &OtherStoreError{Arg: arg, Root: root, Flag: r.Flag}
		}
		svc, err := Open(Spec{root, FromPath}, r.options(o))
		if err != nil {
			return nil, err
		}
		return &Session{svc, id}, nil
	}
	svc, err := r.Open(o)
	if err != nil {
		return nil, err
	}
	id, err := matchID(ctx, svc, arg)
	if err != nil {
		svc.Close()
		return nil, err
	}
	return &Session{svc, id}, nil
}

// isStore reports whether spec names the JSONL root root (however it is
// spelled: a dsh home holding it, a symbolic link to it).
func isStore(spec Spec, root string) bool {
	loc, err := Locate(spec, false)
	if err != nil || loc.Kind != JSONL {
		return false
	}
	a, aerr := os.Stat(loc.Path)
	b, berr := os.Stat(root)
	return aerr == nil && berr == nil && os.SameFile(a, b)
}

// Sessions are the sessions that several arguments name, in the order
// named, or a whole store when none is named. The sessions of one store
// share one Service, opened once, and a session named twice in a store is
// there once (a store is one when its backend says where it is rooted: a
// JSONL root; other stores opened by each argument stay apart).
type Sessions struct {
	Sessions []Session
	// Whole is the store r asks for when no session was named.
	Whole seam.Service
}

// OpenSessions opens the sessions args name (see OpenSession), or, when
// args is empty, the store r asks for (Whole). On an error it returns the
// sessions opened so far with it, for the caller to close.
func OpenSessions(ctx context.Context, r Request, args []string, o Options) (*Sessions, error) {
	return openSessions(ctx, r, args, o, nil)
}

// OpenEachSession is OpenSessions for a batch that goes on when a session
// cannot be opened: it gives each such argument to failed and leaves it
// out. With no args it also names every session of the store in Sessions,
// sorted by id, and gives failed each entry of the store that is no
// session but may hide some (an unreadable project folder, say), worded
// as what it is. It fails only when ctx is done or, with no args, when
// the store cannot be opened or listed.
func OpenEachSession(ctx context.Context, r Request, args []string, o Options, failed func(arg string, err error)) (*Sessions, error) {
	ss, err := openSessions(ctx, r, args, o, failed)
	if err != nil || len(args) > 0 {
		return ss, err
	}
	entries, err := ss.Whole.List(ctx)
	if err != nil {
		return ss, err
	}
	slices.SortFunc(entries, func(a, b seam.Entry) int { return strings.Compare(a.Snapshot.Header.ID, b.Snapshot.Header.ID) })
	for _, en := range entries {
		id := en.Snapshot.Header.ID
		if n := len(ss.Sessions); n > 0 && ss.Sessions[n-1].ID == id {
			continue
		}
		// A session that cannot be read is named, for the command to
		// report what reading it says; an entry that is none is reported
		// here, not as a session "not found".
		if en.Err != nil && errors.Is(find(ctx, ss.Whole, id), seam.ErrNotFound) {
			failed(id, strayError(ss.Whole, en))
			continue
		}
		ss.Sessions = append(ss.Sessions, Session{ss.Whole, id})
	}
	return ss, ctx.Err()
}

// strayError is the error of en, an entry of svc's listing that is no
// session, said as what the entry is: "project folder … cannot be read
// (permission denied)" for a JSONL project folder dshctl may not read (as
// list and verify say it), else the listing's own words without its
// "list" label.
func strayError(svc seam.Service, en seam.Entry) error {
	path := en.Snapshot.Location.Path
	var pe *fs.PathError
	if rs, ok := svc.(interface{ Root() string }); ok && errors.Is(en.Err, seam.ErrIO) && errors.As(en.Err, &pe) &&
		filepath.Dir(path) == filepath.Clean(rs.Root()) {
		return &strayErr{fmt.Sprintf("project folder %s cannot be read (%v)", path, pe.Err), en.Err}
	}
	var se *seam.Error
	if errors.As(en.Err, &se) && se.Err != nil {
		msg := se.Err.Error()
		if path != "" && !namesPath(se.Err, path) {
			msg += " (" + path + ")"
		}
		return &strayErr{msg, en.Err}
	}
	return en.Err
}

// namesPath reports whether the message of err names path, or a file in
// it: a file operation's error does, and so does a folder refused as a
// symbolic link.
func namesPath(err error, path string) bool {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Path == path || strings.HasPrefix(pe.Path, path+string(filepath.Separator))
	}
	return errors.Is(err, jsonl.ErrSymlink)
}

// strayErr is an entry's error in other words; errors.Is and As still see
// the listing's error.
type strayErr struct {
	msg string
	err error
}

func (e *strayErr) Error() string { return e.msg }
func (e *strayErr) Unwrap() error { return e.err }

func openSessions(ctx context.Context, r Request, args []string, o Options, failed func(arg string, err error)) (*Sessions, error) {
	ss := &Sessions{}
	if len(args) == 0 {
		svc, err := r.Open(o)
		if err != nil { // svc may be a typed nil
			return ss, err
		}
		ss.Whole = svc
		return ss, nil
	}
	byRoot := map[string]seam.Service{}
	for _, arg := range args {
		if err := ctx.Err(); err != nil {
			return ss, err
		}
		s, err := OpenSession(ctx, r, arg, o)
		if err != nil && failed != nil {
			failed(arg, err)
			continue
		}
		if err != nil {
			return ss, err
		}
		if rs, ok := s.Service.(interface{ Root() string }); ok {
			if svc, ok := byRoot[rs.Root()]; ok {
				s.Close()
				if !slices.Contains(ss.Sessions, Session{svc, s.ID}) {
					ss.Sessions = append(ss.Sessions, Session{svc, s.ID})
				}
				continue
			}
			byRoot[rs.Root()] = s.Service
		}
		ss.Sessions = append(ss.Sessions, *s)
	}
	return ss, nil
}

// Group is sessions of one store; no IDs stands for all of them.
type Group struct {
	Service seam.Service
	IDs     []string
}

// Groups are the sessions by store, the stores in the order first named;
// a whole store is one Group without IDs.
func (ss *Sessions) Groups() []Group {
	if ss.Whole != nil {
		return []Group{{Service: ss.Whole}}
	}
	var groups []Group
	at := map[seam.Service]int{}
	for _, s := range ss.Sessions {
		i, ok := at[s.Service]
		if !ok {
			i = len(groups)
			at[s.Service] = i
			groups = append(groups, Group{Service: s.Service})
		}
		groups[i].IDs = append(groups[i].IDs, s.ID)
	}
	return groups
}

// Close closes every store once; a nil Sessions is nothing to close.
func (ss *Sessions) Close() error {
	if ss == nil {
		return nil
	}
	var errs []error
	for _, g := range ss.Groups() {
		errs = append(errs, g.Service.Close())
	}
	return errors.Join(errs...)
}

// Match is a session whose id completes a word.
type Match struct {
	ID, Cwd string
	// Unreadable says the session cannot be read (its Cwd may be unknown).
	Unreadable bool
}

// Complete returns the first max sessions of the store r asks for, in the
// store's order, whose ids start with prefix.
func Complete(ctx context.Context, r Request, prefix string, max int, o Options) ([]Match, error) {
	svc, err := r.Open(o)
	if err != nil {
		return nil, err
	}
	defer svc.Close()
	entries, err := svc.List(ctx)
	if err != nil {
		return nil, err
	}
	var out []Match
	for _, en := range entries {
		h := &en.Snapshot.Header
		if h.ID != "" && strings.HasPrefix(h.ID, prefix) && len(out) < max {
			out = append(out, Match{ID: h.ID, Cwd: h.Cwd, Unreadable: en.Err != nil})
		}
	}
	return out, nil
}

// looksLikePath tells a path argument from an id: ids may hold "/" too (an
// id is encoded into one folder name), so only an existing path counts.
func looksLikePath(arg string) bool {
	if !strings.ContainsRune(arg, filepath.Separator) && arg != "." {
		return false
	}
	_, err := os.Stat(arg)
	return err == nil
}

// matchID returns arg when it is an id, else the one id it is a prefix of.
func matchID(ctx context.Context, svc seam.Service, arg string) (string, error) {
	err := find(ctx, svc, arg)
	if err == nil || !errors.Is(err, seam.ErrNotFound) {
		return arg, nil
	}
	entries, lerr := svc.List(ctx)
	if lerr != nil {
		return "", lerr
	}
	var matches []string
	var matchErr error
	for _, en := range entries {
		if id := en.Snapshot.Header.ID; strings.HasPrefix(id, arg) {
			matches = append(matches, id)
			matchErr = en.Err
		}
	}
	slices.Sort(matches)
	matches = slices.Compact(matches)
	switch len(matches) {
	case 0:
		ids := make([]string, 0, len(entries))
		for _, en := range entries {
			ids = append(ids, en.Snapshot.Header.ID)
		}
		if near := suggest.Nearest(arg, ids, true); len(near) > 0 {
			return "", &NearError{err, near}
		}
		return "", err
	case 1:
		// An entry that is no session (a stray log file, say) is reported
		// for what it is, not as "not found"; a session that cannot be
		// read is found, for the command to report what it can.
		if matchErr != nil {
			if err := find(ctx, svc, matches[0]); errors.Is(err, seam.ErrNotFound) {
				return "", matchErr
			}
		}
		return matches[0], nil
	}
	return "", &AmbiguousError{Prefix: arg, Matches: matches}
}

// find is Stat's answer to whether id is stored, read without the log
// when the service can.
func find(ctx context.Context, svc seam.Service, id string) error {
	if f, ok := svc.(seam.Finder); ok {
		return f.Find(ctx, id)
	}
	_, err := svc.Stat(ctx, id)
	return err
}

// ShortIDs returns for each id its shortest prefix of at least minLen
// bytes (never splitting a character) that no other of the ids shares, like
// a short git hash: among these sessions, OpenSession resolves it back to
// the id.
func ShortIDs(ids []string, minLen int) []string {
	sorted := slices.Clone(ids)
	slices.Sort(sorted)
	common := func(a, b string) int {
		n := 0
		for n < len(a) && n < len(b) && a[n] == b[n] {
			n++
		}
		return n
	}
	out := make([]string, len(ids))
	for i, id := range ids {
		j, _ := slices.BinarySearch(sorted, id)
		need := minLen
		if j > 0 {
			need = max(need, common(id, sorted[j-1])+1)
		}
		if j+1 < len(sorted) {
			need = max(need, common(id, sorted[j+1])+1)
		}
		for need < len(id) && !utf8.RuneStart(id[need]) {
			need++
		}
		if need >= len(id) {
			out[i] = id
		} else {
			out[i] = id[:need]
		}
	}
	return out
}
