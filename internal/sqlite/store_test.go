package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dshctl/dshctl/internal/seam"
)

var ctx = context.Background()

// newStore makes a new database of schema in a temp dir; the store is
// closed at cleanup.
func newStore(t *testing.T, schema int, opts Options) *Store {
	t.Helper()
	opts.Create, opts.Schema = true, schema
	if opts.BackupDir == "" {
		opts.BackupDir = t.TempDir()
	}
	s, err := Open(dbPath(t.TempDir()), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func v4Header(id string) seam.Header {
	f := false
	return seam.Header{Version: 4, ID: id, CreatedAt: 1785331618000, Cwd: "/w", IsSeeded: &f}
}

// headerFor is v4Header, or in a database that holds v0 only (schema 14)
// the v0 header dsh 0.0.1 writes.
func headerFor(s *Store, id string) seam.Header {
	if s.MaxFormatVersion() == 0 {
		return seam.Header{Version: 0, ID: id, CreatedAt: 1785331618000, Cwd: "/w"}
	}
	return v4Header(id)
}

func events(from, n int64) []seam.Event {
	out := make([]seam.Event, n)
	for i := range out {
		seq := from + int64(i)
		out[i] = seam.Event{Type: "step/start", Seq: seq, Time: 1785331618500 + seq, Data: []byte(`{"turn":1,"step":1}`)}
	}
	return out
}

// stored makes session id with n events in s.
func stored(t *testing.T, s *Store, id string, n int64) {
	t.Helper()
	h, err := s.Create(ctx, headerFor(s, id), seam.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if err := h.Append(ctx, events(0, n)); err != nil {
		t.Fatal(err)
	}
}

func wantKind(t *testing.T, err, kind error, what string) {
	t.Helper()
	var se *seam.Error
	if !errors.Is(err, kind) || !errors.As(err, &se) {
		t.Fatalf("%s: %v, want %v", what, err, kind)
	}
}

func TestOpenRefuses(t *testing.T) {
	good := newStore(t, Schema17, Options{}).Path()
	// setPragma makes a new store, closes it and runs stmt on it.
	setPragma := func(stmt string) string {
		t.Helper()
		s, err := Open(dbPath(t.TempDir()), Options{Create: true})
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
		db, err := sql.Open("sqlite", s.Path())
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if _, err := db.Exec(stmt); err != nil {
			t.Fatal(err)
		}
		return s.Path()
	}
	cases := []struct {
		name string
		path func() string
		kind error
		msg  string
	}{
		{"missing", func() string { return filepath.Join(t.TempDir(), "none.sqlite") }, seam.ErrNotFound, "no SQLite session store"},
		{"other_application", func() string { return setPragma("PRAGMA application_id = 7") }, seam.ErrInvalid, "application_id is 0x7"},
		{"newer_schema", func() string { return setPragma("PRAGMA user_version = 18") }, seam.ErrUnsupportedFormat, "schema version 18, written by a newer dsh"},
		{"older_schema", func() string { return setPragma("PRAGMA user_version = 13") }, seam.ErrUnsupportedFormat, "schema version 13"},
		{"trigger", func() string {
			return setPragma("CREATE TRIGGER t AFTER INSERT ON events BEGIN DELETE FROM sessions; END")
		}, seam.ErrCorrupt, `unexpected trigger "t"`},
		{"changed_table", func() string { return setPragma("ALTER TABLE events ADD COLUMN extra TEXT") }, seam.ErrCorrupt, "table events has columns"},
		{"empty_database", func() string {
			p := filepath.Join(t.TempDir(), "e.sqlite")
			os.WriteFile(p, nil, 0o600)
			return p
		}, seam.ErrInvalid, "empty SQLite database"},
		{"directory", func() string { return t.TempDir() }, seam.ErrInvalid, "not a regular file"},
		{"symlink", func() string {
			p := filepath.Join(t.TempDir(), "link.sqlite")
			if err := os.Symlink(good, p); err != nil {
				t.Skip(err)
			}
			return p
		}, seam.ErrInvalid, "symbolic link"},
	}
	if runtime.GOOS != "windows" {
		cases = append(cases, struct {
			name string
			path func() string
			kind error
			msg  string
		}{"world_readable", func() string {
			p := setPragma("PRAGMA user_version = 17")
			os.Chmod(p, 0o644)
			return p
		}, seam.ErrInvalid, "mode 0644"})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Open(c.path(), Options{})
			wantKind(t, err, c.kind, "Open")
			if !strings.Contains(err.Error(), c.msg) {
				t.Fatalf("Open: %q does not say %q", err, c.msg)
			}
		})
	}
}

func TestCreateMode(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no mode bits")
	}
	s := newStore(t, Schema17, Options{})
	stored(t, s, "a", 3)
	for _, p := range []string{s.Path(), s.Path() + "-wal", s.Path() + lockSuffix} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %#o, want 0600", p, fi.Mode().Perm())
		}
	}
	for pragma, want := range map[string]string{"journal_mode": "wal", "synchronous": "2", "mmap_size": "0",
		"trusted_schema": "0", "busy_timeout": "5000", "foreign_keys": "1", "application_id": "1146308688", "user_version": "17"} {
		var got string
		if err := s.db.QueryRow("PRAGMA " + pragma).Scan(&got); err != nil || got != want {
			t.Errorf("PRAGMA %s = %q, %v; want %s", pragma, got, err, want)
		}
	}
}

