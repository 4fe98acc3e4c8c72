// Package sqlite is the SQLite backend of the persistence seam: dsh's
// opt-in store, one database file holding many sessions, in schema 14 (one
// row per event, JSON text) or schema 17 (packed chunk rows, zstd payloads,
// varint sourceEventSeqs), told apart by PRAGMA user_version (store.md 6).
//
// It uses modernc.org/sqlite (pure Go) and owns all of its SQL: through
// database/sql for sessions rows, listings and writes, and through SQLite's
// C API as modernc transpiles it for the reads of events rows (direct.go),
// which a goroutine reads ahead (prefetch.go). Connections run in WAL mode
// with synchronous=FULL, mmap off, trusted_schema off and a bounded
// busy_timeout. Stat and List read the sessions table and each session's
// last row only (the primary key index finds it); scans stream rows with
// memory bounded by the largest row.
// Appends run in BEGIN IMMEDIATE: they check the stored tail and revision,
// insert the batch's rows and bump the revision once, so a commit costs
// about one fsync of the WAL. Write ownership is described in lock.go.
package sqlite

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dshctl/dshctl/internal/seam"
	sqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// ApplicationID is PRAGMA application_id of every dsh store: "DSHP".
const ApplicationID = 0x44534850

// DefaultBusyTimeout is how long a write waits for another connection's
// write transaction before it fails with "in use".
const DefaultBusyTimeout = 5 * time.Second

// Options configure Open.
type Options struct {
	// Create makes a new database (mode 0600) when none exists at the path.
	Create bool
	// Schema is the schema of a database Create makes: Schema17 (the
	// default, when 0) or Schema14. It does not apply to an existing one.
	Schema int
	// AllowUnknownTypes makes reads serve events whose type the session's
	// version does not know and that are not ignorable (see jsonl.Options);
	// write opens refuse such sessions regardless.
	AllowUnknownTypes bool
	// BusyTimeout bounds the wait for another connection's write lock;
	// 0 means DefaultBusyTimeout.
	BusyTimeout time.Duration
	// BackupDir receives the rows that a write removes (a torn final
	// row), under <BackupDir>/<seam.SafeName(id)>/. A write that has to
	// remove a row fails when it is empty.
	BackupDir string
	// ProbeWriters makes a write open refuse a database that another
	// process has open for writing, where the OS tells (procfd).
	ProbeWriters bool
	// OpenDamaged opens a database that Open would refuse as damaged
	// (pages that do not read, a changed schema), for verify: its
	// VerifyLayout reports the damage, and every other operation fails
	// with it.
	OpenDamaged bool
	// ReadOnly opens the database for reading only (SQLite's mode=ro):
	// nothing of it changes, the WAL is never checkpointed into the
	// database nor deleted, a damaged one is kept; Create and write opens
	// fail with seam.ErrReadOnly. SQLite may make the empty -wal and -shm
	// files its readers share. In a folder where it cannot (a read-only
	// file system, another user's folder), a database without a WAL is
	// read as it is in its file (immutable); one with a WAL cannot be.
	ReadOnly bool
}

// Store is a SQLite session store. It implements seam.Service,
// seam.OpenLister and seam.LockProber.
type Store struct {
	path   string
	schema int
	opts   Options
	db     *sql.DB
	// access are the URI parameters of every connection: mode=rw, or
	// mode=ro (and immutable=1) for a read-only store.
	access url.Values
	// noWrite is why a store opened for writing was opened read-only
	// (a damaged WAL): its writes fail with it.
	noWrite error

	mu      sync.Mutex
	writers seam.Claims[*handle] // ids this store owns for writing, pending creates included
	closed  bool
	refs    int // open handles; the database closes with the last one after Close

	stmtMu sync.Mutex
	stmts  map[string]*sql.Stmt // prepared statements by query text

	direct directPool // connections that read events rows (direct.go)

	dbMu sync.Mutex
	dbc  dbCheck // what verify found of the database as a whole

	// qcDone says the database passed PRAGMA quick_check before a write
	// of this Store (see checkWrite).
	qcMu   sync.Mutex
	qcDone bool

	// damaged is why a store opened with OpenDamaged is unusable.
	damaged error
	// walPending says the database is not in WAL mode yet (see ensureWAL).
	walPending atomic.Bool
	walMu      sync.Mutex
}

// writes counts the write transactions every store of this process
// committed: a read pinned to an older transaction (ListOpen) leaves it
// once it changes, so that it sees every append returned before it
// started, whichever service made it.
var writes atomic.Int64

