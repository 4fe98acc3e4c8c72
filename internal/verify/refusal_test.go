package verify

import (
	"testing"

	"github.com/dshctl/dshctl/internal/seam"
)

// TestUntouchableReasons checks that a repair refused gives the reason its
// findings give, not "damaged committed data" for everything: a lock or a
// log that is not a regular file (named), the session's place in the
// store, a frame or record not checked, a format or type not known; and
// that what makes any write unsafe comes first.
func TestUntouchableReasons(t *testing.T) {
	damage := func(code, msg string) checkFinding {
		return checkFinding{Finding: seam.Finding{Class: seam.ClassDamage, Code: code, Message: msg}}
	}
	// What the file is comes from the finding's FileType, never from its
	// wording.
	withType := func(f checkFinding, typ string) checkFinding { f.FileType = typ; return f }
	lock := withType(damage("lock-not-regular", "/s/session.lock is a symbolic link, not a regular file: neither dsh nor dshctl can lock the session"), "a symbolic link")
	fifo := withType(damage("not-regular-file", "/s/session.jsonl: reworded"), "a FIFO")
	link := withType(damage("not-regular-file", "/a is b/s/session.jsonl is a socket, not a regular file"), "a symbolic link")
	bad := damage("frame-checksum", "frame 3: checksum mismatch")
	big := damage("frame-too-large", "frame at byte 618 holds more than 256 MiB of content, the frame limit")
	cases := []struct {
		name     string
		findings []checkFinding
		want     string
	}{
		{"clean", nil, ""},
		{"tail only", []checkFinding{{Finding: seam.Finding{Class: seam.ClassTail, Code: "torn-tail"}}}, ""},
		{"symlinked lock", []checkFinding{lock},
			"the session's lock file is not a regular file (a symbolic link): the session cannot be locked to write it, so it is not changed"},
		{"FIFO log", []checkFinding{fifo}, "the log is not a regular file (a FIFO): not changed"},
		{"symlinked log", []checkFinding{link}, "the log is not a regular file (a symbolic link): not changed"},
		{"duplicate id", []checkFinding{damage("duplicate-id", "")}, "the session folder is not one dsh reads (see the findings): not changed"},
		{"frame over the limit", []checkFinding{big}, "a frame over the frame limit is not checked, so it is not known to be a tail: not changed"},
		{"frame window", []checkFinding{damage("frame-window", "")}, "a frame that no reader here decodes is not known to be a tail: not changed"},
		{"committed record over the limit", []checkFinding{damage("record-too-large", "")},
			"a record over the record limit, followed by a turn/end, was not checked: not changed"},
		{"newer format", []checkFinding{damage("header-unsupported", "")},
			"the log is in a format dshctl does not know (written by a newer dsh), so it is not changed"},
		{"unknown type", []checkFinding{damage("unknown-type", "")},
			"the log holds an event type dshctl does not know (written by a newer dsh or a plugin), so it is not changed"},
		{"damage", []checkFinding{bad}, "damaged committed data is never changed"},
		{"damage before a frame over the limit", []checkFinding{big, bad}, "damaged committed data is never changed"},
		{"damage and a symlinked lock", []checkFinding{bad, lock},
			"the session's lock file is not a regular file (a symbolic link): the session cannot be locked to write it, so it is not changed"},
	}
	for _, c := range cases {
		if got := untouchable(&CheckResult{findings: c.findings}); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
