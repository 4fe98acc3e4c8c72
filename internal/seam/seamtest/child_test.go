package seamtest

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

func TestMain(m *testing.M) {
	RunChild(holdMarker)
	os.Exit(m.Run())
}

// holdMarker holds the file args[0] by creating it exclusively, and removes
// it on release.
func holdMarker(args []string) (func(), error) {
	f, err := os.OpenFile(args[0], os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, err
	}
	f.Close()
	return func() { os.Remove(args[0]) }, nil
}

func TestHoldInChild(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "held")
	release := HoldInChild(t, marker)
	if _, err := holdMarker([]string{marker}); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("while the child holds %s: %v, want it to exist", marker, err)
	}
	release()
	if _, err := os.Stat(marker); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("after release: %v, want %s removed", err, marker)
	}
	release() // idempotent
}