var (
	_ seam.Service    = (*Store)(nil)
	_ seam.OpenLister = (*Store)(nil)
	_ seam.LockProber = (*Store)(nil)
)

var ofdOnce sync.Once

// Open opens the dsh SQLite store at path. It refuses a path that is a
// symbolic link or not a regular file, a file other users may access
// (POSIX), a database of another application or an unknown schema version.
func Open(path string, opts Options) (*Store, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, &seam.Error{Kind: seam.ErrIO, Op: "open store", Pos: seam.NoPos, Err: err}
	}
	if opts.Schema == 0 {
		opts.Schema = Schema17
	}
	if opts.Schema != Schema14 && opts.Schema != Schema17 {
		return nil, storeErr(seam.ErrInvalid, abs, fmt.Sprintf("cannot make a database of schema %d: dshctl writes schemas 14 and 17", opts.Schema), "")
	}
	if opts.BusyTimeout <= 0 {
		opts.BusyTimeout = DefaultBusyTimeout
	}
	// Backups are named by absolute paths, wherever the command ran.
	if opts.BackupDir != "" {
		if opts.BackupDir, err = filepath.Abs(opts.BackupDir); err != nil {
			return nil, &seam.Error{Kind: seam.ErrIO, Op: "open store", Pos: seam.NoPos, Err: err}
		}
	}
	if err := checkFile(abs, opts.Create); err != nil {
		return nil, err
	}
	// OFD locks keep SQLite's locks on the database file safe from a close
	// of another descriptor of it anywhere in the process.
	ofdOnce.Do(func() { sqlite.OFDLocking(true) })
	var noWrite error
	if !opts.ReadOnly {
		// A read-write connection resets or deletes a WAL whose header it
		// cannot read, even if it never writes: such a database is
		// opened read-only, and its writes refused with why.
		if err := walRefusal(abs); err != nil {
			opts.ReadOnly, noWrite = true, err
		}
	}
	access := url.Values{"mode": {"rw"}}
	if opts.ReadOnly {
		access.Set("mode", "ro")
	}
	s, err := openDB(abs, opts, access)
	if err != nil && opts.ReadOnly && cannotShare(err) {
		// SQLite's readers share the WAL's index in a -shm file beside
		// the database, which cannot be made here. Without a WAL, the
		// database file is the whole database: read it as it is.
		if fi, serr := os.Stat(abs + "-wal"); serr == nil && fi.Size() > 0 {
			return nil, storeErr(seam.ErrIO, abs, fmt.Sprintf("cannot read %s: its write-ahead log (%s-wal, %d bytes) may hold commits, which SQLite reads only with a %s-shm file beside it, and that file cannot be made in the folder (it is read-only)",
				abs, filepath.Base(abs), fi.Size(), filepath.Base(abs)), "copy the database with its -wal file to a writable folder and read the copy")
		}
		access.Set("immutable", "1")
		s, err = openDB(abs, opts, access)
	}
	if err != nil && cannotShare(err) {
		return nil, openError(abs, err)
	}
	if s != nil {
		s.noWrite = noWrite
	}
	return s, err
}

// openDB opens the database at abs with the URI parameters access (mode,
// immutable) and checks it (init).
func openDB(abs string, opts Options, access url.Values) (*Store, error) {
	db, err := sql.Open("sqlite", dsn(abs, opts.BusyTimeout, access))
	if err != nil {
		return nil, openError(abs, err)
	}
	db.SetMaxIdleConns(max(2, runtime.GOMAXPROCS(0)))
	s := &Store{path: abs, opts: opts, db: db, access: access, stmts: map[string]*sql.Stmt{}}
	if err := s.init(opts.Create); err != nil {
		if opts.ReadOnly && cannotShare(err) {
			db.Close()
			return nil, err
		}
		err = openError(abs, err)
		if opts.OpenDamaged && errors.Is(err, seam.ErrCorrupt) {
			s.damaged = err
			return s, nil
		}
		db.Close()
		return nil, err
	}
	return s, nil
}

// dsn is the data source name of the database at abs: a URI that never
// creates the file (Open does that, with mode 0600), with the parameters
// access (mode=rw or ro, immutable) and the pragmas every connection runs.
// Write transactions begin IMMEDIATE.
func dsn(abs string, busy time.Duration, access url.Values) string {
	q := url.Values{}
	for k, v := range access {
		q[k] = v
	}
	q.Set("_txlock", "immediate")
	for _, pragma := range connPragmas(busy) {
		q.Add("_pragma", pragma)
	}
	return fileURI(abs, q)
}

