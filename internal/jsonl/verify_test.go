package jsonl

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/dshctl/dshctl/internal/fixture"
	"github.com/dshctl/dshctl/internal/jsonl/hostile"
	"github.com/dshctl/dshctl/internal/jsonl/zstdframe"
	"github.com/dshctl/dshctl/internal/seam"
	"github.com/dshctl/dshctl/internal/verify"
)

// mainID is the fixture session with packed rows, a 300 KB tool result
// in a multi-block frame and three turns.
const mainID = "session-4f1c2a9e-8b3d-4e6f-a1c2-7d9e0b1f2a3c"

// verifyLog runs verify's rules over session id of s.
func verifyLog(tb testing.TB, s *Store, id string) (verify.CheckResult, seam.LogSummary) {
	tb.Helper()
	c := verify.NewLogCheck()
	sum, err := s.VerifyLog(context.Background(), id, c)
	if err != nil {
		tb.Fatalf("VerifyLog(%s): %v", id, err)
	}
	return c.Result(), sum
}

// byClass returns the findings of res of class c.
func byClass(res verify.CheckResult, c seam.FindingClass) []seam.Finding {
	var out []seam.Finding
	for _, f := range res.Findings() {
		if f.Class == c {
			out = append(out, f)
		}
	}
	return out
}

func codes(fs []seam.Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Code)
	}
	return out
}

// readByDsh reports whether dsh's reader read the session of c, and how
// many events it returned.
func readByDsh(c *damagedCase) (int64, bool) {
	if s := c.DshRead.Sessions; len(s) == 1 && s[0].Error == nil {
		return s[0].EventCount, true
	}
	return 0, false
}

// TestVerifyDamagedFixtures gives every damaged store dsh was tried on the
// verdict dsh's reader gave it: what dsh read is not an error (a torn
// final frame, which dsh 0.1.0 salvaged and the current rule discards, is
// a warning whose salvage holds exactly the events dsh read from it), and
// what dsh refused is an error of the right kind.
func TestVerifyDamagedFixtures(t *testing.T) {
	dir, cases := damagedCases(t)
	// The finding each case must give: the check that catches it, and
	// where (the byte offset, -1 when not the point).
	want := map[string]struct {
		code string
		at   int64
	}{
		"zstd-torn-final-frame-checksum":            {"torn-tail", 107548},
		"zstd-torn-final-frame-header":              {"torn-tail", 107548},
		"none-torn-final-line":                      {"torn-tail", 320101},
		"none-corrupt-line-before-turn-end":         {"record-json", 337},
		"none-corrupt-line-after-last-turn-end":     {"uncommitted-tail", 5246},
		"zstd-bad-checksum-middle-frame":            {"frame-checksum", 796},
		"zstd-header-frame-not-single-line":         {"header-frame", 0},
		"zstd-skippable-frame":                      {"skippable-frame", 796},
		"variant-zstd-cli-frames-with-content-size": {},
		"zstd-empty-file":                           {"empty-log", 0},
		"none-future-version-header":                {"header-unsupported", 0},
		"none-unknown-event-type":                   {"unknown-type", 2443},
		"mixed-encoding":                            {"encoding-mismatch", -1},
	}
	if len(want) != len(cases) {
		t.Fatalf("cases.json has %d cases, the test knows %d", len(cases), len(want))
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			w, ok := want[name]
			if !ok {
				t.Fatalf("no verdict for case %s", name)
			}
			s, _ := openStore(t, filepath.Join(dir, name), Options{})
			r := verify.Check(context.Background(), s, c.SessionID, verify.Options{})
			if r.Err != nil {
				t.Fatal(r.Err)
			}
			var got *verify.Finding
			for i := range r.Findings {
				if r.Findings[i].Code == w.code {
					got = &r.Findings[i]
				}
			}
			if w.code != "" && got == nil {
				t.Fatalf("no %s finding: %+v", w.code, r.Findings)
			}
			if got != nil && w.at >= 0 && got.Pos.Offset != w.at {
				t.Errorf("%s at byte %d, want %d", w.code, got.Pos.Offset, w.at)
			}
			n, read := readByDsh(&c)
			if !read {
				if r.Status != verify.StatusErrors || got.Severity != verify.SeverityError {
					t.Fatalf("dsh refused the log; verify says %s: %+v", r.Status, r.Findings)
				}
				return
			}
			if r.Status == verify.StatusErrors {
				t.Fatalf("dsh read %d events; verify says errors: %+v", n, r.Findings)
			}
			events := r.State.Events
			if strings.HasPrefix(name, "zstd-torn-final-frame") {
				// dsh 0.1.0 salvaged the torn frame; verify counts what a
				// salvage re-appends.
				res, _ := verifyLog(t, s, c.SessionID)
				events += res.Torn.Salvage
			}
			if events != n {
				t.Errorf("%d committed events (with what a salvage re-appends), dsh read %d", events, n)
			}
		})
	}
}

