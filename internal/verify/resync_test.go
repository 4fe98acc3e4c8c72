package verify

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/dshctl/dshctl/internal/seam"
)

// TestCheckIrregularKeepsSeqRule: a finding that loses no records (a frame
// without a checksum) does not suspend the seq rule, so a gap right after
// it is still found (durability review finding 8); a damaged frame does
// suspend it, because its records are lost.
func TestCheckIrregularKeepsSeqRule(t *testing.T) {
	first, second := fullTurn(1, 0, "a"), fullTurn(2, 8, "b") // seq 7 is missing
	for _, tc := range []struct {
		class   seam.FindingClass
		code    string
		wantGap bool
	}{
		{seam.ClassIrregular, "frame-checksum-missing", true},
		{seam.ClassNote, "a-note", true},
		{seam.ClassDamage, "frame-checksum", false},
	} {
		f := newFeeder(t, 0).feed(first...)
		f.c.Finding(seam.Finding{Class: tc.class, Code: tc.code, Pos: f.pos(), Message: "x"})
		res := f.feed(second...).result()
		codes := findingCodes(res)
		if got := slices.Contains(codes, "seq-gap"); got != tc.wantGap {
			t.Errorf("after %s: findings %v, want a seq gap %v", tc.code, codes, tc.wantGap)
		}
		if tc.wantGap && len(damagedFindings(res)) == 0 {
			t.Errorf("after %s: the gap before a turn/end is not damage: %v", tc.code, res.Findings())
		}
	}
}

func damagedFindings(res CheckResult) []seam.Finding {
	var out []seam.Finding
	for _, f := range res.Findings() {
		if f.Class == seam.ClassDamage {
			out = append(out, f)
		}
	}
	return out
}

// TestCheckNotChecked: a record the backend could not check is not sound:
// before a turn/end it is committed and an error in every mode; at the
// tail it starts the uncommitted tail, never a clean verdict.
func TestCheckNotChecked(t *testing.T) {
	skipped := func(f *feeder) {
		f.line++
		f.c.BadRecord(f.pos(), &seam.NotCheckedError{Why: "record of 20000000 bytes, more than the 16777216 bytes verify holds"}, false)
	}
	f := newFeeder(t, 0).feed(fullTurn(1, 0, "a")...)
	skipped(f)
	res := f.feed(renumberFrom(fullTurn(2, 0, "b"), 8)...).result()
	fs := damagedFindings(res)
	if len(fs) != 1 || fs[0].Code != "record-too-large" || !strings.Contains(fs[0].Message, "so it was not checked; a turn/end follows") ||
		!strings.Contains(fs[0].Message, "verify cannot tell whether dsh accepts the log") {
		t.Fatalf("committed unchecked record: %+v", res.Findings())
	}
	for _, m := range []Mode{ModeTolerateTail, ModeStrict} {
		if r := judge("s", &res, seam.LogSummary{}, m, false); r.Status != StatusErrors {
			t.Errorf("mode %s: %s, want errors", m, r.Status)
		}
	}

	f = newFeeder(t, 0).feed(fullTurn(1, 0, "a")...)
	skipped(f)
	res = f.result()
	if u := res.Uncommitted; u == nil || u.Offset != 900 || len(damagedFindings(res)) != 0 {
		t.Fatalf("unchecked tail record: %+v %+v", u, res.Findings())
	}
	if fs := res.Findings(); !strings.Contains(fs[len(fs)-1].Message, "its first record is not known to continue the log: record of 20000000 bytes") {
		t.Fatalf("%+v", fs)
	}
}

// renumberFrom gives lines the seqs from, from+1, ...
func renumberFrom(lines []string, from int) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = seqField.ReplaceAllString(l, fmt.Sprintf(`"seq":%d`, from+i))
	}
	return out
}
