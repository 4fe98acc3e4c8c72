// Package store opens what a dshctl command names: the store (a flag, an
// environment variable, or dsh's default), the backend that reads it, and a
// session in it (an id, a unique id prefix, or the path of its files). It is
// the one place that knows every backend; commands and tests reach stores
// only through it. It returns typed errors; the command line words them.
package store

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/dshctl/dshctl/internal/jsonl"
	"github.com/dshctl/dshctl/internal/seam"
	"github.com/dshctl/dshctl/internal/sqlite"
)

// Source says where the location of a store came from.
type Source int

const (
	FromFlag    Source = iota // the command line
	FromEnv                   // $DSHCTL_STORE
	FromDSHHome               // $DSH_HOME/sessions
	FromDefault               // ~/.dsh/sessions
	FromPath                  // the path of a session's files
)

// String names the source as messages do: the flag or variable, or
// "default" or "path".
func (s Source) String() string {
	if s < 0 || int(s) >= len(sourceNames) {
		return fmt.Sprintf("Source(%d)", int(s))
	}
	return sourceNames[s]
}

var sourceNames = [...]string{"--store", "DSHCTL_STORE", "DSH_HOME", "default", "path"}

// Spec is the store a command was asked to use.
type Spec struct {
	Path string
	From Source
}

// Options say how to open a store.
type Options struct {
	// AllowUnknownTypes serves events of types the log's version does not
	// know and that are not ignorable, for commands that show logs rather
	// than judge them.
	AllowUnknownTypes bool
	// Create makes a missing store (a JSONL root), for commands that create
	// sessions.
	Create bool
	// Compression is the encoding of the sessions created in a new or empty
	// JSONL root: "zstd", "none", or "" for the root's own. A root that
	// holds sessions already is ErrNotEmpty.
	Compression string
	// BackupDir is where repairs keep the bytes they remove. Opened
	// through a Request, empty means DefaultBackupDir; opened by Open,
	// empty makes a repair fail with ErrNoBackupDir.
	BackupDir string
	// MaxRecordBytes and MaxFrameBytes raise (or lower) the reader limits
	// of a JSONL store: the longest record, and the most content of one
	// zstd frame, that a read holds or decodes; 0 keeps the defaults
	// (jsonl.DefaultMaxRecordBytes, jsonl.DefaultMaxFrameBytes).
	MaxRecordBytes, MaxFrameBytes int64
	// SQLiteSchema is the schema of a SQLite database Create makes: 17
	// (when 0) or 14. It does not apply to an existing database.
	SQLiteSchema int
	// Note, when set, is told what the user should know about the store
	// chosen: that it was inferred from a dsh home, or that another store
	// sits beside it. Request.Open sets it from Request.Note.
	Note func(msg string)
	// Verify opens the store for verify: a SQLite database too damaged
	// to open otherwise is opened so that verify reports the damage.
	Verify bool
	// ProbeWriters and InUseWindow make write opens refuse a session that
	// a writer taking no lock looks to be writing (seam.InUseError): one
	// that has its log or database open for writing, where the OS tells,
	// or (JSONL) whose log changed less than InUseWindow ago, not by
	// dshctl. Off when zero, as for a library user that knows it is alone.
	ProbeWriters bool
	InUseWindow  time.Duration
}

// InUseWindow is how recent a change of a JSONL log, not by dshctl, makes
// the session look in use to a write: dsh 0.1.0 writes every event within
// a fraction of a second while it works on a turn.
const InUseWindow = 5 * time.Second

// Errors of finding and opening a store, matched with errors.Is; the
// *Error that carries them says which store.
var (
	// ErrNoHome: no store was named and dsh's default cannot be found.
	ErrNoHome = errors.New("HOME and DSH_HOME are unset")
	// ErrNotExist: the store named does not exist.
	ErrNotExist = errors.New("store does not exist")
	// ErrNotDir: the store named is a file of no known kind.
	ErrNotDir = errors.New("store is not a directory")
	// ErrNotEmpty: a compression was asked for a root that holds sessions
	// of the other encoding.
	ErrNotEmpty = errors.New("store already holds sessions")
	// ErrNotStore: the folder named holds nothing a dsh store holds.
	ErrNotStore = errors.New("not a dsh session store")
	// ErrProjectFolder: the folder named is a project folder of a store
	// (Error.Store), not a store.
	ErrProjectFolder = errors.New("a project folder of a store, not a store")
	// ErrSessionFolder: the path named is a session folder, or its log, in
	// the store Error.Store (when it is in one), not a store.
	ErrSessionFolder = errors.New("a session folder, not a store")
	// ErrNoBackupDir fails a repair of a store opened without a BackupDir.
	ErrNoBackupDir = seam.ErrNoBackupDir
	// ErrRecordLimit and ErrFrameLimit match a read of a JSONL store
	// stopped (seam.ErrLimit) at Options.MaxRecordBytes or MaxFrameBytes.
	ErrRecordLimit = jsonl.ErrRecordLimit
	ErrFrameLimit  = jsonl.ErrFrameLimit
)

