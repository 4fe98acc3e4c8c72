package jsonl

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/cespare/xxhash/v2"
	"github.com/dshctl/dshctl/internal/jsonl/hostile"
	"github.com/dshctl/dshctl/internal/jsonl/zstdframe"
	"github.com/dshctl/dshctl/internal/seam"
	"github.com/dshctl/dshctl/internal/verify"
)

// fuzzVerify checks a one-session root whose log is log, and holds verify
// to the reader: damage exactly when a full read fails, the same events
// otherwise, every finding located in the log; and a repair of a log with a
// tail and no damage leaves one that verifies without either, holding the
// same events.
func fuzzVerify(t *testing.T, enc Encoding, log []byte) {
	ctx := context.Background()
	root := t.TempDir()
	path := writeLog(t, root, "--p--", "s", LogName(0, enc), "")
	if err := os.WriteFile(path, log, 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := Open(root, Options{BackupDir: t.TempDir(), Compression: enc, fs: &testFS{noSync: true}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c := verify.NewLogCheck()
	if _, err := s.VerifyLog(ctx, "s", c); err != nil {
		t.Fatalf("VerifyLog: %v", err)
	}
	res := c.Result()
	if bytes.Count(log, []byte{'\n'}) > junkRunAfter {
		// Long enough for a run of junk to be counted in bulk: the
		// record-by-record check must find the same.
		verifyNoJunkRuns = true
		slow := verify.NewLogCheck()
		_, err := s.VerifyLog(ctx, "s", slow)
		verifyNoJunkRuns = false
		if err != nil {
			t.Fatalf("VerifyLog record by record: %v", err)
		}
		if sr := slow.Result(); !reflect.DeepEqual(sr, res) {
			t.Fatalf("counting junk runs finds %+v, record by record %+v", res.Findings(), sr.Findings())
		}
	}
	damaged, tail := false, res.Torn != nil || res.Uncommitted != nil
	for _, f := range res.Findings() {
		if f.Code == "" || f.Message == "" || f.Pos.Path == "" && f.Class != seam.ClassNote {
			t.Fatalf("finding without a code, message or place: %+v", f)
		}
		damaged = damaged || f.Class == seam.ClassDamage
	}
	events, rerr := scanAll(t, s, "s")
	// A frame past a decoder limit (a window of terabytes) is refused as
	// a limit; verify finds it as damage all the same.
	refused := errors.Is(rerr, seam.ErrCorrupt) || errors.Is(rerr, seam.ErrUnsupportedFormat) || errors.Is(rerr, seam.ErrLimit)
	switch {
	case rerr != nil && !refused:
		t.Fatalf("read: %v", rerr)
	case !damaged && tailRefusal(rerr, res):
		return
	case refused != damaged:
		t.Fatalf("the reader says %v; verify finds %+v", rerr, res.Findings())
	case !damaged && int64(len(events)) != res.Events:
		t.Fatalf("the reader reads %d events, verify counts %d", len(events), res.Events)
	}
	if damaged || !tail {
		return
	}
	r := verify.Check(ctx, s, "s", verify.Options{Repair: true})
	if r.Err != nil || r.Repair == nil || len(r.Repair.Removed) == 0 {
		t.Fatalf("repair: %v %+v", r.Err, r.Repair)
	}
	c = verify.NewLogCheck()
	if _, err := s.VerifyLog(ctx, "s", c); err != nil {
		t.Fatal(err)
	}
	after := c.Result()
	if after.Torn != nil || after.Uncommitted != nil || after.Events != res.Events {
		t.Fatalf("after the repair: %d events (%d before), %+v", after.Events, res.Events, after.Findings())
	}
}

// tailRefusal reports whether err is an open's refusal of the last row,
// a row that verify (reading forward) finds in the uncommitted tail: of
// its type, or of its length past the record limit. An open knows only
// the tail: it checks the last row that decodes, before anything says
// whether that row is committed; only a full read can tell.
func tailRefusal(err error, res verify.CheckResult) bool {
	var se *seam.Error
	return (errors.Is(err, seam.ErrUnsupportedFormat) || errors.Is(err, ErrRecordLimit)) && errors.As(err, &se) &&
		res.Uncommitted != nil && se.Pos.Offset >= res.Uncommitted.Offset
}

func FuzzVerifyPlain(f *testing.F) {
	head := headerFor("s")
	for _, s := range hostile.PlainSeeds() {
		f.Add(s)
	}
	f.Add([]byte(fuzzLines[0] + "garbage\n"))
	f.Add([]byte(fuzzLines[0] + fuzzLines[0]))
	// Runs of junk long enough to be counted in bulk, then a turn/end.
	f.Add([]byte(fuzzLines[0] + strings.Repeat("x\n", junkRunAfter+50) + "\n\n{}\n" + fuzzLines[3]))
	f.Fuzz(func(t *testing.T, body []byte) {
		fuzzVerify(t, None, append([]byte(head), body...))
	})
}

func FuzzVerifyZstd(f *testing.F) {
	head := zstdframe.AppendFrame(nil, []byte(headerFor("s")))
	for _, s := range hostile.ZstdSeeds(zstdframe.AppendFrame) {
		f.Add(s)
	}
	f.Add(zstdframe.AppendFrame(nil, []byte(fuzzLines[0]+fuzzLines[1]+"garbage\n")))
	f.Add(append(zstdframe.AppendFrame(nil, []byte(fuzzLines[0])), "JUNK"...))
	// A complete frame whose window (3 TiB) is past the decoder's limit,
	// last and before a turn/end: the reader refuses it as a limit.
	// One raw block, the last: its header is size<<3 | 1, little-endian.
	bh := len(fuzzLines[1])<<3 | 1
	huge := append([]byte{0x28, 0xb5, 0x2f, 0xfd, 0x00, 0xfc, byte(bh), byte(bh >> 8), byte(bh >> 16)}, fuzzLines[1]...)
	f.Add(append(zstdframe.AppendFrame(nil, []byte(fuzzLines[0])), huge...))
	f.Add(zstdframe.AppendFrame(append(zstdframe.AppendFrame(nil, []byte(fuzzLines[0])), huge...), []byte(fuzzLines[2]+fuzzLines[3])))
	f.Add(zstdframe.AppendFrame(zstdframe.AppendFrame(nil, []byte(fuzzLines[0]+strings.Repeat("{}\n", junkRunAfter+50))), []byte(fuzzLines[3])))
	f.Fuzz(func(t *testing.T, body []byte) {
		fuzzVerify(t, Zstd, append(head[:len(head):len(head)], body...))
	})
}

// TestVerifyAgreesOnLimits holds verify to the reader (fuzzVerify) on logs
// past a reader limit, which fuzzing reaches rarely: a record over the
// record limit in the uncommitted tail, plain and zstd, and a frame
// whose window is past the decoder's limit.
func TestVerifyAgreesOnLimits(t *testing.T) {
	title := `{"type":"session/title","seq":1,"time":1,"data":{"title":"`
	long := hostile.Repeat('a', DefaultMaxRecordBytes+1)
	plain := append([]byte(fuzzLines[0]+title), bytes.Repeat([]byte{'a'}, DefaultMaxRecordBytes+1)...)
	bh := len(fuzzLines[1])<<3 | 1
	huge := append([]byte{0x28, 0xb5, 0x2f, 0xfd, 0x00, 0xfc, byte(bh), byte(bh >> 8), byte(bh >> 16)}, fuzzLines[1]...)
	for _, c := range []struct {
		name string
		enc  Encoding
		body []byte
	}{
		{"plain long tail record", None, append(plain, "\"}}\n"...)},
		{"zstd long tail record", Zstd, hostile.Frame(zstdframe.AppendFrame(nil, []byte(fuzzLines[0])),
			hostile.Text(title), long, hostile.Text("\"}}\n"))},
		{"zstd window past the limit", Zstd, zstdframe.AppendFrame(append(zstdframe.AppendFrame(nil, []byte(fuzzLines[0])), huge...),
			[]byte(fuzzLines[2]+fuzzLines[3]))},
		// Junk, then frames a resync finds: one that declares more
		// content than its one block can hold (found by fuzzing: verify
		// failed as an I/O error), and one whose content is past the
		// limit.
		{"zstd junk then a frame declaring petabytes", Zstd, append(append(zstdframe.AppendFrame(nil, []byte(fuzzLines[0])), "JUNK"...),
			declaring(1183324197447027, fuzzLines[1])...)},
		{"zstd junk then a frame past the limit", Zstd, zstdframe.AppendFrame(append(append(zstdframe.AppendFrame(nil, []byte(fuzzLines[0])), "JUNK"...),
			hostile.Frame(nil, hostile.Repeat(' ', DefaultMaxFrameBytes+1))...), []byte(fuzzLines[3]))},
	} {
		t.Run(c.name, func(t *testing.T) {
			head := []byte(headerFor("s"))
			if c.enc == Zstd {
				head = zstdframe.AppendFrame(nil, head)
			}
			fuzzVerify(t, c.enc, append(head, c.body...))
		})
	}
}

// declaring returns a frame with a checksum that declares content of n
// bytes and holds content in one raw block (a window of 1 MiB).
func declaring(n uint64, content string) []byte {
	b := []byte{0x28, 0xb5, 0x2f, 0xfd, 0xc4, 0x50}
	b = binary.LittleEndian.AppendUint64(b, n)
	bh := len(content)<<3 | 1
	b = append(b, byte(bh), byte(bh>>8), byte(bh>>16))
	b = append(b, content...)
	return binary.LittleEndian.AppendUint32(b, uint32(xxhash.Sum64String(content)))
}
