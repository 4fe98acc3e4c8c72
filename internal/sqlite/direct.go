package sqlite

import (
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"strconv"
	"sync"
	"time"
	"unsafe"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// A direct is a read-only use of one connection to the store's database
// through SQLite's C API as modernc.org/sqlite transpiles it (package lib),
// not through database/sql. Reads of events rows run on it: through
// database/sql the driver copies every column of every row into a new Go
// value (and boxes every integer) before anyone looks at it, and serializes
// each call on the connection's mutex. Here a row's columns are read where
// SQLite holds them, valid until the next step, and the bytes an event
// keeps are copied once, by the decoder. A direct is used by one goroutine
// at a time (it is opened NOMUTEX) and only ever runs the SELECTs of this
// file, each in its own autocommit read transaction, so it sees every
// commit made before a statement starts.
type direct struct {
	tls   *libc.TLS
	db    uintptr
	stmts map[string]uintptr // prepared statements by query text
	// interrupted marks a connection a cancelled statement interrupted:
	// it is closed rather than used again.
	interrupted bool
}

// connPragmas are what every connection of a store runs first: a bounded
// wait for locks, no memory-mapped I/O (dsh's rule), no functions run by
// the schema, and checks of every cell SQLite reads.
func connPragmas(busy time.Duration) []string {
	return []string{
		"busy_timeout(" + strconv.FormatInt(busy.Milliseconds(), 10) + ")",
		"synchronous(FULL)",
		"mmap_size(0)",
		"trusted_schema(OFF)",
		"foreign_keys(ON)",
		"cell_size_check(ON)",
	}
}

// fileURI is the URI of the database at abs, for SQLite.
func fileURI(abs string, q url.Values) string {
	p := filepath.ToSlash(abs)
	if p[0] != '/' {
		p = "/" + p // a Windows drive path
	}
	u := url.URL{Scheme: "file", Path: p}
	return u.String() + "?" + q.Encode()
}

// openDirect opens a direct connection to the database at abs with the
// URI parameters access (see Store.access). It never creates the file.
func openDirect(abs string, busy time.Duration, access url.Values) (_ *direct, err error) {
	d := &direct{tls: libc.NewTLS(), stmts: map[string]uintptr{}}
	flags := int32(sqlite3.SQLITE_OPEN_READWRITE)
	if access.Get("mode") == "ro" {
		flags = sqlite3.SQLITE_OPEN_READONLY
	}
	name, err := d.cstring(fileURI(abs, access))
	if err != nil {
		d.tls.Close()
		return nil, err
	}
	defer libc.Xfree(d.tls, name)
	out := d.tls.Alloc(int(unsafe.Sizeof(uintptr(0))))
	defer d.tls.Free(int(unsafe.Sizeof(uintptr(0))))
	rc := sqlite3.Xsqlite3_open_v2(d.tls, name, out, flags|sqlite3.SQLITE_OPEN_NOMUTEX|
		sqlite3.SQLITE_OPEN_URI|sqlite3.SQLITE_OPEN_EXRESCODE, 0)
	d.db = peekPtr(out)
	if rc != sqlite3.SQLITE_OK {
		if d.db != 0 {
			err = d.err(rc)
		} else {
			err = &libError{code: int(rc), msg: libc.GoString(sqlite3.Xsqlite3_errstr(d.tls, rc))}
		}
		d.close()
		return nil, err
	}
	// query_only: nothing run here can write, whatever a bug might ask.
	// A small page cache: a scan reads each leaf and overflow page once,
	// and the few interior pages every row's lookup walks stay in the
	// least recently used end of 64 KiB. SQLite's default of 2 MiB is
	// all fresh memory in a new process, which a 100 MB scan fills and
	// pays for in page faults (a third of the process's faults) without
	// reading a page less.
	for _, p := range append(connPragmas(busy), "query_only(ON)", "cache_size(-64)") {
		if err := d.exec("PRAGMA " + p); err != nil {
			d.close()
			return nil, err
		}
	}
	return d, nil
}

// cstring returns s as a C string, to be freed with libc.Xfree.
func (d *direct) cstring(s string) (uintptr, error) { return libc.CString(s) }

// peekPtr reads the pointer SQLite stored at p, an out parameter.
func peekPtr(p uintptr) uintptr {
	return *(*uintptr)(unsafe.Pointer(unsafe.SliceData(libc.GoBytes(p, int(unsafe.Sizeof(p))))))
}

// exec runs one statement that returns no rows the caller needs.
func (d *direct) exec(query string) error {
	st, err := d.prepare(query, false)
	if err != nil {
		return err
	}
	defer sqlite3.Xsqlite3_finalize(d.tls, st)
	for {
		switch rc := sqlite3.Xsqlite3_step(d.tls, st); rc {
		case sqlite3.SQLITE_ROW:
		case sqlite3.SQLITE_DONE:
			return nil
		default:
			return d.err(rc)
		}
	}
}

// prepare compiles query; a kept statement is prepared once per
// connection and reset after each use.
func (d *direct) prepare(query string, keep bool) (uintptr, error) {
	if st := d.stmts[query]; st != 0 && keep {
		return st, nil
	}
	z, err := d.cstring(query)
	if err != nil {
		return 0, err
	}
	defer libc.Xfree(d.tls, z)
	out := d.tls.Alloc(int(unsafe.Sizeof(uintptr(0))))
	defer d.tls.Free(int(unsafe.Sizeof(uintptr(0))))
	var flags uint32
	if keep {
		flags = sqlite3.SQLITE_PREPARE_PERSISTENT
	}
	if rc := sqlite3.Xsqlite3_prepare_v3(d.tls, d.db, z, -1, flags, out, 0); rc != sqlite3.SQLITE_OK {
		return 0, d.err(rc)
	}
	st := peekPtr(out)
	if st == 0 {
		return 0, fmt.Errorf("no statement in %q", query)
	}
	if keep {
		d.stmts[query] = st
	}
	return st, nil
}

// err is the error of a failed call that returned rc.
func (d *direct) err(rc int32) error {
	return &libError{code: int(rc), msg: libc.GoString(sqlite3.Xsqlite3_errmsg(d.tls, d.db))}
}

// close finalizes the statements and closes the connection.
func (d *direct) close() {
	for _, st := range d.stmts {
		sqlite3.Xsqlite3_finalize(d.tls, st)
	}
	d.stmts = nil
	if d.db != 0 {
		sqlite3.Xsqlite3_close_v2(d.tls, d.db)
		d.db = 0
	}
	d.tls.Close()
}

// libError is a SQLite result code and message from the C API. Its Code
// method is that of modernc.org/sqlite's *Error, so that sqlErr classifies
// both alike.
type libError struct {
	code int
	msg  string
}

func (e *libError) Error() string { return e.msg + " (" + strconv.Itoa(e.code) + ")" }

// Code returns the extended result code.
func (e *libError) Code() int { return e.code }

// directPool holds a store's idle direct connections.
type directPool struct {
	mu     sync.Mutex
	idle   []*direct
	closed bool
}

// maxIdleDirect bounds the idle direct connections a store keeps.
const maxIdleDirect = 2

// getDirect returns an idle direct connection of s or opens one.
func (s *Store) getDirect() (*direct, error) {
	p := &s.direct
	p.mu.Lock()
	if n := len(p.idle); n > 0 {
		d := p.idle[n-1]
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		return d, nil
	}
	p.mu.Unlock()
	return openDirect(s.path, s.opts.BusyTimeout, s.access)
}

// putDirect gives d back to s's pool, or closes it.
func (s *Store) putDirect(d *direct) {
	p := &s.direct
	p.mu.Lock()
	if !d.interrupted && !p.closed && len(p.idle) < maxIdleDirect {
		p.idle = append(p.idle, d)
		d = nil
	}
	p.mu.Unlock()
	if d != nil {
		d.close()
	}
}

// closeDirect closes the idle direct connections; those in use close when
// they are given back.
func (s *Store) closeDirect() {
	p := &s.direct
	p.mu.Lock()
	idle := p.idle
	p.idle, p.closed = nil, true
	p.mu.Unlock()
	for _, d := range idle {
		d.close()
	}
}

// directRows is a running query on a direct connection: the events rows
// it selects, in the columns of eventCols (and, with final, whether the
// row is its session's last row).
type directRows struct {
	s     *Store
	d     *direct
	st    uintptr
	ctx   context.Context
	done  <-chan struct{}
	stop  func() bool
	fired chan struct{} // closed when an interrupt of the statement ran
	final bool
	last  bool
	row   RawRow
	types map[string]string // interned type names
}

// queryDirect runs query (eventCols, then final's column when asked) with
// args (strings or int64s) on a direct connection of s.
func (s *Store) queryDirect(ctx context.Context, query string, final bool, args ...any) (*directRows, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	d, err := s.getDirect()
	if err != nil {
		return nil, err
	}
	st, err := d.prepare(query, true)
	if err == nil {
		err = d.bind(st, args)
	}
	if err != nil {
		sqlite3.Xsqlite3_reset(d.tls, st)
		s.putDirect(d)
		return nil, err
	}
	r := &directRows{s: s, d: d, st: st, ctx: ctx, done: ctx.Done(), final: final, types: map[string]string{}}
	if r.done != nil {
		// A step can take long (a large row of many overflow pages, a
		// wait for a lock): the end of ctx interrupts it.
		r.fired = make(chan struct{})
		db := d.db
		r.stop = context.AfterFunc(ctx, func() {
			defer close(r.fired)
			// Not d.tls, which the scanning goroutine may be using.
			tls := libc.NewTLS()
			sqlite3.Xsqlite3_interrupt(tls, db)
			tls.Close()
		})
	}
	return r, nil
}

// bind binds args to the parameters of st, from the first.
func (d *direct) bind(st uintptr, args []any) error {
	for i, a := range args {
		var rc int32
		switch v := a.(type) {
		case int64:
			rc = sqlite3.Xsqlite3_bind_int64(d.tls, st, int32(i+1), v)
		case string:
			z, err := d.cstring(v)
			if err != nil {
				return err
			}
			rc = sqlite3.Xsqlite3_bind_text(d.tls, st, int32(i+1), z, int32(len(v)), sqlite3.SQLITE_TRANSIENT)
			libc.Xfree(d.tls, z)
		default:
			return fmt.Errorf("cannot bind %T", a)
		}
		if rc != sqlite3.SQLITE_OK {
			return d.err(rc)
		}
	}
	return nil
}

// maxInterned bounds the type names a query interns; a database with more
// distinct types is hostile and gets a string per row.
const maxInterned = 256

// next steps to the next row and returns it, aliasing SQLite's memory
// until the following call; nil at the end.
func (r *directRows) next() (*RawRow, error) {
	if r.done != nil {
		select {
		case <-r.done:
			return nil, r.ctx.Err()
		default:
		}
	}
	tls, st := r.d.tls, r.st
	switch rc := sqlite3.Xsqlite3_step(tls, st); rc {
	case sqlite3.SQLITE_ROW:
	case sqlite3.SQLITE_DONE:
		return nil, nil
	default:
		if err := r.ctx.Err(); err != nil {
			return nil, err
		}
		return nil, r.d.err(rc)
	}
	row := &r.row
	*row = RawRow{Ignorable: -1}
	var err error
	if row.Seq, err = r.int(0, "seq"); err != nil {
		return nil, err
	}
	if row.Time, err = r.int(2, "time"); err != nil {
		return nil, err
	}
	if t := sqlite3.Xsqlite3_column_type(tls, st, 1); t == sqlite3.SQLITE_TEXT {
		b := r.bytes(1)
		typ, ok := r.types[string(b)]
		if !ok {
			typ = string(b)
			if len(r.types) < maxInterned {
				r.types[typ] = typ
			}
		}
		row.Type = typ
	} else if t != sqlite3.SQLITE_NULL {
		return nil, corruptf("row seq %d: type is not text", row.Seq)
	}
	row.Data, row.DataBlob = r.bytes(3), sqlite3.Xsqlite3_column_type(tls, st, 3) == sqlite3.SQLITE_BLOB
	if t := sqlite3.Xsqlite3_column_type(tls, st, 4); t != sqlite3.SQLITE_NULL {
		row.Seqs, row.SeqsBlob = r.bytes(4), t == sqlite3.SQLITE_BLOB
	}
	if sqlite3.Xsqlite3_column_type(tls, st, 5) != sqlite3.SQLITE_NULL {
		row.SurfaceOp = r.bytes(5)
	}
	switch sqlite3.Xsqlite3_column_type(tls, st, 6) {
	case sqlite3.SQLITE_NULL:
	case sqlite3.SQLITE_INTEGER:
		row.Ignorable = sqlite3.Xsqlite3_column_int64(tls, st, 6)
	default:
		return nil, corruptf("row seq %d: ignorable is not an integer", row.Seq)
	}
	if r.final {
		r.last = sqlite3.Xsqlite3_column_int64(tls, st, 7) != 0
	}
	return row, nil
}

// int reads integer column i.
func (r *directRows) int(i int32, name string) (int64, error) {
	switch sqlite3.Xsqlite3_column_type(r.d.tls, r.st, i) {
	case sqlite3.SQLITE_INTEGER:
		return sqlite3.Xsqlite3_column_int64(r.d.tls, r.st, i), nil
	case sqlite3.SQLITE_NULL:
		return 0, fmt.Errorf("events row without %s", name)
	}
	return 0, corruptf("events row: %s is not an integer", name)
}

// bytes returns the bytes of column i as stored (a number as its text),
// aliasing SQLite's memory; never nil.
func (r *directRows) bytes(i int32) []byte {
	p := sqlite3.Xsqlite3_column_blob(r.d.tls, r.st, i)
	n := sqlite3.Xsqlite3_column_bytes(r.d.tls, r.st, i)
	if p == 0 || n <= 0 {
		return []byte{}
	}
	return libc.GoBytes(p, int(n))
}

// isFinal reports whether the row read last is its session's last row.
func (r *directRows) isFinal() bool { return r.last }

// close ends the query and gives the connection back.
func (r *directRows) close() error {
	if r.stop != nil && !r.stop() {
		<-r.fired
		r.d.interrupted = true
	}
	sqlite3.Xsqlite3_reset(r.d.tls, r.st)
	sqlite3.Xsqlite3_clear_bindings(r.d.tls, r.st)
	r.s.putDirect(r.d)
	return nil
}
