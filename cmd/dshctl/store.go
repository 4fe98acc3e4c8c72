package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/dshctl/dshctl/internal/jsonl"
	"github.com/dshctl/dshctl/internal/seam"
)

// storeSpec is where a store lives and how it was chosen, for messages.
type storeSpec struct {
	path string
	from string // "--store", "DSHCTL_STORE", "DSH_HOME", "default"
	// allowUnknown serves events of types the log's version does not know,
	// for commands that show logs rather than judge them.
	allowUnknown bool
	// create makes a missing root, for commands that create sessions.
	create bool
	// compression is the encoding of new sessions in an empty root.
	compression string
	// backupDir is where repairs save removed bytes; "" for the default.
	backupDir string
}

// storeSpec resolves the store the user asked for.
func (g *globals) storeSpec(e *env) (storeSpec, error) {
	if g.store != "" {
		return g.spec(g.store, "--store"), nil
	}
	if s := e.getenv("DSHCTL_STORE"); s != "" {
		return g.spec(s, "DSHCTL_STORE"), nil
	}
	root, err := jsonl.DefaultRoot(e.getenv)
	if err != nil {
		return storeSpec{}, withHint(err, "choose a store with --store DIR or DSHCTL_STORE")
	}
	from := "default"
	if strings.TrimSpace(e.getenv("DSH_HOME")) != "" {
		from = "DSH_HOME"
	}
	return g.spec(root, from), nil
}

func (g *globals) spec(path, from string) storeSpec {
	return storeSpec{path: path, from: from, allowUnknown: g.allowUnknown, create: g.createRoot, compression: g.compression, backupDir: g.backupDir}
}

var sqliteMagic = []byte("SQLite format 3\x00")

// openStore opens the store the user asked for.
func (g *globals) openStore(e *env) (seam.Service, error) {
	spec, err := g.storeSpec(e)
	if err != nil {
		return nil, err
	}
	return openStoreAt(spec)
}

func openStoreAt(spec storeSpec) (seam.Service, error) {
	path := spec.path
	if rest, ok := strings.CutPrefix(path, "sqlite:"); ok {
		return nil, sqliteUnsupported(rest)
	}
	fi, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) && spec.create {
			return jsonl.Open(path, jsonl.Options{CreateRoot: true, Compression: jsonl.Encoding(spec.compression)})
		}
		if errors.Is(err, os.ErrNotExist) {
			return nil, withHint(fmt.Errorf("store %s (from %s) does not exist", path, spec.from),
				"choose a store with --store DIR or DSHCTL_STORE, or set DSH_HOME")
		}
		return nil, fmt.Errorf("store %s: %w", path, err)
	}
	if !fi.IsDir() {
		if isSQLite(path) {
			return nil, sqliteUnsupported(path)
		}
		return nil, withHint(fmt.Errorf("store %s is not a directory", path),
			"--store takes a JSONL root directory")
	}
	opts := jsonl.Options{AllowUnknownTypes: spec.allowUnknown, BackupDir: spec.backupDir}
	if spec.compression != "" {
		if empty, err := isEmptyDir(path); err != nil {
			return nil, err
		} else if !empty {
			return nil, withHint(fmt.Errorf("store %s already holds sessions: --compression applies only to a new or empty store", path),
				"drop --compression: new sessions take the store's encoding")
		}
		opts.Compression = jsonl.Encoding(spec.compression)
	}
	return jsonl.Open(path, opts)
}

func isEmptyDir(path string) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	names, err := f.Readdirnames(1)
	if errors.Is(err, io.EOF) {
		return true, nil
	}
	return len(names) == 0, err
}

func isSQLite(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, len(sqliteMagic))
	_, err = io.ReadFull(f, head)
	return err == nil && bytes.Equal(head, sqliteMagic)
}

func sqliteUnsupported(path string) error {
	return withHint(fmt.Errorf("store %s: SQLite stores are not supported by this build", path),
		"export the sessions with dsh to a JSONL root, or use a JSONL store")
}

// session is a resolved SESSION argument.
type session struct {
	svc seam.Service
	id  string
}

func (s *session) close() { s.svc.Close() }

// resolveSession finds the session an argument names: a path of a session
// folder or log file (the store is inferred), an exact id, or a unique id
// prefix.
func (g *globals) resolveSession(ctx context.Context, e *env, arg string) (*session, error) {
	if arg == "" {
		return nil, usagef("empty session argument")
	}
	if looksLikePath(arg) {
		root, id, err := jsonl.SessionFromPath(arg)
		if err != nil {
			return nil, err
		}
		svc, err := openStoreAt(g.spec(root, "path"))
		if err != nil {
			return nil, err
		}
		return &session{svc, id}, nil
	}
	svc, err := g.openStore(e)
	if err != nil {
		return nil, err
	}
	id, err := matchID(ctx, svc, arg)
	if err != nil {
		svc.Close()
		return nil, err
	}
	return &session{svc, id}, nil
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
		// A stored id, or one that exists but cannot be read: let the
		// command report the real problem.
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
		return "", withHint(err, "run 'dshctl list --all' to see the sessions of the store")
	case 1:
		// An entry that is not a readable session (a stray log file, say)
		// is reported for what it is, not as "not found".
		if matchErr != nil {
			return "", matchErr
		}
		return matches[0], nil
	}
	const show = 10
	list := matches
	if len(list) > show {
		list = list[:show]
	}
	msg := fmt.Sprintf("session prefix %q is ambiguous: %d sessions match: %s", arg, len(matches), strings.Join(list, ", "))
	if len(matches) > show {
		msg += ", …"
	}
	return "", withHint(errors.New(msg), "give more of the id")
}