// checkFile checks the database file; it makes a new empty one (mode
// 0600, exclusive) when create is set and none exists.
func checkFile(abs string, create bool) error {
	fi, err := os.Lstat(abs)
	if errors.Is(err, fs.ErrNotExist) && create {
		f, err := os.OpenFile(abs, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err == nil {
			err = f.Close()
		}
		if err == nil {
			return nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return openError(abs, err)
		}
		fi, err = os.Lstat(abs) // another process made it first
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return storeErr(seam.ErrNotFound, abs, "no SQLite session store at "+abs, "")
	case err != nil:
		return openError(abs, err)
	case fi.Mode()&fs.ModeSymlink != 0:
		return storeErr(seam.ErrInvalid, abs, abs+" is a symbolic link (dsh refuses links too)", "name the database file itself")
	case !fi.Mode().IsRegular():
		return storeErr(seam.ErrInvalid, abs, abs+" is not a regular file, so not a SQLite session store", "")
	}
	return checkMode(abs, fi)
}

// cannotShare reports whether err is SQLite's failure to open (or make)
// the files a reader of a WAL database shares, in a folder it cannot
// write: SQLITE_CANTOPEN, SQLITE_READONLY_DIRECTORY.
func cannotShare(err error) bool {
	var e *sqlite.Error
	if !errors.As(err, &e) {
		return false
	}
	return e.Code()&0xff == sqlite3.SQLITE_CANTOPEN || e.Code() == sqlite3.SQLITE_READONLY_DIRECTORY ||
		e.Code() == sqlite3.SQLITE_READONLY_CANTINIT
}

// init checks, or for a new empty database creates, the schema.
func (s *Store) init(create bool) error {
	ctx := context.Background()
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return s.sqlErr("open store", "", err)
	}
	defer conn.Close()
	var mode string
	if err := conn.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return s.sqlErr("open store", "", err)
	}
	if mode != "wal" {
		// dsh's stores are WAL already. Another one becomes WAL before
		// dshctl's first write to it, not when it is only read.
		if !create {
			s.walPending.Store(true)
		} else if err := toWAL(ctx, conn); err != nil {
			return s.sqlErr("open store", "", err)
		}
	}
	appID, version, empty, err := readIdentity(ctx, conn)
	if err != nil {
		return s.sqlErr("open store", "", err)
	}
	if create && appID == 0 && version == 0 && empty {
		if err := s.createSchema(ctx, conn); err != nil {
			return err
		}
		if appID, version, _, err = readIdentity(ctx, conn); err != nil {
			return s.sqlErr("open store", "", err)
		}
	}
	if appID != ApplicationID {
		msg := fmt.Sprintf("%s is not a dsh session store: its application_id is %#x, not %#x (DSHP)", s.path, uint32(appID), ApplicationID)
		if appID == 0 && version == 0 && empty {
			msg = s.path + " is an empty SQLite database, not a dsh session store"
		}
		return storeErr(seam.ErrInvalid, s.path, msg, "")
	}
	if version != Schema14 && version != Schema17 {
		newer := ""
		if version > Schema17 {
			newer = ", written by a newer dsh"
		}
		return storeErr(seam.ErrUnsupportedFormat, s.path,
			fmt.Sprintf("%s has schema version %d%s; dshctl reads schemas 14 and 17 (dsh has no migration)", s.path, version, newer), "")
	}
	s.schema = int(version)
	if problems, err := schemaProblems(ctx, conn, s.schema); err != nil {
		return s.sqlErr("open store", "", err)
	} else if len(problems) > 0 {
		return damagedErr(s.path, fmt.Sprintf("%s does not have dsh's schema %d: %s", s.path, s.schema, problems[0]))
	}
	return nil
}

// toWAL puts the database in WAL mode.
func toWAL(ctx context.Context, conn *sql.Conn) error {
	var mode string
	if err := conn.QueryRowContext(ctx, "PRAGMA journal_mode=WAL").Scan(&mode); err != nil {
		return err
	}
	if mode != "wal" {
		return fmt.Errorf("the database stays in journal mode %s, not WAL", mode)
	}
	return nil
}

// ensureWAL puts a database that is not in WAL mode yet in it, before a
// write.
func (s *Store) ensureWAL(ctx context.Context) error {
	if !s.walPending.Load() {
		return nil
	}
	s.walMu.Lock()
	defer s.walMu.Unlock()
	if !s.walPending.Load() {
		return nil
	}
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if err := toWAL(ctx, conn); err != nil {
		return err
	}
	s.walPending.Store(false)
	return nil
}

