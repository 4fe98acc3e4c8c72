package sqlite

import "github.com/dshctl/dshctl/internal/seam"

var _ seam.FileKeeper = (*Store)(nil)

// StorePaths returns the database and the files SQLite and dshctl keep
// beside it: the write-ahead log, its index, a rollback journal and the
// session lock file (seam.FileKeeper).
func (s *Store) StorePaths() []string {
	return []string{s.path, s.path + "-wal", s.path + "-shm", s.path + "-journal", s.path + lockSuffix}
}