// TestBusyDatabase holds the database's write lock in another connection
// (as dsh does while it appends): a read works, an append waits the busy
// timeout and fails with "in use", and nothing is written.
func TestBusyDatabase(t *testing.T) {
	s := newStore(t, Schema17, Options{BusyTimeout: 200 * time.Millisecond})
	stored(t, s, "a", 3)
	other, err := sql.Open("sqlite", s.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	conn, err := other.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	w, err := s.Open(ctx, "a", seam.Write)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	start := time.Now()
	err = w.Append(ctx, events(3, 2))
	wantKind(t, err, seam.ErrAlreadyOwned, "Append while another connection writes")
	if waited := time.Since(start); waited < 150*time.Millisecond || waited > 5*time.Second {
		t.Fatalf("waited %v for a 200ms busy timeout", waited)
	}
	if !strings.Contains(err.Error(), "in use") || !strings.Contains(err.Error(), "locked by another connection") {
		t.Fatalf("message %q", err)
	}
	got, err := w.Read(ctx, 0, -1)
	if err != nil || len(got) != 3 {
		t.Fatalf("Read beside the other writer: %d events, %v", len(got), err)
	}
	conn.ExecContext(ctx, "ROLLBACK")
	if err := w.Append(ctx, events(3, 2)); err != nil {
		t.Fatalf("Append once the lock is free: %v", err)
	}
}

// TestWriterBehindHandle checks that a write handle notices another writer
// (dsh, say) that appended behind it, and stores nothing.
func TestWriterBehindHandle(t *testing.T) {
	s := newStore(t, Schema17, Options{})
	stored(t, s, "a", 3)
	w, err := s.Open(ctx, "a", seam.Write)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	insertRaw(t, s, "a", []row{{seq: 3, time: 1, typ: "turn/start", data: `{"turn":2}`}})
	if _, err := s.db.Exec("UPDATE sessions SET revision = revision + 1"); err != nil {
		t.Fatal(err)
	}
	wantKind(t, w.Append(ctx, events(3, 1)), seam.ErrOwnershipLost, "Append after another writer")
	if snap, _ := s.Stat(ctx, "a"); snap.EventCount != 4 {
		t.Fatalf("EventCount %d after the refused append", snap.EventCount)
	}
}

// TestTornRowRepair checks that the append that removes a torn final
// packed row saves it first, and reports the repair.
func TestTornRowRepair(t *testing.T) {
	backups := t.TempDir()
	s := newStore(t, Schema17, Options{BackupDir: backups})
	stored(t, s, "a/b", 3)
	insertRaw(t, s, "a/b", []row{{seq: 3, time: 9, typ: seam.TextChunks, data: []byte{0x28, 0xb5, 0x2f, 0xfd, 1}, ignorable: 0}})
	snap, err := s.Stat(ctx, "a/b")
	if err != nil || snap.EventCount != 3 || snap.Location.TornBytes == 0 {
		t.Fatalf("Stat: %+v %v", snap, err)
	}
	w, err := s.Open(ctx, "a/b", seam.Write)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.Append(ctx, events(3, 1)); err != nil {
		t.Fatal(err)
	}
	reps := w.(seam.TailRepairer).Repairs()
	if len(reps) != 1 || reps[0].Kind != seam.RepairTorn || filepath.Dir(reps[0].Backup) != filepath.Join(backups, "a_b") {
		t.Fatalf("repairs %+v", reps)
	}
	data, err := os.ReadFile(reps[0].Backup)
	if err != nil {
		t.Fatal(err)
	}
	var b backedUpRow
	if err := json.Unmarshal(data, &b); err != nil || b.Seq != 3 || b.DataBlob == nil || *b.DataBlob != "KLUv/QE=" || b.SessionID != "a/b" {
		t.Fatalf("backup %s: %v", data, err)
	}
	if snap, _ := s.Stat(ctx, "a/b"); snap.EventCount != 4 || snap.Location.TornBytes != 0 {
		t.Fatalf("after the repair: %+v", snap)
	}
}

// TestCorruptRowBeforeTail checks that a row that does not decode before
// the end fails reads with ErrCorrupt (point 19 of the contract checks a
// damaged final row).
func TestCorruptRowBeforeTail(t *testing.T) {
	s := newStore(t, Schema14, Options{})
	stored(t, s, "a", 2)
	insertRaw(t, s, "a", []row{{seq: 2, time: 1, typ: "step/start", data: `{"turn":`}, {seq: 3, time: 1, typ: "step/start", data: `{}`}})
	r, err := s.Open(ctx, "a", seam.Read)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	_, err = r.Read(ctx, 0, -1)
	wantKind(t, err, seam.ErrCorrupt, "Read")
	if !strings.Contains(err.Error(), "seq 2") {
		t.Fatalf("error %q does not name seq 2", err)
	}
	_, err = s.Open(ctx, "a", seam.Write)
	wantKind(t, err, seam.ErrCorrupt, "write Open")
}

// TestLockOtherStoreSameProcess checks that two stores on one database in
// one process exclude each other's writers and that WriterActive sees it.
func TestLockOtherStoreSameProcess(t *testing.T) {
	s := newStore(t, Schema17, Options{})
	stored(t, s, "a", 1)
	other, err := Open(s.Path(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if busy, err := other.WriterActive(ctx, "a"); err != nil || busy {
		t.Fatalf("WriterActive before: %v %v", busy, err)
	}
	w, err := s.Open(ctx, "a", seam.Write)
	if err != nil {
		t.Fatal(err)
	}
	_, err = other.Open(ctx, "a", seam.Write)
	wantKind(t, err, seam.ErrAlreadyOwned, "second write Open")
	if busy, err := other.WriterActive(ctx, "a"); err != nil || !busy {
		t.Fatalf("WriterActive while held: %v %v", busy, err)
	}
	w.Close()
	if busy, err := other.WriterActive(ctx, "a"); err != nil || busy {
		t.Fatalf("WriterActive after: %v %v", busy, err)
	}
}

// TestStatListReadOnlyLastRow proves that Stat and List read no row but
// each session's last: every other row is made undecodable, and both still
// report every session, with the counts from the last rows.
func TestStatListReadOnlyLastRow(t *testing.T) {
	for _, schema := range []int{Schema14, Schema17} {
		s := newStore(t, schema, Options{})
		for i := range 50 {
			stored(t, s, fmt.Sprintf("s%02d", i), int64(i+1))
		}
		if _, err := s.db.Exec(`UPDATE events SET data = 'not json' WHERE seq < (SELECT max(seq) FROM events e WHERE e.session_id = events.session_id)`); err != nil {
			t.Fatal(err)
		}
		entries, err := s.List(ctx)
		if err != nil || len(entries) != 50 {
			t.Fatalf("List: %d entries, %v", len(entries), err)
		}
		for i, e := range entries {
			snap, err := s.Stat(ctx, e.Snapshot.Header.ID)
			if e.Err != nil || err != nil || e.Snapshot.EventCount != int64(i+1) || snap.EventCount != int64(i+1) {
				t.Fatalf("%s: List %d %v, Stat %d %v", e.Snapshot.Header.ID, e.Snapshot.EventCount, e.Err, snap.EventCount, err)
			}
		}
	}
}

// TestStoredVersionNewer checks that a session whose version column is
// newer than dshctl knows is unsupported, not corrupt, and listed with
// the error.
func TestStoredVersionNewer(t *testing.T) {
	s := newStore(t, Schema17, Options{})
	stored(t, s, "a", 1)
	if _, err := s.db.Exec("UPDATE sessions SET version = 7"); err != nil {
		t.Fatal(err)
	}
	_, err := s.Stat(ctx, "a")
	wantKind(t, err, seam.ErrUnsupportedFormat, "Stat")
	_, err = s.Open(ctx, "a", seam.Read)
	wantKind(t, err, seam.ErrUnsupportedFormat, "Open")
	entries, err := s.List(ctx)
	if err != nil || len(entries) != 1 || !errors.Is(entries[0].Err, seam.ErrUnsupportedFormat) {
		t.Fatalf("List: %+v, %v", entries, err)
	}
}

// TestListOpenFreshness checks that a handle ListOpen gives sees an append
// another service of the process made after the listing began.
func TestListOpenFreshness(t *testing.T) {
	s := newStore(t, Schema17, Options{})
	stored(t, s, "a", 2)
	other, err := Open(s.Path(), Options{BackupDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	err = s.ListOpen(ctx, nil, func(e seam.Entry, h seam.Handle, err error) {
		if err != nil {
			t.Fatal(err)
		}
		w, err := other.Open(ctx, "a", seam.Write)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		if err := w.Append(ctx, events(2, 1)); err != nil {
			t.Fatal(err)
		}
		got, err := h.Read(ctx, 0, -1)
		if err != nil || len(got) != 3 {
			t.Fatalf("Read after an append elsewhere: %d events, %v", len(got), err)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestSeededV4 stores a seeded v4 session: seed_length holds the
// inherited count, isSeeded reads back true, and a full read checks the
// seed marker against it.
func TestSeededV4(t *testing.T) {
	s := newStore(t, Schema17, Options{})
	yes := true
	h, err := s.Create(ctx, seam.Header{Version: 4, ID: "fork", CreatedAt: 1785331618000, Cwd: "/w", ParentSession: "p", IsSeeded: &yes},
		seam.CreateOptions{InheritedEventCount: 2})
	if err != nil {
		t.Fatal(err)
	}
	batch := events(0, 2)
	batch = append(batch, seam.Event{Type: "session/end-seed", Seq: 2, Time: 1785331618600, Data: []byte(`{"inherited":true}`)})
	if err := h.Append(ctx, batch); err != nil {
		t.Fatal(err)
	}
	h.Close()
	r, err := s.Open(ctx, "fork", seam.Read)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if hdr := r.Header(); r.InheritedEventCount() != 2 || hdr.IsSeeded == nil || !*hdr.IsSeeded || hdr.ParentSession != "p" {
		t.Fatalf("header %s, inherited %d", hdr.AppendJSON(nil), r.InheritedEventCount())
	}
	if got, err := r.Read(ctx, 0, -1); err != nil || len(got) != 3 {
		t.Fatalf("Read: %d events, %v", len(got), err)
	}
	if _, err := s.db.Exec("UPDATE sessions SET seed_length = 1"); err != nil {
		t.Fatal(err)
	}
	r2, err := s.Open(ctx, "fork", seam.Read)
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	_, err = r2.Read(ctx, 0, -1)
	wantKind(t, err, seam.ErrCorrupt, "Read with seed_length disagreeing with the marker")
	_, err = s.Open(ctx, "fork", seam.Write)
	wantKind(t, err, seam.ErrCorrupt, "write Open with seed_length disagreeing with the marker")
}

// TestListOpenVisitsEachOnce lists a store of 300 sessions through one
// pinned read transaction: every session once, each handle readable.
func TestListOpenVisitsEachOnce(t *testing.T) {
	s := newStore(t, Schema14, Options{})
	sessions := map[string][]seam.Event{}
	for i := range 300 {
		sessions[fmt.Sprintf("s%03d", i)] = events(0, int64(i%7+1))
	}
	insertSessions(t, s, sessions)
	var mu sync.Mutex
	seen := map[string]int{}
	err := s.ListOpen(ctx, nil, func(e seam.Entry, h seam.Handle, err error) {
		if err != nil || e.Err != nil {
			t.Error(err, e.Err)
			return
		}
		got, err := h.Read(ctx, 0, -1)
		if err != nil || int64(len(got)) != e.Snapshot.EventCount {
			t.Errorf("%s: %d events, %v; listed %d", h.ID(), len(got), err, e.Snapshot.EventCount)
		}
		mu.Lock()
		seen[h.ID()]++
		mu.Unlock()
	})
	if err != nil || len(seen) != 300 {
		t.Fatalf("ListOpen: %d sessions, %v", len(seen), err)
	}
	for id, n := range seen {
		if n != 1 {
			t.Fatalf("%s visited %d times", id, n)
		}
	}
}

// insertSessions stores v4 sessions in one transaction.
func insertSessions(t *testing.T, s *Store, sessions map[string][]seam.Event) {
	t.Helper()
	tx, err := s.db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	for id, evs := range sessions {
		if _, err := tx.Exec(`INSERT INTO sessions (id, `+sessionCols+`) VALUES (?, 4, 1785331618000, '/w', NULL, NULL, NULL, 0, NULL, 'inc', 1)`, id); err != nil {
			t.Fatal(err)
		}
		rows, err := encodeRows(evs, s.schema, 4)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.insertRows(ctx, tx, id, rows); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}

// TestScanTransient checks that a transient scan serves the events a
// copying scan serves, forward and reverse, packed rows and compressed
// payloads included, each valid while the consumer holds it.
func TestScanTransient(t *testing.T) {
	for _, schema := range []int{Schema14, Schema17} {
		s := newStore(t, schema, Options{})
		h, err := s.Create(ctx, seam.Header{Version: 0, ID: "t", CreatedAt: 1785331618000, Cwd: "/w"}, seam.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		batch := append(chunkEvents(0, 2000, func(i int) string { return strings.Repeat(fmt.Sprint(i), i%50) }),
			seam.Event{Type: "session/title", Seq: 2000, Time: 1, Data: []byte(`{"title":"` + strings.Repeat("long ", 2000) + `"}`)})
		if err := h.Append(ctx, batch); err != nil {
			t.Fatal(err)
		}
		h.Close()
		r, err := s.Open(ctx, "t", seam.Read)
		if err != nil {
			t.Fatal(err)
		}
		for _, reverse := range []bool{false, true} {
			var want, got []string
			for e, err := range r.Scan(ctx, seam.ScanOptions{Reverse: reverse}) {
				if err != nil {
					t.Fatal(err)
				}
				want = append(want, string(e.AppendJSON(nil)))
			}
			for e, err := range r.Scan(ctx, seam.ScanOptions{Reverse: reverse, Transient: true}) {
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, string(e.AppendJSON(nil)))
			}
			if len(got) != 2001 || !slices.Equal(got, want) {
				t.Fatalf("schema %d, reverse %v: %d transient events differ from %d copied ones", schema, reverse, len(got), len(want))
			}
		}
		r.Close()
	}
}

// TestListOpenOrdered: ListOpenOrdered gives order every entry ListOpen
// visits, with its header, and visits them once each, in the order asked
// (here: ids descending), as ListOpen visits them.
func TestListOpenOrdered(t *testing.T) {
	s := newStore(t, Schema17, Options{})
	sessions := map[string][]seam.Event{}
	for i := range 50 {
		sessions[fmt.Sprintf("s%03d", i)] = events(0, int64(i%7+1))
	}
	insertSessions(t, s, sessions)
	want := map[string]seam.Entry{}
	if err := s.ListOpen(ctx, nil, func(e seam.Entry, _ seam.Handle, _ error) { want[e.Snapshot.Header.ID] = e }); err != nil {
		t.Fatal(err)
	}
	var heads []seam.Entry
	var got []string
	err := s.ListOpenOrdered(ctx, func(hs []seam.Entry) []int {
		heads = hs
		perm := make([]int, len(hs))
		for i := range perm {
			perm[i] = i
		}
		sort.Slice(perm, func(a, b int) bool { return hs[perm[a]].Snapshot.Header.ID > hs[perm[b]].Snapshot.Header.ID })
		return perm
	}, func(i int, e seam.Entry, h seam.Handle, err error) {
		if i != len(got) || err != nil || e.Err != nil {
			t.Fatalf("visit %d after %d visits: %v, %v", i, len(got), err, e.Err)
		}
		if w := want[e.Snapshot.Header.ID]; !reflect.DeepEqual(e, w) {
			t.Errorf("visited %+v, ListOpen visits %+v", e, w)
		}
		evs, err := h.Read(ctx, 0, -1)
		if err != nil || int64(len(evs)) != e.Snapshot.EventCount {
			t.Errorf("%s: %d events, %v; listed %d", h.ID(), len(evs), err, e.Snapshot.EventCount)
		}
		got = append(got, e.Snapshot.Header.ID)
	})
	if err != nil || len(heads) != len(want) || len(got) != len(want) || !sort.IsSorted(sort.Reverse(sort.StringSlice(got))) {
		t.Fatalf("ListOpenOrdered: %d heads, visited %v, %v", len(heads), got, err)
	}
	for _, hd := range heads {
		if w := want[hd.Snapshot.Header.ID]; !reflect.DeepEqual(hd.Snapshot.Header, w.Snapshot.Header) {
			t.Errorf("head %+v, ListOpen's %+v", hd.Snapshot.Header, w.Snapshot.Header)
		}
	}
	if err := s.ListOpenOrdered(ctx, func(hs []seam.Entry) []int { return []int{0} }, func(int, seam.Entry, seam.Handle, error) {
		t.Error("visited after a bad order")
	}); err == nil {
		t.Error("an order that is no permutation was taken")
	}
}

// TestSchema14HoldsV0Only checks that a schema-14 database, whose dsh
// (0.0.1) refuses any format but v0, takes no session of another format.
func TestSchema14HoldsV0Only(t *testing.T) {
	s := newStore(t, Schema14, Options{})
	if got := s.MaxFormatVersion(); got != 0 {
		t.Errorf("MaxFormatVersion of schema 14: %d, want 0", got)
	}
	_, err := s.Create(ctx, v4Header("v4"), seam.CreateOptions{})
	wantKind(t, err, seam.ErrInvalid, "create of a v4 session in schema 14")
	if s17 := newStore(t, Schema17, Options{}); s17.MaxFormatVersion() != seam.MaxVersion {
		t.Errorf("MaxFormatVersion of schema 17: %d, want %d", s17.MaxFormatVersion(), seam.MaxVersion)
	}
}