// SQLiteOpenError is the error of opening a SQLite store; Damaged says a
// verify of the store lists what is wrong with the database.
type SQLiteOpenError = sqlite.OpenError

// The reader limits of a JSONL store when Options leaves them 0.
const (
	DefaultMaxRecordBytes = jsonl.DefaultMaxRecordBytes
	DefaultMaxFrameBytes  = jsonl.DefaultMaxFrameBytes
)

// Error is a failure to find or open the store Spec names: Kind is one of
// the sentinels above, or seam.ErrIO with the cause in Err. Path is the
// path tried, which for `sqlite:PATH` is PATH.
type Error struct {
	Kind error
	Spec Spec
	Path string
	Err  error
	// Store is the store Path belongs to, for ErrProjectFolder and
	// ErrSessionFolder ("" when it is in none); ID is the session of
	// ErrSessionFolder.
	Store, ID string
	// LogFile says Path is the log file of ErrSessionFolder's session, not
	// its folder.
	LogFile bool
}

func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("store %s: %v", e.Path, e.Err)
	}
	return fmt.Sprintf("store %s: %v", e.Path, e.Kind)
}

func (e *Error) Unwrap() []error {
	if e.Err == nil {
		return []error{e.Kind}
	}
	return []error{e.Kind, e.Err}
}

// Request is what a command has to find its store with: the command
// line's choice (Flag, "" for none) and the environment.
type Request struct {
	Flag   string
	Getenv func(string) string
	// MaxRecordBytes and MaxFrameBytes are the reader limits of the
	// stores opened through r (see Options), where Options leaves them 0.
	MaxRecordBytes, MaxFrameBytes int64
	// Note receives what the user should know about the store chosen (see
	// Options.Note); nil drops it.
	Note func(msg string)
}

// Spec returns the store r asks for: Flag when set, else $DSHCTL_STORE,
// else dsh's own store: $DSH_HOME/sessions, or ~/.dsh/sessions when
// DSH_HOME is unset or blank.
func (r Request) Spec() (Spec, error) {
	getenv := r.Getenv
	if r.Flag != "" {
		return Spec{r.Flag, FromFlag}, nil
	}
	if s := getenv("DSHCTL_STORE"); s != "" {
		return Spec{s, FromEnv}, nil
	}
	if home := getenv("DSH_HOME"); strings.TrimSpace(home) != "" {
		return Spec{filepath.Join(home, "sessions"), FromDSHHome}, nil
	}
	home := getenv("HOME")
	if strings.TrimSpace(home) == "" {
		return Spec{}, ErrNoHome
	}
	return Spec{filepath.Join(home, ".dsh", "sessions"), FromDefault}, nil
}

// Open opens the store r asks for (see Open), with DefaultBackupDir unless
// o names a backup folder.
func (r Request) Open(o Options) (seam.Service, error) {
	spec, err := r.Spec()
	if err != nil {
		return nil, err
	}
	return Open(spec, r.options(o))
}

// options is o with DefaultBackupDir unless o names a backup folder.
// Without HOME none can be named; a repair then fails with ErrNoBackupDir.
func (r Request) options(o Options) Options {
	if o.BackupDir == "" {
		o.BackupDir, _ = DefaultBackupDir(r.Getenv)
	}
	if o.Note == nil {
		o.Note = r.Note
	}
	if o.MaxRecordBytes == 0 {
		o.MaxRecordBytes = r.MaxRecordBytes
	}
	if o.MaxFrameBytes == 0 {
		o.MaxFrameBytes = r.MaxFrameBytes
	}
	return o
}

// DefaultBackupDir returns where dshctl's repairs keep the bytes they
// remove: $XDG_STATE_HOME/dshctl/backups, or ~/.local/state/dshctl/backups.
func DefaultBackupDir(getenv func(string) string) (string, error) {
	if state := getenv("XDG_STATE_HOME"); strings.TrimSpace(state) != "" && filepath.IsAbs(state) {
		return filepath.Join(state, "dshctl", "backups"), nil
	}
	home := getenv("HOME")
	if strings.TrimSpace(home) == "" {
		return "", errors.New("cannot locate a backup directory: HOME and XDG_STATE_HOME are unset")
	}
	return filepath.Join(home, ".local", "state", "dshctl", "backups"), nil
}