// readIdentity reads the application id, the schema version and whether
// the database has no schema object.
func readIdentity(ctx context.Context, conn *sql.Conn) (appID, version int64, empty bool, err error) {
	if err = conn.QueryRowContext(ctx, "PRAGMA application_id").Scan(&appID); err != nil {
		return
	}
	if err = conn.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return
	}
	var n int
	err = conn.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_schema").Scan(&n)
	return appID, version, n == 0, err
}

// Path returns the database file.
func (s *Store) Path() string { return s.path }

// Schema returns the database's schema version, 14 or 17.
func (s *Store) Schema() int { return s.schema }

// location is the Location of every session of the store.
func (s *Store) location(v int) seam.Location {
	return seam.Location{Backend: "sqlite", Path: s.path, Encoding: "sqlite-" + strconv.Itoa(s.schema), Generation: v}
}

// size is the physical size of the store: the database file and its WAL.
func (s *Store) size() int64 {
	var n int64
	for _, p := range []string{s.path, s.path + "-wal"} {
		if fi, err := os.Stat(p); err == nil {
			n += fi.Size()
		}
	}
	return n
}

// checkWritable fails a write (op on session id) of a store opened
// read-only.
func (s *Store) checkWritable(op, id string) error {
	if s.noWrite != nil {
		return s.noWrite
	}
	if !s.opts.ReadOnly {
		return nil
	}
	return &seam.Error{Kind: seam.ErrReadOnly, Op: op, ID: id, Pos: seam.PathPos(s.path), Err: errors.New("the store was opened read-only")}
}

// check fails when the store is closed or ctx is done.
func (s *Store) check(ctx context.Context, op string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return &seam.Error{Kind: seam.ErrHandleClosed, Op: op, Pos: seam.NoPos, Err: errors.New("store is closed")}
	}
	if s.damaged != nil && op != "verify" {
		return s.damaged
	}
	return nil
}

// ref counts a new handle; unref drops it and closes the database when the
// store was closed and this was its last handle.
func (s *Store) ref() {
	s.mu.Lock()
	s.refs++
	s.mu.Unlock()
}

func (s *Store) unref() {
	s.mu.Lock()
	s.refs--
	last := s.closed && s.refs == 0
	s.mu.Unlock()
	if last {
		s.closeDB()
	}
}

// closeDB closes the prepared statements and the database.
func (s *Store) closeDB() error {
	s.stmtMu.Lock()
	for _, st := range s.stmts {
		st.Close()
	}
	s.stmts = map[string]*sql.Stmt{}
	s.stmtMu.Unlock()
	s.closeDirect()
	return s.db.Close()
}

// Close marks the store closed; later calls on it fail. Open handles stay
// usable until they are closed; the database closes with the last one.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	last := s.refs == 0
	s.mu.Unlock()
	if last {
		return s.sqlErr("close store", "", s.closeDB())
	}
	return nil
}

// WriterActive reports whether a write handle, of this process or
// another, owns session id. dsh's own writers take no such lock.
func (s *Store) WriterActive(ctx context.Context, id string) (bool, error) {
	if err := s.check(ctx, "probe lock"); err != nil {
		return false, err
	}
	held, err := writerActive(s.path, id)
	if err != nil {
		return false, &seam.Error{Kind: seam.ErrIO, Op: "probe lock", ID: id, Pos: seam.PathPos(s.path + lockSuffix), Err: err}
	}
	return held, nil
}

// newToken returns a random UUID (version 4), dsh's form of store ids and
// incarnations.
func newToken() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16]), nil
}

// OpenError is why Open refused a database: a message that names the file
// once, and, when there is one, how to fix it (Hint). It matches its seam
// kind with errors.Is and unwraps to a *seam.Error.
type OpenError struct {
	Kind error // a seam sentinel
	Path string
	Msg  string
	// Fix says what to do about it; "" when nothing is to be done.
	Fix string
	// Damaged says the file is a database that is damaged or not quite
	// dsh's: a verify of the store lists what is wrong with it.
	Damaged bool
}

func (e *OpenError) Error() string { return e.Msg }

// Hint returns Fix, for the command line's hint line.
func (e *OpenError) Hint() string { return e.Fix }

func (e *OpenError) Unwrap() error {
	return &seam.Error{Kind: e.Kind, Op: "open store", Pos: seam.PathPos(e.Path), Err: errors.New(e.Msg)}
}

