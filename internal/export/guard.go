package export

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/dshctl/dshctl/internal/seam"
)

// ErrStoreFile is returned, in a *StoreFileError, for an output path that
// is a file of the store being exported or lies inside its folder: an
// export never replaces a log, a lock or a database, whatever --force says.
var ErrStoreFile = errors.New("a file of the store being exported")

// StoreFileError says which store file an output path would have replaced.
type StoreFileError struct {
	// Path is the output path as given.
	Path string
	// Store is the store's file or folder it resolves to or into.
	Store string
	// Inside says Path lies inside the store folder Store.
	Inside bool
}

func (e *StoreFileError) Error() string {
	if e.Inside {
		return fmt.Sprintf("refusing to write %s: it lies inside the store being exported (%s)", e.Path, e.Store)
	}
	return fmt.Sprintf("refusing to write %s: it is %s, a file of the store being exported", e.Path, e.Store)
}

func (e *StoreFileError) Unwrap() error { return ErrStoreFile }

// Hint says what to do instead.
func (e *StoreFileError) Hint() string { return "write the ZIP to a path outside the store" }

// CheckPath refuses (*StoreFileError) an output path that is one of the
// files of the store from (seam.FileKeeper) or lies inside its folder,
// once symbolic links are followed: those of the folders on the way and
// of the store's paths; a link at path itself is what a write replaces, so
// it is not followed. Files are compared by identity too, so another
// spelling of a store file (a hard link, a case-insensitive file system,
// a bind mount) is refused as well. A path that does not exist yet is
// checked as far as its folders exist. It returns path resolved: the
// path a write goes to.
func CheckPath(path string, from seam.Service) (string, error) {
	target, err := resolve(path)
	if err != nil {
		return "", err
	}
	fk, ok := from.(seam.FileKeeper)
	if !ok {
		return target, nil
	}
	tfi, _ := os.Lstat(target)
	for _, owned := range fk.StorePaths() {
		o, err := resolve(owned)
		if err != nil {
			o = filepath.Clean(owned)
		}
		ofi, statErr := os.Stat(o)
		isDir := statErr == nil && ofi.IsDir()
		switch {
		case samePath(target, o) || tfi != nil && statErr == nil && os.SameFile(tfi, ofi):
			return "", &StoreFileError{Path: path, Store: o, Inside: isDir}
		case isDir && within(target, o):
			return "", &StoreFileError{Path: path, Store: o, Inside: true}
		case isDir:
			for d := filepath.Dir(target); ; d = filepath.Dir(d) {
				if dfi, err := os.Stat(d); err == nil && os.SameFile(dfi, ofi) {
					return "", &StoreFileError{Path: path, Store: o, Inside: true}
				}
				if d == filepath.Dir(d) {
					break
				}
			}
		}
	}
	return target, nil
}

// samePath reports whether two resolved paths name the same file where the
// file system usually ignores case (macOS, Windows): a store file that does
// not exist yet (a -wal) has no identity to compare.
func samePath(a, b string) bool {
	if runtime.GOOS == "darwin" || runtime.GOOS == "windows" {
		return strings.EqualFold(a, b)
	}
	return a == b
}

// within reports whether path lies under the folder dir.
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// resolve returns the absolute path path names with the symbolic links of
// its folders followed, as the kernel follows them (a ".." after a link
// leaves the link's target, not the link); its last element is kept as it
// is. Of a path that does not exist yet, the part that exists is resolved.
func resolve(path string) (string, error) {
	if !filepath.IsAbs(path) {
		wd, err := os.Getwd()
		if err != nil {
			return "", err
		}
		path = wd + string(filepath.Separator) + path // not Join: it would drop ".." before links are followed
	}
	dir, name := filepath.Split(strings.TrimRight(path, string(filepath.Separator)+"/"))
	if name == "" || name == "." || name == ".." {
		// The path names a folder (or the root): resolve it whole.
		return resolveExisting(path)
	}
	d, err := resolveExisting(dir)
	if err != nil {
		return "", err
	}
	return filepath.Join(d, name), nil
}

// resolveExisting follows the symbolic links of path as far as it exists
// and appends the rest.
func resolveExisting(path string) (string, error) {
	var rest []string
	for {
		r, err := filepath.EvalSymlinks(path)
		if err == nil {
			return filepath.Join(append([]string{r}, rest...)...), nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		dir, name := filepath.Split(strings.TrimRight(path, string(filepath.Separator)+"/"))
		if dir == "" || dir == path {
			return "", err
		}
		rest = append([]string{name}, rest...)
		path = dir
	}
}
