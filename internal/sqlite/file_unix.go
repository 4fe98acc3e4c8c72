//go:build unix

package sqlite

import (
	"fmt"
	"io/fs"

	"github.com/dshctl/dshctl/internal/seam"
)

// checkMode refuses a database that users other than its owner can read or
// write, as dsh does: a session log holds everything the agent saw.
func checkMode(path string, fi fs.FileInfo) error {
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return storeErr(seam.ErrInvalid, path, fmt.Sprintf("%s has mode %#o, which lets other users access it (dsh refuses it too)", path, perm),
			"chmod 600 "+path)
	}
	return nil
}