// TestVerifyCleanFixtures checks that every session dsh wrote verifies
// clean (notes only) with the event count dsh's reader gave, and that the
// v4 log of plugin events is an error: dsh refuses it.
func TestVerifyCleanFixtures(t *testing.T) {
	ctx := context.Background()
	for _, store := range []string{"dsh-0.1.0/jsonl-zstd", "dsh-0.1.0/jsonl-none", "dsh-v2-v4"} {
		t.Run(store, func(t *testing.T) {
			s, _ := openStore(t, filepath.Join(fixturesDir(t), store), Options{})
			counts := map[string]int64{}
			if name := strings.TrimPrefix(store, "dsh-0.1.0/"); name != store {
				for _, m := range loadManifest(t, name) {
					counts[m.ID] = m.EventCount
				}
			}
			seen := 0
			sum, err := verify.Run(ctx, s, nil, verify.Options{Mode: verify.ModeStrict, Report: func(r *verify.SessionReport) error {
				seen++
				if r.ID == "legacy-sdk-history" {
					if r.Status != verify.StatusErrors || len(r.Findings) != 3 || r.Findings[0].Code != "unknown-type" {
						t.Errorf("%s: %s %+v, want 3 unknown-type errors", r.ID, r.Status, r.Findings)
					}
					return nil
				}
				if r.Status != verify.StatusClean || r.Err != nil {
					t.Errorf("%s: %s %v %+v", r.ID, r.Status, r.Err, r.Findings)
				}
				if n, ok := counts[r.ID]; ok && r.State.Events != n {
					t.Errorf("%s: %d events, dsh read %d", r.ID, r.State.Events, n)
				}
				return nil
			}})
			if err != nil {
				t.Fatal(err)
			}
			if seen == 0 || sum.Sessions != seen || len(counts) > 0 && seen != len(counts) {
				t.Fatalf("%d reports, summary %+v, manifest %d sessions", seen, sum, len(counts))
			}
		})
	}
}

// compactID is the fixture session the exhaustive tests cut and flip: 8
// frames (61 events, a compaction with non-monotonic sourceEventSeqs), small
// enough to check thousands of times.
const compactID = "session-2c3d4e5f-6071-4829-9abc-def012345678"

// fixtureLog returns a dsh-0.1.0 session's log in enc, and where its frames
// (zstd) or lines (plain) end.
func fixtureLog(t *testing.T, id string, enc Encoding) ([]byte, []int64) {
	t.Helper()
	store := map[Encoding]string{Zstd: "jsonl-zstd", None: "jsonl-none"}[enc]
	path := filepath.Join(fixturesDir(t), "dsh-0.1.0", store, "--home-dev-projects-demo-app--", id, LogName(0, enc))
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var ends []int64
	if enc == Zstd {
		frames, torn, err := zstdframe.Walk(bytes.NewReader(data), int64(len(data)))
		if err != nil || torn.Size != 0 {
			t.Fatal(err, torn)
		}
		for _, f := range frames {
			ends = append(ends, f.End())
		}
	} else {
		for i, c := range data {
			if c == '\n' {
				ends = append(ends, int64(i+1))
			}
		}
	}
	return data, ends
}

// fixtureEvents returns what dsh's reader returned for a session.
func fixtureEvents(t *testing.T, id string, enc Encoding) []any {
	store := map[Encoding]string{Zstd: "jsonl-zstd", None: "jsonl-none"}[enc]
	return readJSONL(t, filepath.Join(fixturesDir(t), "dsh-0.1.0", "expected", store, id+".events.jsonl"))
}

// logStore is a root holding one session of the demo project, whose log a
// test rewrites case after case.
type logStore struct {
	s       *Store
	id      string
	path    string
	backups string
}

