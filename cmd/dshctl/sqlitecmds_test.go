package main

import (
	"bytes"
	"database/sql"
	"os"
	"strconv"

	"github.com/rogpeppe/go-internal/testscript"
	_ "modernc.org/sqlite"
)

// cmdSQLExec runs SQL statements on a database, the way a damaged or
// hostile store is made (foreign keys off, so rows may be orphaned):
//
//	sqlexec store.sqlite 'UPDATE sessions SET version = 99'
func cmdSQLExec(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: sqlexec DB SQL...")
	}
	db, err := sql.Open("sqlite", ts.MkAbs(args[0]))
	ts.Check(err)
	defer db.Close()
	db.SetMaxOpenConns(1)
	for _, q := range args[1:] {
		if _, err := db.Exec(q); err != nil {
			ts.Fatalf("%s: %v", q, err)
		}
	}
}

// cmdPatchBytes replaces the one occurrence of OLD in a file with NEW, of
// the same length: a byte changed in place, as a disk would change it.
//
//	patchbytes store.sqlite '"texts"' '"tXxts"'
func cmdPatchBytes(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 || len(args[1]) != len(args[2]) {
		ts.Fatalf("usage: patchbytes FILE OLD NEW (of the same length)")
	}
	name := ts.MkAbs(args[0])
	data, err := os.ReadFile(name)
	ts.Check(err)
	if n := bytes.Count(data, []byte(args[1])); n != 1 {
		ts.Fatalf("%s holds %q %d times, want once", args[0], args[1], n)
	}
	fi, err := os.Stat(name)
	ts.Check(err)
	ts.Check(os.WriteFile(name, bytes.Replace(data, []byte(args[1]), []byte(args[2]), 1), fi.Mode().Perm()))
}

// cmdSQLWAL runs SQL statements on a database in WAL mode and leaves their
// commits in its write-ahead log, not checkpointed into the database, as a
// writer killed before its checkpoint does (and without the -shm file a
// reboot clears):
//
//	sqlwal db.sqlite 'DELETE FROM persistence_state'
func cmdSQLWAL(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: sqlwal DB SQL...")
	}
	path := ts.MkAbs(args[0])
	db, err := sql.Open("sqlite", path+"?_pragma=journal_mode(WAL)&_pragma=wal_autocheckpoint(0)")
	ts.Check(err)
	defer db.Close()
	db.SetMaxOpenConns(1)
	for _, q := range args[1:] {
		if _, err := db.Exec(q); err != nil {
			ts.Fatalf("%s: %v", q, err)
		}
	}
	// The files as a kill would leave them, kept while the connection is
	// open; its close checkpoints and deletes the WAL.
	saved := map[string][]byte{}
	for _, p := range []string{path, path + "-wal"} {
		b, err := os.ReadFile(p)
		ts.Check(err)
		saved[p] = b
	}
	ts.Check(db.Close())
	for p, b := range saved {
		ts.Check(os.WriteFile(p, b, 0o600))
	}
	os.Remove(path + "-shm")
}

// cmdSetByte sets the byte at OFFSET of a file to VALUE (0 to 255):
//
//	setbyte db.sqlite 39 5
func cmdSetByte(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: setbyte FILE OFFSET VALUE")
	}
	off, err := strconv.ParseInt(args[1], 10, 64)
	ts.Check(err)
	v, err := strconv.ParseUint(args[2], 10, 8)
	ts.Check(err)
	f, err := os.OpenFile(ts.MkAbs(args[0]), os.O_WRONLY, 0)
	ts.Check(err)
	defer f.Close()
	_, err = f.WriteAt([]byte{byte(v)}, off)
	ts.Check(err)
}