// storeErr is an OpenError of the database at path; msg names it.
func storeErr(kind error, path, msg, fix string) error {
	return &OpenError{Kind: kind, Path: path, Msg: msg, Fix: fix}
}

// openError words an error of opening the database at path that is not an
// OpenError yet: damage found by SQLite, an I/O failure.
func openError(path string, err error) error {
	var oe *OpenError
	switch {
	case errors.As(err, &oe):
		return err
	case isCorrupt(err):
		return damagedErr(path, fmt.Sprintf("%s is damaged: %s", path, driverText(err)))
	}
	kind := seam.ErrIO
	var se *seam.Error
	if errors.As(err, &se) {
		kind = se.Kind
	}
	return storeErr(kind, path, fmt.Sprintf("open %s: %s", path, driverText(err)), "")
}

// damagedErr is the error of a database at path that is damaged or not
// quite dsh's, which a verify of the store explains.
func damagedErr(path, msg string) error {
	return &OpenError{Kind: seam.ErrCorrupt, Path: path, Msg: msg, Damaged: true}
}

// sqlErr turns a database error into a *seam.Error: a database too busy
// to write is ErrAlreadyOwned ("in use"), a damaged one ErrCorrupt,
// anything else ErrIO. Context errors and *seam.Errors pass through.
func (s *Store) sqlErr(op, id string, err error) error {
	if err == nil {
		return nil
	}
	var se *seam.Error
	if errors.As(err, &se) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return seam.Wrap(err, seam.ErrIO, op, id)
	}
	kind := seam.ErrIO
	var e *sqlite.Error
	if errors.As(err, &e) {
		switch e.Code() & 0xff {
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
			// A write waits for another connection's write lock; a read
			// waits only while a checkpoint or recovery holds the file.
			if op == "append" || op == "create" || op == "flush" {
				kind = seam.ErrAlreadyOwned
			}
			err = fmt.Errorf("the database is locked by another connection (waited %v): %w", s.opts.BusyTimeout, err)
		case sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB:
			kind = seam.ErrCorrupt
			err = fmt.Errorf("the database file is damaged: %w", err)
		case sqlite3.SQLITE_INTERRUPT:
			kind = seam.ErrIO
		}
	}
	return &seam.Error{Kind: kind, Op: op, ID: id, Pos: seam.PathPos(s.path), Err: err}
}

// query runs a prepared statement of the store, in tx when it is not nil.
// Statements are prepared once per store (and per connection by
// database/sql), which saves parsing them for every session a listing
// visits.
func (s *Store) query(ctx context.Context, q querier, query string, args ...any) (*sql.Rows, error) {
	if q != nil {
		return q.QueryContext(ctx, query, args...)
	}
	s.stmtMu.Lock()
	st := s.stmts[query]
	s.stmtMu.Unlock()
	if st == nil {
		var err error
		if st, err = s.db.PrepareContext(ctx, query); err != nil {
			return nil, err
		}
		s.stmtMu.Lock()
		if prev := s.stmts[query]; prev != nil {
			st.Close()
			st = prev
		} else {
			s.stmts[query] = st
		}
		s.stmtMu.Unlock()
	}
	return st.QueryContext(ctx, args...)
}

// querier runs read statements somewhere else than on the store's pool:
// in a write transaction (*sql.Tx) or on a pinned connection.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// pinned is one connection of the store held in one read transaction,
// with its statements prepared once: a listing runs thousands of small
// statements, and each would otherwise begin a transaction of its own.
// It is used by one goroutine at a time.
type pinned struct {
	conn  *sql.Conn
	stmts map[string]*sql.Stmt
}

// pin takes a connection of the pool and begins a read transaction on it.
func (s *Store) pin(ctx context.Context) (*pinned, error) {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := conn.ExecContext(ctx, "BEGIN"); err != nil {
		conn.Close()
		return nil, err
	}
	return &pinned{conn: conn, stmts: map[string]*sql.Stmt{}}, nil
}

func (p *pinned) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	st := p.stmts[query]
	if st == nil {
		var err error
		if st, err = p.conn.PrepareContext(ctx, query); err != nil {
			return nil, err
		}
		p.stmts[query] = st
	}
	return st.QueryContext(ctx, args...)
}

// close ends the transaction and returns the connection to the pool.
func (p *pinned) close() {
	for _, st := range p.stmts {
		st.Close()
	}
	p.conn.ExecContext(context.Background(), "ROLLBACK")
	p.conn.Close()
}
