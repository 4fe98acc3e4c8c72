package sqlite

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/dshctl/dshctl/internal/seam"
	"github.com/dshctl/dshctl/internal/verify"
)

// openCopy opens the store at path with a backup folder of the test.
func openCopy(t *testing.T, path string) *Store {
	t.Helper()
	s, err := Open(path, Options{BackupDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// fileSum is the SHA-256 of a file and its WAL, to tell that nothing
// changed.
func fileSum(t *testing.T, path string) [32]byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	wal, _ := os.ReadFile(path + "-wal")
	return sha256.Sum256(append(data, wal...))
}

// codes lists the finding codes of a report, with their severities.
func codes(r *verify.SessionReport) string {
	var out []string
	for _, f := range r.Findings {
		out = append(out, f.Severity.String()+":"+f.Code)
	}
	return strings.Join(out, " ")
}

func finding(r *verify.SessionReport, code string) *verify.Finding {
	for i := range r.Findings {
		if r.Findings[i].Code == code {
			return &r.Findings[i]
		}
	}
	return nil
}

// TestVerifyFixture verifies the schema-14 store dsh wrote: every session
// is clean (an open tail turn is a note), every row was read, and the
// whole store reports no database finding.
func TestVerifyFixture(t *testing.T) {
	s := openCopy(t, fixtureCopy(t))
	var reports []*verify.SessionReport
	sum, err := verify.Run(ctx, s, nil, verify.Options{Report: func(r *verify.SessionReport) error {
		reports = append(reports, r)
		return nil
	}})
	if err != nil || sum.Sessions != 9 || sum.Clean != 9 {
		t.Fatalf("Verify: %+v %v", sum, err)
	}
	for _, r := range reports {
		snap, err := s.Stat(ctx, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		if r.State.Events != snap.EventCount || r.State.LastSeq != snap.EventCount-1 || r.State.Lines != snap.EventCount+1 {
			t.Errorf("%s: state %+v, want %d events", r.ID, r.State, snap.EventCount)
		}
		for _, f := range r.Findings {
			if f.Severity != verify.SeverityNote {
				t.Errorf("%s: %+v", r.ID, f)
			}
		}
	}
}

// rowOffset returns where the data of row seq of session id starts in the
// database file, or -1 when its bytes occur there more than once.
func rowOffset(t *testing.T, path, id string, seq int64) int {
	t.Helper()
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var data []byte
	err = s.db.QueryRow("SELECT CAST(data AS BLOB) FROM events WHERE session_id = ? AND seq = ?", id, seq).Scan(&data)
	s.Close()
	if err != nil {
		t.Fatal(err)
	}
	file, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(file, data); n != 1 {
		return -1
	}
	return bytes.Index(file, data)
}

// flip changes the byte at off of the file at path.
func flip(t *testing.T, path string, off int) {
	t.Helper()
	file, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	file[off] ^= 0x5a
	if err := os.WriteFile(path, file, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestVerifyFlippedByte flips the first byte of the data of each row of a
// fixture session (schema 14) in the database file: in every row, the
// final one included (a scalar row is never a torn tail), it is damaged
// committed data, an error naming the row's seq that a repair never
// touches; a damaged final row also fails Stat and a write open, so no
// append can remove it.
func TestVerifyFlippedByte(t *testing.T) {
	const id = "session-2c3d4e5f-6071-4829-9abc-def012345678"
	orig := fixtureCopy(t)
	snap, err := openCopy(t, orig).Stat(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	n := snap.EventCount
	data, err := os.ReadFile(orig)
	if err != nil {
		t.Fatal(err)
	}
	flipped := 0
	for seq := range n {
		path := fmt.Sprintf("%s.%d", orig, seq)
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		off := rowOffset(t, path, id, seq)
		if off < 0 {
			if seq == n-1 {
				t.Fatal("the final row's data occurs more than once in the file")
			}
			continue // a row whose data another session repeats (a seeded copy)
		}
		flip(t, path, off)
		flipped++
		before := fileSum(t, path)
		s := openCopy(t, path)
		r := verify.Check(ctx, s, id, verify.Options{Repair: true})
		f := finding(r, "row-decode")
		if r.Status != verify.StatusErrors || f == nil || f.Pos.Seq != seq || f.Severity != verify.SeverityError ||
			r.Repair == nil || r.Repair.Skipped == "" || finding(r, "torn-tail") != nil {
			t.Fatalf("seq %d: %s %s %+v", seq, r.Status, codes(r), r.Repair)
		}
		if seq == n-1 {
			_, err := s.Stat(ctx, id)
			wantKind(t, err, seam.ErrCorrupt, "Stat of a session whose final row is damaged")
			_, err = s.Open(ctx, id, seam.Write)
			wantKind(t, err, seam.ErrCorrupt, "write Open of a session whose final row is damaged")
		}
		s.Close()
		if fileSum(t, path) != before {
			t.Fatalf("seq %d: the database changed", seq)
		}
	}
	if flipped < int(n)/2 {
		t.Fatalf("only %d of %d rows could be found in the file", flipped, n)
	}
}

// packedSession stores session "p" (v0) in a new schema-17 database: a
// turn, then a run of chunks that becomes its final row, packed; with
// blob, its payload is a zstd frame, which dshctl does not write but
// readers take.
func packedSession(t *testing.T, blob bool) *Store {
	t.Helper()
	s := newStore(t, Schema17, Options{})
	h, err := s.Create(ctx, seam.Header{Version: 0, ID: "p", CreatedAt: 1785331618000, Cwd: "/w"}, seam.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	text := func(i int) string { return strings.Repeat(fmt.Sprintf("chunk %d of a long reply. ", i), 10) }
	batch := append([]seam.Event{{Type: "turn/start", Seq: 0, Time: 1785331619000, Data: []byte(`{"turn":1}`)}},
		chunkEvents(1, 20, text)...)
	if err := h.Append(ctx, batch); err != nil {
		t.Fatal(err)
	}
	var packed bool
	var payload []byte
	if err := s.db.QueryRow("SELECT ignorable = 0, CAST(data AS BLOB) FROM events WHERE session_id = 'p' ORDER BY seq DESC LIMIT 1").Scan(&packed, &payload); err != nil || !packed {
		t.Fatalf("final row packed %v: %v", packed, err)
	}
	if blob {
		if _, err := s.db.Exec("UPDATE events SET data = ? WHERE session_id = 'p' AND seq = 1", compress(payload)); err != nil {
			t.Fatal(err)
		}
	}
	r, err := s.Open(ctx, "p", seam.Read)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if got, err := r.Read(ctx, 0, -1); err != nil || len(got) != len(batch) || !bytes.Equal(got[20].Data, batch[20].Data) {
		t.Fatalf("Read: %d events, %v", len(got), err)
	}
	return s
}

// TestVerifyTornPackedRow damages the final packed row of a schema-17
// session (its JSON, or a byte of its zstd payload): a torn tail, a
// warning (an error in strict mode); a dry run changes nothing; a repair
// saves the row, removes it, bumps the revision and leaves a clean log
// that keeps every other event; a second repair does nothing.
func TestVerifyTornPackedRow(t *testing.T) {
	for _, big := range []bool{false, true} {
		t.Run(fmt.Sprintf("compressed=%v", big), func(t *testing.T) {
			s := packedSession(t, big)
			var damaged any = `{"turn":1,"step":1,"index":0,"dt":[1],"textz":["a","b"]}`
			if big {
				// A byte in the middle of the frame: its checksum fails.
				var blob []byte
				if err := s.db.QueryRow("SELECT data FROM events WHERE session_id = 'p' AND seq = 1").Scan(&blob); err != nil {
					t.Fatal(err)
				}
				blob[len(blob)/2] ^= 0x5a
				damaged = blob
			}
			if _, err := s.db.Exec("UPDATE events SET data = ? WHERE session_id = 'p' AND seq = 1", damaged); err != nil {
				t.Fatal(err)
			}
			if _, err := s.db.Exec("PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
				t.Fatal(err)
			}
			r := verify.Check(ctx, s, "p", verify.Options{})
			if f := finding(r, "torn-tail"); f == nil || f.Severity != verify.SeverityWarning || f.Pos.Seq != 1 ||
				!strings.HasPrefix(f.Message, "torn final row: ") || r.Status != verify.StatusWarnings {
				t.Fatalf("check: %s %+v", codes(r), r.Findings)
			}
			if r := verify.Check(ctx, s, "p", verify.Options{Mode: verify.ModeStrict}); r.Status != verify.StatusErrors {
				t.Fatalf("strict: %s", r.Status)
			}
			before := fileSum(t, s.Path())
			r = verify.Check(ctx, s, "p", verify.Options{Repair: true, DryRun: true})
			if r.Repair == nil || !r.Repair.DryRun || len(r.Repair.Removed) != 1 || fileSum(t, s.Path()) != before {
				t.Fatalf("dry run: %+v", r.Repair)
			}
			rev, _ := s.Stat(ctx, "p")
			r = verify.Check(ctx, s, "p", verify.Options{Repair: true})
			if r.Status != verify.StatusClean || r.Repair == nil || len(r.Repair.Removed) != 1 {
				t.Fatalf("repair: %s %s %+v", r.Status, codes(r), r.Repair)
			}
			rm := r.Repair.Removed[0]
			data, err := os.ReadFile(rm.Backup)
			if err != nil {
				t.Fatal(err)
			}
			var b backedUpRow
			if err := json.Unmarshal(data, &b); err != nil || b.Seq != 1 || b.Type != seam.TextChunks || b.Ignorable == nil || *b.Ignorable != 0 ||
				(b.DataBlob != nil) != big {
				t.Fatalf("backup %s: %v", data, err)
			}
			snap, err := s.Stat(ctx, "p")
			if err != nil || snap.EventCount != 1 || snap.Revision == rev.Revision || snap.Location.TornBytes != 0 {
				t.Fatalf("after: %+v %v", snap, err)
			}
			if r := verify.Check(ctx, s, "p", verify.Options{Repair: true}); r.Repair != nil || r.Status != verify.StatusClean {
				t.Fatalf("second repair: %+v", r.Repair)
			}
		})
	}
}

// TestVerifySeqGap deletes rows: a gap is damaged committed data, even in
// the last turn, reported in the words of the JSONL check.
func TestVerifySeqGap(t *testing.T) {
	const id = "session-4f1c2a9e-8b3d-4e6f-a1c2-7d9e0b1f2a3c"
	s := openCopy(t, fixtureCopy(t))
	if _, err := s.db.Exec("DELETE FROM events WHERE session_id = ? AND seq IN (42, 110)", id); err != nil {
		t.Fatal(err)
	}
	r := verify.Check(ctx, s, id, verify.Options{Repair: true})
	var gaps []string
	for _, f := range r.Findings {
		if f.Code == "seq-gap" && f.Severity == verify.SeverityError {
			gaps = append(gaps, fmt.Sprintf("%d:%s", f.Pos.Seq, f.Message))
		}
	}
	want := "43:seq gap: 41 → 43 (seq 42 is missing) 111:seq gap: 109 → 111 (seq 110 is missing)"
	if strings.Join(gaps, " ") != want || r.Repair == nil || r.Repair.Skipped == "" {
		t.Fatalf("gaps %q, want %q; %s %+v", gaps, want, codes(r), r.Repair)
	}
}

// TestVerifyDatabaseFindings damages the database as a whole: a whole-
// store verify reports it once, as the database's own report; a session
// named alone carries the findings; the session is not repaired.
func TestVerifyDatabaseFindings(t *testing.T) {
	path := fixtureCopy(t)
	s := openCopy(t, path)
	for _, q := range []string{
		"PRAGMA foreign_keys = OFF",
		"INSERT INTO events (session_id, seq, type, time, data) VALUES ('ghost', 0, 'turn/start', 1, '{}')",
		"INSERT INTO persistence_state (singleton, store_id) VALUES (1, 'x') ON CONFLICT DO NOTHING",
		"DELETE FROM persistence_state",
	} {
		conn, err := s.db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := conn.ExecContext(ctx, q); err != nil {
			t.Fatal(q, err)
		}
		conn.Close()
	}
	var reports []*verify.SessionReport
	sum, err := verify.Run(ctx, s, nil, verify.Options{Mode: verify.ModeStrict, Report: func(r *verify.SessionReport) error {
		reports = append(reports, r)
		return nil
	}})
	if err != nil || sum.Sessions != 10 || sum.Errors != 1 || !reports[0].Stray || reports[0].Location.Path != path {
		t.Fatalf("Verify: %+v %v", sum, err)
	}
	if got := codes(reports[0]); got != "error:persistence-state error:orphan-rows" {
		t.Fatalf("database report: %s", got)
	}
	if f := finding(reports[0], "orphan-rows"); !strings.Contains(f.Message, `1 events rows of session "ghost"`) {
		t.Fatal(f.Message)
	}
	// Named alone, on a fresh store: the session carries them.
	s2 := openCopy(t, path)
	r := verify.Check(ctx, s2, "session-1b2c3d4e-5f60-4718-89ab-cdef01234567", verify.Options{})
	if got := codes(r); got != "warning:persistence-state warning:orphan-rows" {
		t.Fatalf("named session: %s", got)
	}
}

// TestVerifyIntegrity damages the database below what reads look at: the
// page type of the events index's root page, the freelist count of the
// file header. The integrity check reports it, one line per finding, in
// the database's report; nothing is repaired or changed.
func TestVerifyIntegrity(t *testing.T) {
	for _, c := range []struct {
		name   string
		damage func(file []byte, pageSize, indexRoot int64)
	}{
		{"index-page-type", func(file []byte, pageSize, root int64) { file[(root-1)*pageSize] = 0x0d }},
		{"freelist-count", func(file []byte, _, _ int64) { file[39] = 5 }},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := fixtureCopy(t)
			s := openCopy(t, path)
			var pageSize, root int64
			if err := s.db.QueryRow("PRAGMA page_size").Scan(&pageSize); err != nil {
				t.Fatal(err)
			}
			if err := s.db.QueryRow("SELECT rootpage FROM sqlite_schema WHERE name = 'sqlite_autoindex_events_1'").Scan(&root); err != nil {
				t.Fatal(err)
			}
			s.Close()
			file, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			c.damage(file, pageSize, root)
			if err := os.WriteFile(path, file, 0o600); err != nil {
				t.Fatal(err)
			}
			before := fileSum(t, path)
			s = openCopy(t, path)
			var reports []*verify.SessionReport
			sum, err := verify.Run(ctx, s, nil, verify.Options{Repair: true, Report: func(r *verify.SessionReport) error {
				reports = append(reports, r)
				return nil
			}})
			if err != nil || sum.Errors == 0 || !reports[0].Stray || finding(reports[0], "integrity") == nil {
				t.Fatalf("Verify: %+v %v %v", sum, err, reports[0])
			}
			for _, r := range reports {
				for _, f := range r.Findings {
					if strings.Contains(f.Message, "\n") || strings.Contains(f.Message, "***") {
						t.Errorf("%s: finding %q is not one line", r.ID, f.Message)
					}
				}
				if r.Repair != nil && r.Repair.Skipped == "" {
					t.Fatalf("%s repaired: %+v", r.ID, r.Repair)
				}
			}
			s.Close()
			if fileSum(t, path) != before {
				t.Fatal("the database changed")
			}
		})
	}
}

// TestVerifyRepairHeld checks that a session whose write lock another
// owner holds is not repaired: the report fails, saying it is in use.
func TestVerifyRepairHeld(t *testing.T) {
	s := newStore(t, Schema17, Options{})
	stored(t, s, "a", 3)
	insertRaw(t, s, "a", []row{{seq: 3, time: 1, typ: seam.TextChunks, data: `{"turn":`, ignorable: 0}})
	other, err := Open(s.Path(), Options{BackupDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	w, err := other.Open(ctx, "a", seam.Write)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	r := verify.Check(ctx, s, "a", verify.Options{Repair: true})
	if r.Status != verify.StatusFailed || !errors.Is(r.Err, seam.ErrAlreadyOwned) || finding(r, "writer-active") == nil {
		t.Fatalf("%s %v %s", r.Status, r.Err, codes(r))
	}
}

// TestVerifyHeaders checks sessions rows that are not valid headers: a
// version of a newer dsh stops the check; an invalid row is reported and
// the rows are still checked.
func TestVerifyHeaders(t *testing.T) {
	s := newStore(t, Schema14, Options{})
	stored(t, s, "new", 2)
	stored(t, s, "bad", 2)
	if _, err := s.db.Exec("UPDATE sessions SET version = 99 WHERE id = 'new'"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.Exec("UPDATE sessions SET cwd = '' WHERE id = 'bad'"); err != nil {
		t.Fatal(err)
	}
	if r := verify.Check(ctx, s, "new", verify.Options{}); codes(r) != "error:header-unsupported" {
		t.Fatalf("newer: %s", codes(r))
	}
	r := verify.Check(ctx, s, "bad", verify.Options{})
	if f := finding(r, "header-invalid"); f == nil || f.Severity != verify.SeverityError || r.State.Events != 2 {
		t.Fatalf("invalid: %s %+v", codes(r), r.State)
	}
}

// TestVerifyCancelled checks that a cancelled check stops with the
// context's error.
func TestVerifyCancelled(t *testing.T) {
	s := openCopy(t, fixtureCopy(t))
	c, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := s.VerifyLog(c, "session-4f1c2a9e-8b3d-4e6f-a1c2-7d9e0b1f2a3c", verify.NewLogCheck()); !errors.Is(err, context.Canceled) {
		t.Fatalf("VerifyLog: %v", err)
	}
	if _, err := s.VerifyLog(ctx, "absent", verify.NewLogCheck()); !errors.Is(err, seam.ErrNotFound) {
		t.Fatalf("absent: %v", err)
	}
}

// TestReadsLeaveJournalMode checks that a database in another journal
// mode than WAL (dsh's stores are WAL) is not changed by reads or verify,
// and becomes WAL at the first write.
func TestReadsLeaveJournalMode(t *testing.T) {
	s := newStore(t, Schema14, Options{})
	stored(t, s, "a", 2)
	path := s.Path()
	if _, err := s.db.Exec("PRAGMA journal_mode = DELETE"); err != nil {
		t.Fatal(err)
	}
	s.Close()
	before := fileSum(t, path)
	r := openCopy(t, path)
	if _, err := r.Stat(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if rep := verify.Check(ctx, r, "a", verify.Options{}); rep.Status == verify.StatusFailed {
		t.Fatal(rep.Err)
	}
	r.Close()
	if fileSum(t, path) != before {
		t.Fatal("reads changed the database")
	}
	w := openCopy(t, path)
	h, err := w.Open(ctx, "a", seam.Write)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if err := h.Append(ctx, events(2, 1)); err != nil {
		t.Fatal(err)
	}
	var mode string
	if err := w.db.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
		t.Fatalf("journal mode %q after a write: %v", mode, err)
	}
}
