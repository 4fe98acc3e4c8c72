package verify

import (
	"strings"
	"testing"

	"github.com/dshctl/dshctl/internal/seam"
)

// TestSummaryNotRepaired: a session whose repair failed was checked: the
// summary says "not repaired", not "not checked" (durability finding 14).
func TestSummaryNotRepaired(t *testing.T) {
	var s Summary
	s.add(&SessionReport{Status: StatusClean})
	s.add(&SessionReport{Status: StatusFailed})
	s.add(&SessionReport{Status: StatusFailed, NotRepaired: true})
	s.add(&SessionReport{Status: StatusFailed, NotRepaired: true})
	if got, want := s.String(), "4 sessions, 1 clean, 0 with warnings, 0 with errors, 1 not checked, 2 not repaired"; got != want {
		t.Fatalf("%q, want %q", got, want)
	}
}

// TestRepairLinesRewrite: when the cut starts at the frame holding the
// first uncommitted record, its committed records are written back: the
// line says the bytes were cut and what was written back, never that they
// were all removed (durability finding 14).
func TestRepairLinesRewrite(t *testing.T) {
	rm := seam.Repair{Offset: 2000, Bytes: 107431, Kind: seam.RepairUncommitted, Backup: "/b/x.bin", Rewritten: 9000}
	done := (&RepairReport{Removed: []seam.Repair{rm}, Rewrite: 12}).lines("")
	want := "repaired: cut 107431 bytes at byte 2000 (uncommitted tail, from the start of its frame; the 12 committed records before it in that frame were written back as a frame of their own), saved to /b/x.bin"
	if len(done) != 1 || done[0] != want {
		t.Fatalf("%q", done)
	}
	rm.Backup = ""
	dry := (&RepairReport{DryRun: true, Removed: []seam.Repair{rm}, Rewrite: 12}).lines("/backups")
	if len(dry) != 1 || !strings.HasPrefix(dry[0], "would cut 107431 bytes") || !strings.Contains(dry[0], "would be written back") {
		t.Fatalf("%q", dry)
	}
	plain := (&RepairReport{Removed: []seam.Repair{{Offset: 5, Bytes: 16, Kind: seam.RepairTorn, Backup: "/b/y.bin"}}}).lines("")
	if len(plain) != 1 || plain[0] != "repaired: removed 16 bytes at byte 5 (torn tail), saved to /b/y.bin" {
		t.Fatalf("%q", plain)
	}
}
