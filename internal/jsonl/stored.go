package jsonl

import (
	"context"
	"io"
	"os"
	"path/filepath"

	"github.com/dshctl/dshctl/internal/seam"
)

var _ seam.FileStorer = (*Store)(nil)

// SessionFiles returns the log files of session id, oldest generation
// first, the live log last (seam.FileStorer). Each opens as every log of
// the store does: never through a symbolic link, only a regular file.
func (s *Store) SessionFiles(ctx context.Context, id string) ([]seam.StoredFile, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	d, err := s.find("read", id)
	if err != nil {
		return nil, err
	}
	var files []seam.StoredFile
	for _, gen := range append(append([]int{}, d.older...), d.live) {
		name := LogName(gen, s.Encoding())
		path := filepath.Join(d.dir, name)
		files = append(files, seam.StoredFile{Name: name, Open: func() (io.ReadCloser, error) {
			f, err := s.fs.OpenFile(path, os.O_RDONLY, 0)
			if err != nil {
				return nil, err
			}
			fi, err := f.Stat()
			if err != nil {
				f.Close()
				return nil, err
			}
			return sectionFile{io.NewSectionReader(f, 0, fi.Size()), f}, nil
		}})
	}
	return files, nil
}

// sectionFile reads a file up to the size it had when it was opened.
type sectionFile struct {
	*io.SectionReader
	f file
}

func (s sectionFile) Close() error { return s.f.Close() }