func newLogStore(t *testing.T, id string, enc Encoding) *logStore {
	t.Helper()
	root := filepath.Join(t.TempDir(), "root")
	dir := filepath.Join(root, "--home-dev-projects-demo-app--", id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	ls := &logStore{id: id, path: filepath.Join(dir, LogName(0, enc)), backups: filepath.Join(t.TempDir(), "backups")}
	if err := os.WriteFile(ls.path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var tfs *testFS
	ls.s, tfs = openStore(t, root, Options{BackupDir: ls.backups})
	tfs.noSync = true
	return ls
}

// put replaces the log with data.
func (ls *logStore) put(t *testing.T, data []byte) {
	t.Helper()
	if err := os.WriteFile(ls.path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestVerifyTruncatedTail cuts a fixture log at every byte offset of its
// last two frames (zstd) or lines (plain): each cut is a torn tail (never
// clean, never damaged committed data) unless it falls on a boundary, and
// a repair then leaves a log that verifies clean, holds every event of the
// complete frames or lines, and has the removed bytes in its backup.
func TestVerifyTruncatedTail(t *testing.T) {
	ctx := context.Background()
	for _, enc := range []Encoding{Zstd, None} {
		t.Run(string(enc), func(t *testing.T) {
			t.Parallel()
			data, ends := fixtureLog(t, compactID, enc)
			want := fixtureEvents(t, compactID, enc)
			ls := newLogStore(t, compactID, enc)
			events := map[int64]int{} // boundary → events before it
			for _, b := range ends[len(ends)-3:] {
				ls.put(t, data[:b])
				got, err := scanAll(t, ls.s, compactID)
				if err != nil {
					t.Fatal(err)
				}
				events[b] = len(got)
			}
			for cut := ends[len(ends)-3]; cut < int64(len(data)); cut++ {
				b := ends[0]
				for _, e := range ends {
					if e <= cut {
						b = e
					}
				}
				ls.put(t, data[:cut])
				checkCut(t, ctx, ls, data, cut, b, events[b], want)
			}
		})
	}
}

// checkCut verifies and repairs the log data[:cut], whose last boundary is
// b, holding n events.
func checkCut(t *testing.T, ctx context.Context, ls *logStore, data []byte, cut, b int64, n int, want []any) {
	t.Helper()
	res, _ := verifyLog(t, ls.s, ls.id)
	if d := byClass(res, seam.ClassDamage); len(d) > 0 {
		t.Fatalf("cut at %d: damage reported: %+v", cut, d)
	}
	tail := byClass(res, seam.ClassTail)
	if b == cut {
		if len(tail) > 0 {
			t.Fatalf("cut at %d: a cut on a boundary is a shorter log, not a tail: %+v", cut, tail)
		}
		return
	}
	if len(tail) != 1 || tail[0].Code != "torn-tail" || tail[0].Pos.Offset != b {
		t.Fatalf("cut at %d: findings %+v, want one torn tail at byte %d", cut, res.Findings(), b)
	}
	r := verify.Check(ctx, ls.s, ls.id, verify.Options{Repair: true})
	if r.Err != nil || r.Status != verify.StatusClean || r.Repair == nil || len(r.Repair.Removed) != 1 {
		t.Fatalf("cut at %d: repair: %s %v %+v %+v", cut, r.Status, r.Err, r.Repair, r.Findings)
	}
	rm := r.Repair.Removed[0]
	kept, _ := os.ReadFile(rm.Backup)
	if rm.Offset != b || rm.Bytes != cut-b || !bytes.Equal(kept, data[b:cut]) || !strings.HasPrefix(rm.Backup, ls.backups) {
		t.Fatalf("cut at %d: removed %+v; backup holds %d bytes", cut, rm, len(kept))
	}
	if now, _ := os.ReadFile(ls.path); !bytes.Equal(now, data[:b]) {
		t.Fatalf("cut at %d: the log is %d bytes, not the first %d of the original", cut, len(now), b)
	}
	res, _ = verifyLog(t, ls.s, ls.id)
	if bad := slices.DeleteFunc(res.Findings(), func(f seam.Finding) bool { return f.Class == seam.ClassNote }); len(bad) > 0 {
		t.Fatalf("cut at %d: after the repair: %+v", cut, bad)
	}
	got, err := scanAll(t, ls.s, ls.id)
	if err != nil || len(got) != n {
		t.Fatalf("cut at %d: after the repair: %d events, %v; want %d", cut, len(got), err, n)
	}
	sameEvents(t, got, want[:n])
}

// TestVerifyFlippedByte flips every byte of every middle frame, and bytes
// of every middle line (the first, which breaks its JSON, and one of its
// seq): each is damaged committed data, located in its frame or line, and
// a repair leaves the log as it is.
func TestVerifyFlippedByte(t *testing.T) {
	ctx := context.Background()
	t.Run("zstd", func(t *testing.T) {
		data, ends := fixtureLog(t, compactID, Zstd)
		for i := 1; i < len(ends)-1; i++ {
			t.Run(fmt.Sprint("frame", i), func(t *testing.T) {
				t.Parallel()
				ls := newLogStore(t, compactID, Zstd)
				for off := ends[i-1]; off < ends[i]; off++ {
					flipped := slices.Clone(data)
					flipped[off] ^= 0xFF
					checkFlip(t, ctx, ls, flipped, ends[i-1], ends[i], fmt.Sprintf("frame %d byte %d", i, off))
				}
			})
		}
	})
	t.Run("plain", func(t *testing.T) {
		t.Parallel()
		data, ends := fixtureLog(t, compactID, None)
		ls := newLogStore(t, compactID, None)
		for i := 1; i < len(ends)-1; i++ {
			start, end := ends[i-1], ends[i]
			seq := int64(bytes.Index(data[start:end], []byte(`"seq":`)))
			for _, off := range []int64{start, start + seq + 6} {
				flipped := slices.Clone(data)
				flipped[off] ^= 0x01 // '{' → 'z', a digit → another
				checkFlip(t, ctx, ls, flipped, start, end, fmt.Sprintf("line %d byte %d", i+1, off))
			}
		}
	})
}

// checkFlip verifies a log with a flipped byte in [start, end).
func checkFlip(t *testing.T, ctx context.Context, ls *logStore, data []byte, start, end int64, what string) {
	t.Helper()
	ls.put(t, data)
	r := verify.Check(ctx, ls.s, ls.id, verify.Options{Repair: true})
	var in bool
	for _, f := range r.Findings {
		if f.Class == seam.ClassTail {
			t.Fatalf("%s: reported as a tail: %+v", what, f)
		}
		if f.Severity == verify.SeverityError && f.Pos.Offset >= start && f.Pos.Offset < end {
			in = true
		}
	}
	if !in || r.Status != verify.StatusErrors {
		t.Fatalf("%s: no error in [%d, %d): %s %+v", what, start, end, r.Status, r.Findings)
	}
	if r.Repair == nil || r.Repair.Skipped == "" || len(r.Repair.Removed) > 0 {
		t.Fatalf("%s: repair %+v", what, r.Repair)
	}
	if now, _ := os.ReadFile(ls.path); !bytes.Equal(now, data) {
		t.Fatalf("%s: the log was changed", what)
	}
}

// lines returns the lines of data, each with its '\n'.
func lines(data []byte) [][]byte {
	var out [][]byte
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		out = append(out, data[:i+1])
		data = data[i+1:]
	}
	return out
}

// TestVerifyUncommittedInFrame puts an invalid record after a committed one
// in the last frame of a zstd log: an uncommitted tail that starts inside
// the frame. The repair writes the committed record back as a frame of its
// own and keeps every removed byte.
func TestVerifyUncommittedInFrame(t *testing.T) {
	ctx := context.Background()
	data, ends := fixtureLog(t, compactID, Zstd)
	last := ends[len(ends)-2]
	d, err := zstdframe.NewDecoder()
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	f, _ := zstdframe.ParseFrame(bytes.NewReader(data), last, int64(len(data)))
	content, err := d.DecodeAll(bytes.NewReader(data), f, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	kept := lines(content)
	kept = kept[:len(kept)-1] // all but its turn/end
	log := zstdframe.AppendFrame(slices.Clone(data[:last]), append(bytes.Join(kept, nil), "{not json\n"...))
	ls := newLogStore(t, compactID, Zstd)
	ls.put(t, log)
	res, _ := verifyLog(t, ls.s, compactID)
	u := res.Uncommitted
	if u == nil || u.Offset != last || u.Rewrite != len(kept) || u.Records != 1 || len(byClass(res, seam.ClassDamage)) > 0 {
		t.Fatalf("uncommitted %+v, findings %+v", u, res.Findings())
	}
	dry := verify.Check(ctx, ls.s, compactID, verify.Options{Repair: true, DryRun: true})
	if rp := dry.Repair; rp == nil || !rp.DryRun || rp.Rewrite != len(kept) || len(rp.Removed) != 1 || rp.Removed[0].Offset != last ||
		rp.Removed[0].Bytes != int64(len(log))-last || rp.Removed[0].Kind != seam.RepairUncommitted {
		t.Fatalf("dry run: %+v", dry.Repair)
	}
	if now, _ := os.ReadFile(ls.path); !bytes.Equal(now, log) {
		t.Fatal("a dry run changed the log")
	}
	r := verify.Check(ctx, ls.s, compactID, verify.Options{Repair: true})
	if r.Status != verify.StatusClean || r.Repair == nil || len(r.Repair.Removed) != 1 || r.Repair.Removed[0].Rewritten == 0 {
		t.Fatalf("repair: %s %v %+v", r.Status, r.Err, r.Repair)
	}
	backup, _ := os.ReadFile(r.Repair.Removed[0].Backup)
	if !bytes.Equal(backup, log[last:]) {
		t.Fatalf("the backup holds %d bytes, want the %d removed", len(backup), len(log)-int(last))
	}
	if a := r.Repair.After; a == nil || a.LastSeq != 59 || a.Events != 60 {
		t.Fatalf("after: %+v", a)
	}
	got, err := scanAll(t, ls.s, compactID)
	if err != nil || len(got) != 60 {
		t.Fatalf("%d events, %v", len(got), err)
	}
	sameEvents(t, got, fixtureEvents(t, compactID, Zstd)[:60])
	// Idempotent: nothing left to do.
	again := verify.Check(ctx, ls.s, compactID, verify.Options{Repair: true})
	if again.Repair != nil || again.Status != verify.StatusClean {
		t.Fatalf("second repair: %s %+v", again.Status, again.Repair)
	}
}

// TestVerifySalvage repairs the fixture whose final frame lost two bytes
// of its checksum: the salvage re-appends its 10 records (15 events), as
// dsh 0.1.0 did, and the log then holds the 113 events dsh read.
func TestVerifySalvage(t *testing.T) {
	ctx := context.Background()
	src := filepath.Join(fixturesDir(t), "dsh-0.1.0", "damaged", "zstd-torn-final-frame-checksum", "--home-dev-projects-demo-app--", mainID, "session.jsonl.zstd")
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	ls := newLogStore(t, mainID, Zstd)
	ls.put(t, data)
	r := verify.Check(ctx, ls.s, mainID, verify.Options{Repair: true, Salvage: true})
	if r.Status != verify.StatusClean || r.Repair == nil || r.Repair.Salvaged != 15 || r.Repair.SalvagedFrom != 98 {
		t.Fatalf("repair: %s %v %+v", r.Status, r.Err, r.Repair)
	}
	got, err := scanAll(t, ls.s, mainID)
	if err != nil {
		t.Fatal(err)
	}
	sameEvents(t, got, fixtureEvents(t, mainID, Zstd))
	kept, _ := os.ReadFile(r.Repair.Removed[0].Backup)
	if !bytes.Equal(kept, data[107548:]) {
		t.Fatalf("backup of %d bytes", len(kept))
	}
}

// TestVerifyHostile feeds verify logs and folders it must report, not
// trip on: every finding names its place and nothing panics.
func TestVerifyHostile(t *testing.T) {
	ctx := context.Background()
	plain, _ := fixtureLog(t, compactID, None)
	all := lines(plain)
	zdata, zends := fixtureLog(t, compactID, Zstd)
	cases := []struct {
		name string
		enc  Encoding
		log  []byte
		want string // a finding's code
	}{
		{"garbage", None, []byte("\x00\xff garbage\nmore\n"), "header-invalid"},
		{"no newline at all", None, bytes.Repeat([]byte("x"), 1000), "empty-log"},
		{"zstd garbage", Zstd, []byte("not a zstd frame at all"), "empty-log"},
		{"zstd torn header frame", Zstd, zdata[:20], "empty-log"},
		{"seq gap", None, slices.Concat(bytes.Join(all[:10], nil), bytes.Join(all[11:], nil)), "seq-gap"},
		{"seq overlap", None, slices.Concat(bytes.Join(all[:11], nil), bytes.Join(all[10:], nil)), "seq-overlap"},
		{"bad magic mid-log", Zstd, slices.Concat(zdata[:zends[2]], []byte("JUNKJUNK"), zdata[zends[2]:]), "frame-structure"},
		{"frame without checksum", Zstd, slices.Concat(zdata[:zends[len(zends)-2]],
			noChecksumFrame(zdata[zends[len(zends)-2]:])), "frame-checksum-missing"},
		{"huge line", None, slices.Concat(bytes.Join(all[:5], nil), []byte(`{"type":"x","pad":"`), bytes.Repeat([]byte("a"), 3000), []byte("\"}\n"), bytes.Join(all[5:], nil)), "record-too-large"},
		{"huge torn line", None, slices.Concat(plain, bytes.Repeat([]byte("a"), 5000)), "torn-tail"},
		// A complete frame whose window (3 TiB) no reader here decodes.
		{"frame window", Zstd, slices.Concat(zdata[:zends[2]], []byte{0x28, 0xb5, 0x2f, 0xfd, 0x00, 0xfc, 0x11, 0, 0, '\n', '\n'}, zdata[zends[2]:]), "frame-window"},
	}
	old := verifyMaxRecord
	verifyMaxRecord = 2048
	defer func() { verifyMaxRecord = old }()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ls := newLogStore(t, compactID, tc.enc)
			ls.put(t, tc.log)
			r := verify.Check(ctx, ls.s, compactID, verify.Options{Mode: verify.ModeStrict})
			if r.Err != nil {
				t.Fatal(r.Err)
			}
			var got *verify.Finding
			for i := range r.Findings {
				if r.Findings[i].Code == tc.want {
					got = &r.Findings[i]
				}
			}
			if got == nil || got.Severity != verify.SeverityError || got.Pos.Path == "" {
				t.Fatalf("no located %s error: %+v", tc.want, r.Findings)
			}
		})
	}
}

// noChecksumFrame re-encodes a frame without its checksum.
func noChecksumFrame(frame []byte) []byte {
	f, _ := zstdframe.ParseFrame(bytes.NewReader(frame), 0, int64(len(frame)))
	out := slices.Clone(frame[:f.Size-4])
	out[4] &^= 0x04
	return out
}

// TestVerifyLayoutFindings checks the layout rules on a store with a flat
// log, a folder name that is no encoded id, an id in two project folders,
// a stray temp file, a name that is no generation, an older generation, a
// log that is a symlink, and session and project folders that are.
func TestVerifyLayoutFindings(t *testing.T) {
	ctx := context.Background()
	root := fixture.Copy(t, filepath.Join(fixturesDir(t), "dsh-0.1.0", "jsonl-none"))
	demo := filepath.Join(root, "--home-dev-projects-demo-app--")
	write := func(path string, data []byte) {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mainLog := filepath.Join(demo, mainID, "session.jsonl")
	data, _ := os.ReadFile(mainLog)
	write(filepath.Join(demo, "session.jsonl"), data)                                      // flat layout
	write(filepath.Join(demo, "not~an~id", "session.jsonl"), data)                         // not an encoded id
	write(filepath.Join(root, "--elsewhere--", compactID, "session.jsonl"), []byte("x\n")) // a duplicate id
	write(filepath.Join(demo, mainID, "session.jsonl.0123456789ab.tmp"), data)
	write(filepath.Join(demo, mainID, "session.v02.jsonl"), data)
	open := "session-7a2b9c4d-1e3f-4a5b-8c6d-0e1f2a3b4c5d"
	openLog := filepath.Join(demo, open, "session.jsonl")
	if err := os.Rename(openLog, openLog+".real"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(openLog+".real", openLog); err != nil {
		t.Fatal(err)
	}
	// A session folder and a project folder that are symbolic links
	// (durability review finding 13): reported, never skipped.
	linked := "session-5d6e7f80-9102-4a3b-8c4d-5e6f70819203"
	away := t.TempDir()
	if err := os.Rename(filepath.Join(demo, linked), filepath.Join(away, linked)); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(away, linked), filepath.Join(demo, linked)); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(away, filepath.Join(root, "--linked--")); err != nil {
		t.Fatal(err)
	}
	s, _ := openStore(t, root, Options{})
	got := map[string][]string{}
	sum, err := verify.Run(ctx, s, nil, verify.Options{Report: func(r *verify.SessionReport) error {
		for _, f := range r.Findings {
			got[r.ID] = append(got[r.ID], f.Code)
		}
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"session.jsonl": {"flat-file"},
		"not~an~id":     {"folder-name"},
		compactID:       {"duplicate-id", "duplicate-id"},
		mainID:          {"generation-name", "stray-temp-file"},
		open:            {"not-regular-file", "generation-name"},
		linked:          {"symlink"},
		"--linked--":    {"symlink"},
	}
	for id, codes := range want {
		g := slices.Clone(got[id])
		slices.Sort(g)
		slices.Sort(codes)
		if !slices.Equal(g, codes) {
			t.Errorf("%s: findings %v, want %v", id, got[id], codes)
		}
	}
	if sum.Errors != 7 || sum.Warnings != 1 {
		t.Errorf("summary %+v", sum)
	}
}

// TestVerifyManyBadRecordsBounded checks that verify's memory does not
// grow with the number of records: half a million one-byte garbage lines
// before a turn/end (damaged committed data) are checked within the heap
// bound of the hostile logs (durability review finding 10: batches of
// calls were bounded by line bytes only, at about 300 bytes a call).
func TestVerifyManyBadRecordsBounded(t *testing.T) {
	root := t.TempDir()
	path, err := hostile.Session(root, "s", false)
	if err != nil {
		t.Fatal(err)
	}
	junk := bytes.Repeat([]byte("x\n"), 500_000)
	end := `{"type":"turn/end","seq":5,"time":9,"data":{"turn":1,"reason":{"kind":"completed"}}}` + "\n"
	if err := hostile.Append(path, append(junk, end...)); err != nil {
		t.Fatal(err)
	}
	s, _ := openStore(t, root, Options{})
	var res verify.CheckResult
	peak, _ := peakHeap(func() { res, _ = verifyLog(t, s, "s") })
	if peak > hostileHeap {
		t.Errorf("verify of 500,000 garbage lines: heap peaked at %d MiB, over %d MiB", peak>>20, hostileHeap>>20)
	}
	if len(byClass(res, seam.ClassDamage)) == 0 {
		t.Errorf("verify found no damage in committed garbage lines")
	}
}

// TestVerifyJunkRunsCounted holds the counting of junk runs (isJunk,
// junkRunAfter) to the record-by-record check it stands for: on logs with
// long runs of junk lines (in the uncommitted tail, before a turn/end that
// commits them, mixed with empty lines, records that decode, lines over
// the record limit and turn/ends, in plain logs and in small, streamed and
// torn zstd frames) the check's result and summary are the same with and
// without it, and the runs were counted.
func TestVerifyJunkRunsCounted(t *testing.T) {
	ctx := context.Background()
	plain, _ := fixtureLog(t, compactID, None)
	all := lines(plain)
	zdata, _ := fixtureLog(t, compactID, Zstd)
	junk := func(line string, n int) []byte { return bytes.Repeat([]byte(line), n) }
	turnEnd := []byte(`{"type":"turn/end","seq":99,"time":9,"data":{"turn":9,"reason":{"kind":"completed"}}}` + "\n")
	short := []byte(`{"type":"turn/end"}` + "\n") // not a row, but a turn/end to the commit rule
	long := append(junk("y", 3000), '\n')         // over the test's record limit
	mixed := slices.Concat(junk("x\n", 1500), junk("\n", 700), junk("{}\n", 1100), []byte(`{"type":"x"}`+"\n"),
		junk(" \n", 2000), all[3], junk("x\n", 300), long, junk("ab\n", 1200), junk("\n\n\nz\n", 600))
	cases := []struct {
		name string
		enc  Encoding
		log  []byte
	}{
		{"plain tail", None, slices.Concat(plain, junk("x\n", 5000))},
		{"plain tail with a torn line", None, slices.Concat(plain, junk("x\n", 3000), []byte("x"))},
		{"plain tail of empty and junk lines", None, slices.Concat(plain, mixed)},
		{"plain committed by a turn/end", None, slices.Concat(plain, junk("x\n", 3000), turnEnd)},
		{"plain committed by a short turn/end", None, slices.Concat(plain, junk("x\n", 3000), short, junk("x\n", 2000))},
		{"plain committed mid-log", None, slices.Concat(bytes.Join(all[:12], nil), mixed, bytes.Join(all[12:], nil))},
		{"zstd tail frame", Zstd, zstdframe.AppendFrame(slices.Clone(zdata), junk("{}\n", 5000))},
		{"zstd tail frames", Zstd, zstdframe.AppendFrame(zstdframe.AppendFrame(slices.Clone(zdata), mixed), junk("x\n", 3000))},
		{"zstd streamed tail frame", Zstd, hostile.Frame(slices.Clone(zdata), hostile.Text(string(junk("{}\n", 100_000))))},
		{"zstd streamed committed frame", Zstd, hostile.Frame(slices.Clone(zdata),
			hostile.Text(string(slices.Concat(junk("{}\n", 60_000), mixed, turnEnd, junk("x\n", 3000)))))},
		{"zstd frame committed by the next", Zstd, zstdframe.AppendFrame(zstdframe.AppendFrame(slices.Clone(zdata), mixed), turnEnd)},
		{"zstd torn tail frame", Zstd, func() []byte {
			f := hostile.Frame(slices.Clone(zdata), hostile.Text(string(slices.Concat(turnEnd, junk("x\n", 200_000)))))
			return f[:len(f)-100]
		}()},
	}
	old := verifyMaxRecord
	verifyMaxRecord = 2048
	defer func() { verifyMaxRecord = old; verifyNoJunkRuns = false }()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ls := newLogStore(t, compactID, tc.enc)
			ls.put(t, tc.log)
			check := func(noRuns bool) (verify.CheckResult, seam.LogSummary, int64) {
				verifyNoJunkRuns = noRuns
				c := &countingCheck{LogCheck: verify.NewLogCheck()}
				sum, err := ls.s.VerifyLog(ctx, compactID, c)
				if err != nil {
					t.Fatal(err)
				}
				return c.Result(), sum, c.counted
			}
			slow, slowSum, _ := check(true)
			fast, fastSum, counted := check(false)
			if counted == 0 {
				t.Errorf("no junk run was counted")
			}
			if !reflect.DeepEqual(slow, fast) || !reflect.DeepEqual(slowSum, fastSum) {
				t.Errorf("record by record:\n%+v\n%+v\ncounting junk runs:\n%+v\n%+v", slowSum, slow.Findings(), fastSum, fast.Findings())
			}
		})
	}
}

// countingCheck is a LogCheck that counts the records it takes in bulk.
type countingCheck struct {
	*verify.LogCheck
	counted int64
}

func (c *countingCheck) BadRecords(p seam.Pos, n int64) {
	c.counted += n
	c.LogCheck.BadRecords(p, n)
}

// TestVerifyUnreadableSessionFolder checks a store in which one session
// folder cannot be read (mode 000, which root ignores, so the test fails
// its reads): its check fails on its own, located at the folder, and every
// other session is checked (issue 16 item 4, for verify).
func TestVerifyUnreadableSessionFolder(t *testing.T) {
	root := fixture.Copy(t, filepath.Join(fixturesDir(t), "dsh-0.1.0", "jsonl-none"))
	closed := filepath.Join(root, "--home-dev-projects-demo-app--", compactID)
	s, tfs := openStore(t, root, Options{})
	tfs.set(&tfs.failReadDir, func(path string) error {
		if path == closed {
			return &fs.PathError{Op: "open", Path: path, Err: fs.ErrPermission}
		}
		return nil
	})
	var failed []*verify.SessionReport
	var checked int
	sum, err := verify.Run(context.Background(), s, nil, verify.Options{Report: func(r *verify.SessionReport) error {
		if r.Status == verify.StatusFailed {
			failed = append(failed, r)
		} else if !r.Stray {
			checked++
		}
		return nil
	}})
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	if len(failed) != 1 || failed[0].ID != compactID || !errors.Is(failed[0].Err, fs.ErrPermission) || failed[0].Location.Path != closed {
		t.Fatalf("failed reports: %+v", failed)
	}
	if sum.Failed != 1 || checked != sum.Sessions-1 || checked < 5 {
		t.Errorf("summary %+v, %d sessions checked", sum, checked)
	}
}
