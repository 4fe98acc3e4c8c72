package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/dshctl/dshctl/internal/jsonl"
	"github.com/dshctl/dshctl/internal/seam"
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

// Session is a session a command named, with the store that holds it.
type Session struct {
	Service seam.Service
	ID      string
}

// Close closes the store.
func (s *Session) Close() error { return s.Service.Close() }

// OpenSession finds the session arg names and opens its store: the path of
// its folder or log file (then the store is the one holding it, whatever
// r asks for), else an exact id or the one id it is a prefix of in the
// store r asks for. An id that exists but cannot be read is returned as
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
	_, err := svc.Stat(ctx, arg)
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
		return "", err
	case 1:
		// An entry that is no session (a stray log file, say) is reported
		// for what it is, not as "not found"; a session that cannot be
		// read is found, for the command to report what it can.
		if matchErr != nil {
			if _, err := svc.Stat(ctx, matches[0]); errors.Is(err, seam.ErrNotFound) {
				return "", matchErr
			}
		}
		return matches[0], nil
	}
	return "", &AmbiguousError{Prefix: arg, Matches: matches}
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
