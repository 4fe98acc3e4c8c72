package jsonl

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/dshctl/dshctl/internal/jsonl/zstdframe"

	"github.com/dshctl/dshctl/internal/seam"
	"github.com/dshctl/dshctl/internal/verify"
)

const tornStart = `{"type":"turn/st`

// TestTrimTailFollowsThePlan: TrimTail removes the tail the caller
// verified and nothing else; a plan that is not the tail the write open
// found changes nothing (durability review finding 9).
func TestTrimTailFollowsThePlan(t *testing.T) {
	ctx := context.Background()
	plain, _ := fixtureLog(t, compactID, None)
	log := slices.Concat(plain, []byte(tornStart))
	size := int64(len(plain))
	torn := seam.Repair{Offset: size, Bytes: int64(len(tornStart)), Kind: seam.RepairTorn}
	ls := newLogStore(t, compactID, None)
	ls.put(t, log)
	for _, plan := range []seam.TrimPlan{
		{}, // verification found nothing
		{Tails: []seam.Repair{{Offset: size - 10, Bytes: 10 + torn.Bytes, Kind: seam.RepairUncommitted}}}, // another cut
		{Tails: []seam.Repair{torn}, Rewrite: 1},                                                          // a frame to write back
		{Tails: []seam.Repair{torn}, Salvage: 3},                                                          // records to salvage
	} {
		h, err := ls.s.Open(ctx, compactID, seam.Write)
		if err != nil {
			t.Fatal(err)
		}
		_, err = h.(seam.TailTrimmer).TrimTail(ctx, plan)
		h.Close()
		if !errors.Is(err, seam.ErrTailMismatch) {
			t.Fatalf("plan %+v: %v, want ErrTailMismatch", plan, err)
		}
		if now, _ := os.ReadFile(ls.path); !bytes.Equal(now, log) {
			t.Fatalf("plan %+v changed the log", plan)
		}
	}
	h, err := ls.s.Open(ctx, compactID, seam.Write)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	res, err := h.(seam.TailTrimmer).TrimTail(ctx, seam.TrimPlan{Tails: []seam.Repair{torn}})
	if err != nil || len(res.Repairs) != 1 || !seam.SameTails(res.Repairs, []seam.Repair{torn}) {
		t.Fatalf("%+v, %v", res, err)
	}
	if now, _ := os.ReadFile(ls.path); !bytes.Equal(now, plain) {
		t.Fatal("the torn tail is still there")
	}
}

// TestRepairMatchesItsPlan is the review's case: a record too large for
// verify to hold, then a torn line. The plan, the locked check and the
// repair agree: the unchecked record starts the uncommitted tail, and a
// dry run announces exactly what the repair removes. Where the write path
// reads the large record as valid, the repair refuses instead of cutting
// something the check did not name.
func TestRepairMatchesItsPlan(t *testing.T) {
	ctx := context.Background()
	old := verifyMaxRecord
	verifyMaxRecord = 2048
	defer func() { verifyMaxRecord = old }()
	plain, _ := fixtureLog(t, compactID, None)

	garbage := slices.Concat(plain, bytes.Repeat([]byte("x"), 3<<20), []byte("\n"), []byte(tornStart))
	ls := newLogStore(t, compactID, None)
	ls.put(t, garbage)
	dry := verify.Check(ctx, ls.s, compactID, verify.Options{Repair: true, DryRun: true})
	if dry.Repair == nil || len(dry.Repair.Removed) != 2 || dry.Status != verify.StatusWarnings {
		t.Fatalf("dry run: %s %+v", dry.Status, dry.Repair)
	}
	r := verify.Check(ctx, ls.s, compactID, verify.Options{Repair: true})
	if r.Err != nil || r.Status != verify.StatusClean || !seam.SameTails(r.Repair.Removed, dry.Repair.Removed) {
		t.Fatalf("repair: %s %v: removed %+v, planned %+v", r.Status, r.Err, r.Repair.Removed, dry.Repair.Removed)
	}
	if now, _ := os.ReadFile(ls.path); !bytes.Equal(now, plain) {
		t.Fatal("the repair left more or less than the committed log")
	}
	if kept, _ := os.ReadFile(r.Repair.Removed[0].Backup); !bytes.Equal(kept, garbage[len(plain):]) {
		t.Fatalf("the backup holds %d bytes", len(kept))
	}

	// A valid event too large for verify: verify cannot vouch for it, the
	// write path keeps it; the repair refuses and changes nothing.
	evs, err := scanAll(t, ls.s, compactID)
	if err != nil {
		t.Fatal(err)
	}
	next := int(evs[len(evs)-1].Seq) + 1
	valid := slices.Concat(plain, []byte(`{"type":"session/title","seq":`), []byte(strconv.Itoa(next)), []byte(`,"time":1,"data":{"title":"`),
		bytes.Repeat([]byte("x"), 3<<20), []byte("\"}}\n"), []byte(tornStart))
	ls.put(t, valid)
	r = verify.Check(ctx, ls.s, compactID, verify.Options{Repair: true})
	if !errors.Is(r.Err, seam.ErrTailMismatch) || r.Status != verify.StatusFailed || !r.NotRepaired {
		t.Fatalf("valid large record: %s %v", r.Status, r.Err)
	}
	if now, _ := os.ReadFile(ls.path); !bytes.Equal(now, valid) {
		t.Fatal("a refused repair changed the log")
	}
}

