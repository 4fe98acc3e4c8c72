package sqlite

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
	"syscall"

	"github.com/dshctl/dshctl/internal/durable"
)

// Write ownership.
//
// SQLite's own locks last one transaction; a write handle owns its session
// for as long as it is open. Like the JSONL backend's session.lock, the
// ownership is an advisory lock in a file beside the store that is never
// deleted: <database>.dshctl-lock, created (mode 0600) by the first write,
// holds one exclusive one-byte lock per owned session, at an offset derived
// from the session id (62 bits of its SHA-256). A lock taken by another
// process fails at once: the session is in use. Within the process a
// registry of the locks it holds tells handles of every service apart, so
// the OS lock only has to work between processes; it is an OFD lock on
// Linux (untouched by closes elsewhere in the process), a POSIX record lock
// on other Unix systems (the registry keeps the one descriptor open while
// it holds a lock) and LockFileEx on Windows.
//
// dsh does not take this lock; against dsh the append transaction itself
// protects the log: it checks the stored tail and revision under SQLite's
// write lock and fails with ErrOwnershipLost when they moved.

// errBusy says that another process holds the lock.
var errBusy = errors.New("lock held by another process")

// lockSuffix names the lock file beside the database.
const lockSuffix = ".dshctl-lock"

// lockOffset is where the lock of session id lives in the lock file.
func lockOffset(id string) int64 {
	sum := sha256.Sum256([]byte(id))
	return int64(binary.BigEndian.Uint64(sum[:8]) >> 2)
}

// lockFile is an open lock file and the locks this process holds in it.
type lockFile struct {
	path string
	f    *os.File
	held map[int64]string // offset -> session id
}

var registry = struct {
	sync.Mutex
	files map[string]*lockFile // by lock file path
}{files: map[string]*lockFile{}}

// ownership is a held session lock.
type ownership struct {
	lf  *lockFile
	off int64
	id  string
}

// acquire takes the write lock of session id of the database at dbPath.
// It fails with seam.ErrAlreadyOwned (wrapped by the caller) when a handle
// of this process or another process holds it.
func acquire(dbPath, id string) (*ownership, error) {
	registry.Lock()
	defer registry.Unlock()
	path := dbPath + lockSuffix
	off := lockOffset(id)
	lf := registry.files[path]
	if lf == nil {
		f, err := openLock(dbPath, path)
		if err != nil {
			return nil, fmt.Errorf("lock file %s: %w", path, err)
		}
		lf = &lockFile{path: path, f: f, held: map[int64]string{}}
	}
	if holder, ok := lf.held[off]; ok {
		if holder == id {
			return nil, errInProcess
		}
		// Two ids with the same 62-bit hash: practically never.
		return nil, fmt.Errorf("lock of %q collides with that of %q", id, holder)
	}
	if err := lockRange(lf.f, off); err != nil {
		if len(lf.held) == 0 {
			lf.f.Close()
		}
		return nil, err
	}
	lf.held[off] = id
	registry.files[path] = lf
	return &ownership{lf: lf, off: off, id: id}, nil
}

// errLockSymlink is a lock file that is a symbolic link, which could make
// a write (by root, say) create or lock a file anywhere.
var errLockSymlink = errors.New("a symbolic link, which dshctl does not follow")

// openLock opens the lock file at path of the database at dbPath, making
// it when missing. It is never opened through a symbolic link nor blocks
// on a FIFO, and must be a regular file. One this open makes is given to
// the database's owner: a root append must not lock the owner out.
func openLock(dbPath, path string) (*os.File, error) {
	f, err := openLockFile(path, 0)
	if errors.Is(err, fs.ErrNotExist) {
		f, err = openLockFile(path, os.O_CREATE|os.O_EXCL)
		switch {
		case err == nil:
			if fi, serr := os.Stat(dbPath); serr == nil {
				if err = durable.GiveTo(f, fi); err != nil {
					f.Close()
					return nil, fmt.Errorf("giving it to the owner of %s: %w", dbPath, err)
				}
			}
		case errors.Is(err, fs.ErrExist): // another writer made it meanwhile
			f, err = openLockFile(path, 0)
		}
	}
	if errors.Is(err, syscall.ELOOP) || errors.Is(err, syscall.EMLINK) {
		if fi, lerr := os.Lstat(path); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
			err = errLockSymlink
		}
	}
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("not a regular file (%s)", fi.Mode().Type())
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// errInProcess says that a handle of this process holds the lock.
var errInProcess = errors.New("held by another handle of this process")

// release drops the lock; the lock file is closed with its last lock.
func (o *ownership) release() error {
	registry.Lock()
	defer registry.Unlock()
	lf := o.lf
	if lf.held[o.off] != o.id {
		return nil
	}
	delete(lf.held, o.off)
	err := unlockRange(lf.f, o.off)
	if len(lf.held) == 0 {
		delete(registry.files, lf.path)
		if cerr := lf.f.Close(); err == nil {
			err = cerr
		}
	}
	return err
}

// writerActive reports whether a handle of this process or another process
// holds the write lock of session id, without taking it.
func writerActive(dbPath, id string) (bool, error) {
	registry.Lock()
	defer registry.Unlock()
	path := dbPath + lockSuffix
	off := lockOffset(id)
	if lf := registry.files[path]; lf != nil {
		if _, ok := lf.held[off]; ok {
			return true, nil
		}
		return rangeLocked(lf.f, off)
	}
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	// No lock of this process lives in the file, so closing it drops none.
	defer f.Close()
	return rangeLocked(f, off)
}
