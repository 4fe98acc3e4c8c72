package main

import (
	"bytes"
	"database/sql"
	"os"

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
