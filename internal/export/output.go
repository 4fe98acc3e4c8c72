package export

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/dshctl/dshctl/internal/durable"
	"github.com/dshctl/dshctl/internal/seam"
)

// ErrExists is returned, wrapped with the path, when an export would
// replace an existing file and force was not given.
var ErrExists = errors.New("file exists")

// fileMode is the mode of a new export: it holds a whole conversation, so
// only its owner reads it, as dsh keeps its logs.
const fileMode = 0o600

// ToFile writes the ZIP export of session id of svc (see Session) to the
// file out names (see OutputPath) through WriteFile, and says what it
// wrote; the Result's Err is not set, the error is returned. A FIFO or a
// character device that out names itself is written to, not replaced
// (WriteOptions.Stream).
func ToFile(ctx context.Context, svc seam.Service, id, out string, force bool, opts Options) (Result, error) {
	if out != "" { // before OutputPath makes a folder
		if _, err := CheckPath(out, svc); err != nil {
			return Result{}, err
		}
	}
	path, err := OutputPath(out, id)
	if err != nil {
		return Result{}, err
	}
	r := Result{ID: id, Path: path}
	r.Bytes, err = WriteFile(ctx, path, WriteOptions{Force: force, Stream: path == out}, svc, func(w io.Writer) error {
		var err error
		r.Entries, err = Session(ctx, svc, id, w, opts)
		return err
	})
	return r, err
}

// OutputPath is where the ZIP of session id goes when the user names out:
// the file out, or FileName(id) in the folder out names (one that exists,
// or one given with a trailing separator, made if missing), or FileName(id)
// in the current folder when out is empty.
func OutputPath(out, id string) (string, error) {
	name := FileName(id)
	if out == "" {
		return name, nil
	}
	if strings.HasSuffix(out, "/") || strings.HasSuffix(out, string(filepath.Separator)) {
		if err := MakeDir(out); err != nil {
			return "", err
		}
		return filepath.Join(out, name), nil
	}
	if fi, err := os.Stat(out); err == nil && fi.IsDir() {
		return filepath.Join(out, name), nil
	}
	return out, nil
}

// MakeDir makes the output folder dir and the parents it lacks, durably
// (durable.MkdirAll), so that a ZIP synced into it survives a power loss.
func MakeDir(dir string) error {
	return durable.MkdirAll(durable.OS, dir, 0o755)
}

// WriteOptions say what WriteFile may do with a file already at its path.
type WriteOptions struct {
	// Force replaces a regular file.
	Force bool
	// Stream writes into a FIFO or a character device at the path (or at
	// the end of a symbolic link there), as a shell redirection would,
	// instead of refusing it: -O /dev/null, -O /dev/stdout, -O >(cmd). A
	// terminal needs Force, as with -O -.
	Stream bool
}

// ErrNotReplaced is returned, wrapped with what the path is, for a path
// WriteFile will not replace, with or without force: anything but a
// regular file (a symbolic link, a directory, a device, a FIFO, a socket),
// unless WriteOptions.Stream writes into it.
var ErrNotReplaced = errors.New("only a regular file is replaced")

// WriteFile makes the file path with what write writes, and returns its
// size. A failed or cancelled export leaves nothing behind: the bytes go to
// a hidden temporary file beside path, which is fsynced and only then
// published under path. Without o.Force an existing path is ErrExists,
// even one that appears while the export runs; with it a regular file is
// replaced (renamed over) and its mode kept. Nothing else is ever
// replaced (ErrNotReplaced): not a symbolic link, a directory, a device, a
// FIFO or a socket; with o.Stream a FIFO or character device is written
// into instead (see WriteOptions). A new file has mode 0600. Nor is a file
// of the store from, or anything inside its folder, ever written (see
// CheckPath; from may be nil).
func WriteFile(ctx context.Context, path string, o WriteOptions, from seam.Service, write func(io.Writer) error) (size int64, err error) {
	real, err := CheckPath(path, from)
	if err != nil {
		return 0, err
	}
	mode := fs.FileMode(fileMode)
	existed := false
	if fi, err := os.Lstat(real); err == nil {
		existed = true
		if o.Stream && streamable(real) {
			return writeStream(ctx, path, real, o.Force, write)
		}
		switch {
		case fi.IsDir():
			return 0, fmt.Errorf("%s is a directory", path)
		case !fi.Mode().IsRegular():
			return 0, fmt.Errorf("%s is %s: %w", path, durable.TypeName(fi.Mode()), ErrNotReplaced)
		case !o.Force:
			return 0, fmt.Errorf("%s: %w", path, ErrExists)
		}
		mode = fi.Mode().Perm()
	} else if !errors.Is(err, fs.ErrNotExist) {
		return 0, err
	}
	// A path that was free is taken without replacing what appeared
	// there meanwhile (publish looks at it again).
	force := o.Force && existed
	// The check and the write go to the same place: the resolved path.
	dir := filepath.Dir(real)
	tmp, err := os.CreateTemp(dir, ".dsh-export-*.tmp")
	if err != nil {
		return 0, fmt.Errorf("create %s: %w", path, unwrapPath(err))
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	cw := &countWriter{w: tmp}
	bw := bufio.NewWriterSize(cw, 256<<10)
	if err = write(bw); err != nil {
		return 0, err
	}
	if err = bw.Flush(); err != nil {
		return 0, fmt.Errorf("write %s: %w", path, unwrapPath(err))
	}
	if err = ctx.Err(); err != nil {
		return 0, err
	}
	if mode != fileMode {
		if err = tmp.Chmod(mode); err != nil {
			return 0, fmt.Errorf("write %s: %w", path, unwrapPath(err))
		}
	}
	if err = tmp.Sync(); err != nil {
		return 0, fmt.Errorf("write %s: %w", path, unwrapPath(err))
	}
	if err = tmp.Close(); err != nil {
		return 0, fmt.Errorf("write %s: %w", path, unwrapPath(err))
	}
	if err = publish(tmp.Name(), real, path, force); errors.Is(err, ErrExists) && o.Force {
		// Appeared during the export: replaced only if a regular file.
		if fi, lerr := os.Lstat(real); lerr == nil && !fi.Mode().IsRegular() {
			return 0, fmt.Errorf("%s is %s: %w", path, durable.TypeName(fi.Mode()), ErrNotReplaced)
		}
		err = publish(tmp.Name(), real, path, true)
	}
	if err != nil {
		return 0, err
	}
	// Best effort: the file's bytes are synced already, and some file
	// systems refuse to sync a folder.
	_ = durable.SyncDir(dir)
	return cw.n, nil
}

// publish gives the finished temporary file tmp the name path
// (durable.Publish); name is path as the user gave it, for messages.
func publish(tmp, path, name string, force bool) error {
	err := durable.Publish(tmp, path, force)
	switch {
	case err == nil:
		return nil
	case force:
		return fmt.Errorf("replace %s: %w", name, unwrapPath(err))
	case errors.Is(err, fs.ErrExist):
		return fmt.Errorf("%s: %w", name, ErrExists)
	}
	return fmt.Errorf("create %s: %w", name, unwrapPath(err))
}

// unwrapPath drops the *fs.PathError around err, whose path (often the
// temporary file's) the caller's message replaces.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
