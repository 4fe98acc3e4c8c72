package jsonl

import "github.com/dshctl/dshctl/internal/seam"

var _ seam.FileKeeper = (*Store)(nil)

// StorePaths returns the root: every file under it is the store's
// (seam.FileKeeper).
func (s *Store) StorePaths() []string { return []string{s.root} }