// TestVerifyVerdicts are logs dsh refuses that verify passed (durability
// review finding 8): each is an error in the default mode.
func TestVerifyVerdicts(t *testing.T) {
	ctx := context.Background()
	old := verifyMaxRecord
	verifyMaxRecord = 2048
	defer func() { verifyMaxRecord = old }()
	plain, _ := fixtureLog(t, compactID, None)
	all := lines(plain)
	// A frame without its checksum whose first record skips a seq: a gap
	// right after an irregular frame.
	gapLog := slices.Concat(zstdframe.AppendFrame(nil, all[0]), zstdframe.AppendFrame(nil, bytes.Join(all[1:10], nil)),
		noChecksumFrame(zstdframe.AppendFrame(nil, bytes.Join(all[11:], nil))))
	for _, tc := range []struct {
		name string
		enc  Encoding
		log  []byte
		want string
	}{
		{"seq gap after a frame without checksum", Zstd, gapLog, "seq-gap"},
		{"large garbage line before a turn/end", None, slices.Concat(bytes.Join(all[:5], nil), bytes.Repeat([]byte("x"), 3<<20), []byte("\n"), bytes.Join(all[5:], nil)), "record-too-large"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ls := newLogStore(t, compactID, tc.enc)
			ls.put(t, tc.log)
			if _, err := scanAll(t, ls.s, compactID); !errors.Is(err, seam.ErrCorrupt) {
				t.Fatalf("the reader accepts the log (%v): the case is wrong", err)
			}
			r := verify.Check(ctx, ls.s, compactID, verify.Options{})
			var codes []string
			for _, f := range r.Findings {
				codes = append(codes, f.Code)
			}
			if r.Status != verify.StatusErrors || !slices.Contains(codes, tc.want) {
				t.Fatalf("%s %v: %v, want errors with %s", r.Status, r.Err, codes, tc.want)
			}
		})
	}
}

// cancelAfterTrim is a store whose write handles cancel the run right
// after their trim, as a Ctrl-C during the check after a repair does.
type cancelAfterTrim struct {
	*Store
	cancel context.CancelFunc
}

type trimThenCancel struct {
	seam.Handle
	cancel context.CancelFunc
}

func (c cancelAfterTrim) Open(ctx context.Context, id string, a seam.Access) (seam.Handle, error) {
	h, err := c.Store.Open(ctx, id, a)
	if err != nil || a != seam.Write {
		return h, err
	}
	return trimThenCancel{h, c.cancel}, nil
}

func (h trimThenCancel) TrimTail(ctx context.Context, plan seam.TrimPlan) (seam.TrimResult, error) {
	defer h.cancel()
	return h.Handle.(seam.TailTrimmer).TrimTail(ctx, plan)
}

