//go:build unix

package sqlite

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshctl/dshctl/internal/seam"
	"golang.org/x/sys/unix"
)

func TestOpenRefusesFIFO(t *testing.T) {
	p := filepath.Join(t.TempDir(), "fifo.sqlite")
	if err := unix.Mkfifo(p, 0o600); err != nil {
		t.Skip(err)
	}
	_, err := Open(p, Options{})
	wantKind(t, err, seam.ErrInvalid, "Open of a FIFO")
	if !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("Open: %q", err)
	}
}
