//go:build unix

package sqlite

import "os"

// syncDir fsyncs a directory, so that a file created in it survives a
// crash.
func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}