// TestRepairInterruptedAfterwards: a run cancelled after the repair, while
// it checks the result, reports the repair as done and says it was not
// checked, rather than a bare "context canceled" (durability finding 14).
func TestRepairInterruptedAfterwards(t *testing.T) {
	plain, _ := fixtureLog(t, compactID, None)
	ls := newLogStore(t, compactID, None)
	ls.put(t, slices.Concat(plain, []byte(tornStart)))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r := verify.Check(ctx, cancelAfterTrim{ls.s, cancel}, compactID, verify.Options{Repair: true})
	if !errors.Is(r.Err, verify.ErrInterruptedAfterRepair) || errors.Is(r.Err, context.Canceled) || r.NotRepaired {
		t.Fatalf("%v", r.Err)
	}
	if r.Repair == nil || len(r.Repair.Removed) != 1 || r.Repair.Removed[0].Backup == "" || r.Repair.After != nil {
		t.Fatalf("%+v", r.Repair)
	}
	if f := r.Findings[len(r.Findings)-1]; f.Code != "torn-tail" || !f.Repaired {
		t.Fatalf("%+v", r.Findings)
	}
	if now, _ := os.ReadFile(ls.path); !bytes.Equal(now, plain) {
		t.Fatal("the repair was not done")
	}
}

// TestBackupNote: every backup has a description beside it that says which
// session and log, which bytes, why and when, and the restore command; the
// restore it describes gives back the log as it was (review S5).
func TestBackupNote(t *testing.T) {
	ctx := context.Background()
	zdata, zends := fixtureLog(t, compactID, Zstd)
	// An uncommitted record inside the last frame, then a torn frame: the
	// frame is rewritten and both tails are removed.
	last := zdata[zends[len(zends)-2]:]
	text := frameContent(t, last)
	bad := slices.Concat(text, []byte("{\"type\":\"bogus\"\n"))
	log := slices.Concat(zdata[:zends[len(zends)-2]], zstdframe.AppendFrame(nil, bad), zstdframe.AppendFrame(nil, []byte(tornStart+"x\n"))[:20])
	ls := newLogStore(t, compactID, Zstd)
	ls.put(t, log)
	r := verify.Check(ctx, ls.s, compactID, verify.Options{Repair: true})
	if r.Err != nil || r.Repair == nil || len(r.Repair.Removed) != 2 {
		t.Fatalf("%v %+v", r.Err, r.Repair)
	}
	backup := r.Repair.Removed[0].Backup
	raw, err := os.ReadFile(noteName(backup))
	if err != nil {
		t.Fatal(err)
	}
	var note backupNote
	if err := json.Unmarshal(raw, &note); err != nil {
		t.Fatal(err)
	}
	cut := int64(zends[len(zends)-2])
	if note.SessionID != compactID || note.Log != ls.path || note.Encoding != "zstd" || note.LogSizeBytes != int64(len(log)) ||
		note.OffsetBytes != cut || note.SizeBytes != int64(len(log))-cut || note.RewrittenBytes != int64(len(text)) ||
		len(note.Tails) != 2 || note.Tails[0].Kind != seam.RepairUncommitted || note.Tails[1].Kind != seam.RepairTorn ||
		note.Tails[0].Why == "" || note.SavedAt == "" || !strings.Contains(note.Restore, "truncate -s "+strconv.FormatInt(cut, 10)+" '"+ls.path+"'") {
		t.Fatalf("%s", raw)
	}
	if fi, err := os.Stat(noteName(backup)); err != nil || runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600 {
		t.Fatalf("%v %v", fi.Mode(), err)
	}
	// The restore: the first OffsetBytes of the log now, then the backup.
	now, _ := os.ReadFile(ls.path)
	kept, _ := os.ReadFile(backup)
	if restored := slices.Concat(now[:note.OffsetBytes], kept); !bytes.Equal(restored, log) {
		t.Fatal("the restore the note describes does not give back the log")
	}
}

// frameContent decodes one whole zstd frame.
func frameContent(t *testing.T, frame []byte) []byte {
	t.Helper()
	d, err := zstdframe.NewDecoder()
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	f, err := zstdframe.ParseFrame(bytes.NewReader(frame), 0, int64(len(frame)))
	if err != nil {
		t.Fatal(err)
	}
	out, err := d.DecodeAll(bytes.NewReader(frame), f, 64<<20)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
