//go:build unix

package jsonl

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/dshctl/dshctl/internal/jsonl/hostile"
	"github.com/dshctl/dshctl/internal/seam"
)

// TestStoreFilesNeverBlock checks that a FIFO where the store expects a
// lock file or a log is refused at once, by every path that opens it,
// instead of blocking the open forever (issue 16 item 3).
func TestStoreFilesNeverBlock(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	lockPath, err := hostile.Session(root, "lock", true)
	if err != nil {
		t.Fatal(err)
	}
	lockPath = filepath.Join(filepath.Dir(lockPath), lockName)
	if err := syscall.Mkfifo(lockPath, 0o600); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	logDir := filepath.Join(root, hostile.ProjectDir, "log")
	os.MkdirAll(logDir, 0o755)
	if err := syscall.Mkfifo(filepath.Join(logDir, "session.jsonl.zstd"), 0o600); err != nil {
		t.Fatal(err)
	}
	s, _ := openStore(t, root, Options{BackupDir: t.TempDir()})
	notRegular := func(what string, err error) {
		t.Helper()
		if err == nil || !strings.Contains(err.Error(), "FIFO") && !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("%s: %v, want a refusal naming the FIFO", what, err)
		}
	}
	notRegular("WriterActive", within(t, "WriterActive", func() error { _, err := s.WriterActive(ctx, "lock"); return err }))
	notRegular("write open", within(t, "write open", func() error { _, err := s.Open(ctx, "lock", seam.Write); return err }))
	notRegular("Stat of a FIFO log", within(t, "Stat", func() error { _, err := s.Stat(ctx, "log"); return err }))
	within(t, "List", func() error {
		entries, err := s.List(ctx)
		for _, e := range entries {
			if e.Snapshot.Header.ID == "log" {
				notRegular("List entry", e.Err)
			}
		}
		return err
	})
	// The session with the FIFO lock still reads.
	if _, err := scanAll(t, s, "lock"); err != nil {
		t.Errorf("read of a session whose lock is a FIFO: %v", err)
	}
	// Verify says what is wrong with it (durability review finding 7).
	res, _ := verifyLog(t, s, "lock")
	if got := codes(byClass(res, seam.ClassDamage)); !slices.Contains(got, "lock-not-regular") {
		t.Errorf("verify of a session whose lock is a FIFO: damage %v, want lock-not-regular", got)
	}
}