// Kind is the backend a store needs.
type Kind int

const (
	JSONL  Kind = iota // a root directory of dsh's JSONL logs
	SQLite             // a dsh SQLite database
)

// Location is a store found: the backend that reads it and the path that
// backend opens.
type Location struct {
	Kind Kind
	Path string
	// Missing says the path does not exist yet (Locate with create; a
	// `sqlite:PATH` that names no file).
	Missing bool
	// Note says what the user should know about the choice: that the store
	// was inferred from a dsh home, or that the home holds another store
	// too. Empty when the store was named as it is.
	Note string
}

// sqliteMagic is the first 16 bytes of every SQLite database file.
var sqliteMagic = []byte("SQLite format 3\x00")

// SQLiteName is the database dsh keeps in its home, beside the sessions/
// JSONL root, when its SQLite store is chosen.
const SQLiteName = "sessions.sqlite"

// Locate finds the store spec names: `sqlite:PATH` and a file that starts
// with SQLite's header are SQLite databases; a dsh home stands for a store
// it holds (inHome); any other folder is recognised by what it holds (see
// locateDir). A missing path is ErrNotExist, unless create is set: then it
// is a JSONL root to make. Every kind of location a user may name is
// recognized here, each by one case that says which backend opens which
// path.
func Locate(spec Spec, create bool) (Location, error) {
	path := spec.Path
	fail := func(kind error, path string, err error) (Location, error) {
		return Location{}, &Error{Kind: kind, Spec: spec, Path: path, Err: err}
	}
	if rest, ok := strings.CutPrefix(path, "sqlite:"); ok {
		_, err := os.Lstat(rest)
		return Location{Kind: SQLite, Path: rest, Missing: errors.Is(err, os.ErrNotExist)}, nil
	}
	if spec.From == FromDSHHome || spec.From == FromDefault {
		if loc, ok := inHome(filepath.Dir(path), path, false); ok {
			return loc, nil
		}
	}
	fi, err := os.Stat(path)
	if err == nil && fi.IsDir() {
		if loc, ok := inHome(path, filepath.Join(path, "sessions"), true); ok {
			return loc, nil
		}
	}
	switch {
	case errors.Is(err, os.ErrNotExist) && create:
		return Location{Kind: JSONL, Path: path, Missing: true}, nil
	case errors.Is(err, os.ErrNotExist):
		return fail(ErrNotExist, path, nil)
	case err != nil:
		return fail(seam.ErrIO, path, err)
	case fi.IsDir():
		return locateDir(spec)
	case isSQLite(path):
		return Location{Kind: SQLite, Path: path}, nil
	}
	if _, _, ok := jsonl.ParseLogName(filepath.Base(path)); ok {
		root, id, _ := jsonl.SessionFromPath(path)
		return Location{}, &Error{Kind: ErrSessionFolder, Spec: spec, Path: path, Store: root, ID: id, LogFile: true}
	}
	return fail(ErrNotDir, path, nil)
}

// maxProbe bounds the entries of a folder, and the subfolders, that
// locateDir looks at: recognising a store never costs a walk of it.
const maxProbe = 256

// locateDir recognises a folder that is no dsh home by what it holds: a
// JSONL root holds project folders (or nothing yet); a session folder
// holds a session log, a project folder session folders.
// The last two are named as what they are, with the store they belong to
// (ErrSessionFolder, ErrProjectFolder); a folder with nothing dsh-like in it
// is ErrNotStore.
func locateDir(spec Spec) (Location, error) {
	dir := spec.Path
	fail := func(kind error, err error) (Location, error) {
		return Location{}, &Error{Kind: kind, Spec: spec, Path: dir, Err: err}
	}
	f, err := os.Open(dir)
	if err != nil {
		return fail(seam.ErrIO, err)
	}
	defer f.Close()
	var entries []os.DirEntry
	for {
		batch, err := f.ReadDir(maxProbe)
		for _, e := range batch {
			if e.IsDir() && jsonl.IsProjectFolder(e.Name()) {
				return Location{Kind: JSONL, Path: dir}, nil
			}
		}
		if len(entries) < maxProbe {
			entries = append(entries, batch[:min(len(batch), maxProbe-len(entries))]...)
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fail(seam.ErrIO, err)
		}
	}
	if len(entries) == 0 {
		return Location{Kind: JSONL, Path: dir}, nil // an empty store
	}
	if holdsLog(entries) {
		root, id, _ := jsonl.SessionFromPath(dir)
		return Location{}, &Error{Kind: ErrSessionFolder, Spec: spec, Path: dir, Store: root, ID: id}
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		sub := filepath.Join(dir, e.Name())
		if subEntries, err := os.ReadDir(sub); err == nil && holdsLog(subEntries[:min(len(subEntries), maxProbe)]) {
			return Location{}, &Error{Kind: ErrProjectFolder, Spec: spec, Path: dir, Store: filepath.Dir(absPath(dir))}
		}
	}
	return fail(ErrNotStore, nil)
}

// holdsLog reports whether a folder's entries include a session log file.
func holdsLog(entries []os.DirEntry) bool {
	for _, e := range entries {
		if _, _, ok := jsonl.ParseLogName(e.Name()); ok && !e.IsDir() {
			return true
		}
	}
	return false
}

func absPath(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return p
}

// inHome chooses between the stores of a dsh home: its JSONL root (root,
// the sessions/ folder) when there is one, noting a SQLite database
// (SQLiteName) beside it, else the database, noting the inference. A home
// the user named (named) is read as its JSONL root even without a
// database; dsh's default home is then no different from its root. ok is
// false when there is nothing to choose: the caller goes on as without a
// home.
func inHome(home, root string, named bool) (Location, bool) {
	db := filepath.Join(home, SQLiteName)
	hasDB := isSQLite(db)
	fi, err := os.Stat(root)
	hasRoot := err == nil && fi.IsDir()
	switch {
	case hasDB && hasRoot:
		return Location{Kind: JSONL, Path: root,
			Note: fmt.Sprintf("using the JSONL store %s; %s also holds the SQLite store %s (choose it with --store sqlite:%[3]s)", root, home, db)}, true
	case hasDB:
		return Location{Kind: SQLite, Path: db, Note: fmt.Sprintf("using the SQLite store %s, found in %s", db, home)}, true
	case hasRoot && named:
		return Location{Kind: JSONL, Path: root, Note: fmt.Sprintf("using the JSONL store %s, found in %s", root, home)}, true
	}
	return Location{}, false
}

// Open opens the store spec names with the backend it needs.
func Open(spec Spec, o Options) (seam.Service, error) {
	loc, err := Locate(spec, o.Create)
	if err != nil {
		return nil, err
	}
	if loc.Note != "" && o.Note != nil {
		o.Note(loc.Note)
	}
	if loc.Kind == SQLite {
		return openSQLite(spec, loc, o)
	}
	return openJSONL(spec, loc, o)
}

// openSQLite opens (or, when missing and asked to, makes) a SQLite store.
func openSQLite(spec Spec, loc Location, o Options) (seam.Service, error) {
	if loc.Missing && !o.Create {
		return nil, &Error{Kind: ErrNotExist, Spec: spec, Path: loc.Path}
	}
	return sqlite.Open(loc.Path, sqlite.Options{
		Create:            o.Create,
		Schema:            o.SQLiteSchema,
		AllowUnknownTypes: o.AllowUnknownTypes,
		BackupDir:         o.BackupDir,
		OpenDamaged:       o.Verify,
		ProbeWriters:      o.ProbeWriters,
	})
}

// openJSONL opens (or, when missing, makes) a JSONL root. A compression
// asked for must be the root's own, unless the root is new or empty: then
// it chooses the encoding of the sessions created in it.
func openJSONL(spec Spec, loc Location, o Options) (seam.Service, error) {
	opts := jsonl.Options{
		AllowUnknownTypes: o.AllowUnknownTypes,
		BackupDir:         o.BackupDir,
		CreateRoot:        loc.Missing,
		MaxRecordBytes:    o.MaxRecordBytes,
		MaxFrameBytes:     o.MaxFrameBytes,
		ProbeWriters:      o.ProbeWriters,
		InUseWindow:       o.InUseWindow,
	}
	want := jsonl.Encoding(o.Compression)
	if want == "" || loc.Missing {
		opts.Compression = want
		return jsonl.Open(loc.Path, opts)
	}
	empty, err := isEmptyDir(loc.Path)
	if err != nil {
		return nil, &Error{Kind: seam.ErrIO, Spec: spec, Path: loc.Path, Err: err}
	}
	if empty {
		opts.Compression = want
		return jsonl.Open(loc.Path, opts)
	}
	st, err := jsonl.Open(loc.Path, opts)
	if err != nil {
		return nil, err
	}
	if have := st.Encoding(); have != want {
		st.Close()
		return nil, &Error{Kind: ErrNotEmpty, Spec: spec, Path: loc.Path,
			Err: fmt.Errorf("it holds %s logs, not %s", have, want)}
	}
	return st, nil
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
