package sqlite

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/dshctl/dshctl/internal/seam"
)

// walHeaderSize is the size of a WAL file's header (sqlite.org/fileformat2,
// 4.1).
const walHeaderSize = 32

// walProblem says what is wrong with the header of the write-ahead log of
// the database at path, "" when it is sound, absent or empty; size is the
// WAL's. SQLite ignores a WAL whose header does not check: none of its
// frames is read, and the first write to the database, or the close of
// its last read-write connection, resets or deletes it, commits and all.
func walProblem(path string) (problem string, size int64, err error) {
	f, err := os.Open(path + "-wal")
	if errors.Is(err, fs.ErrNotExist) {
		return "", 0, nil
	}
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", 0, err
	}
	size = fi.Size()
	if !fi.Mode().IsRegular() {
		return "is not a regular file", size, nil
	}
	if size == 0 {
		return "", 0, nil
	}
	if size < walHeaderSize {
		return fmt.Sprintf("is %d bytes, shorter than a WAL header (%d)", size, walHeaderSize), size, nil
	}
	var h [walHeaderSize]byte
	if _, err := io.ReadFull(f, h[:]); err != nil {
		return "", size, err
	}
	be := binary.BigEndian
	magic := be.Uint32(h[0:])
	switch {
	case magic&^1 != 0x377f0682:
		return fmt.Sprintf("does not start with a WAL header (magic %#08x)", magic), size, nil
	case be.Uint32(h[4:]) != 3007000:
		return fmt.Sprintf("has WAL format version %d, not 3007000", be.Uint32(h[4:])), size, nil
	}
	if p := be.Uint32(h[8:]); p != 1 && (p < 512 || p > 32768 || p&(p-1) != 0) {
		return fmt.Sprintf("names a page size of %d bytes, which is not one", p), size, nil
	}
	// The checksum of the first 24 bytes, in the byte order the magic's
	// low bit says.
	var order binary.ByteOrder = binary.LittleEndian
	if magic&1 == 1 {
		order = be
	}
	var s0, s1 uint32
	for i := 0; i < 24; i += 8 {
		s0 += order.Uint32(h[i:]) + s1
		s1 += order.Uint32(h[i+4:]) + s0
	}
	if s0 != be.Uint32(h[24:]) || s1 != be.Uint32(h[28:]) {
		return "has a header whose checksum does not match", size, nil
	}
	return "", size, nil
}

// walFinding is the finding of a WAL whose header is damaged, if it is.
func (s *Store) walFinding() (seam.Finding, bool, error) {
	problem, size, err := walProblem(s.path)
	if err != nil || problem == "" {
		return seam.Finding{}, false, err
	}
	return seam.Finding{Class: seam.ClassDamage, Code: "wal-header", Pos: seam.PathPos(s.path + "-wal"),
		Message: fmt.Sprintf("the write-ahead log %s-wal (%d bytes) %s: SQLite ignores it, so no commit it may hold is read; it is left as it is, but a write to the database would reset it: copy it away first",
			filepath.Base(s.path), size, problem)}, true, nil
}

// walRefusal is the refusal of a write to the database at path whose WAL
// header is damaged (walProblem), nil when it is sound.
func walRefusal(path string) error {
	problem, size, err := walProblem(path)
	switch {
	case err != nil:
		return &seam.Error{Kind: seam.ErrIO, Op: "open store", Pos: seam.PathPos(path + "-wal"), Err: err}
	case problem != "":
		return damagedErr(path, fmt.Sprintf("%s is damaged: its write-ahead log %s-wal (%d bytes) %s, and a write would reset it; dshctl does not write to a damaged database",
			path, filepath.Base(path), size, problem))
	}
	return nil
}

// checkWrite is what a write transaction (op on session id) checks
// first: that the WAL's header is sound, as the write would reset a
// damaged one and lose what it holds, and, once per Store, that the
// database passes PRAGMA quick_check: a write to a database whose pages do
// not check (a freelist that lies, say) can spread the damage to the
// sessions it has not reached.
func (s *Store) checkWrite(ctx context.Context, op, id string) error {
	if err := walRefusal(s.path); err != nil {
		return err
	}
	s.qcMu.Lock()
	defer s.qcMu.Unlock()
	if s.qcDone {
		return nil
	}
	lines, err := s.quickCheck(ctx)
	if err != nil {
		return s.sqlErr(op, id, err)
	}
	if len(lines) > 0 {
		return damagedErr(s.path, fmt.Sprintf("%s is damaged: it fails PRAGMA quick_check (%s); dshctl does not write to a damaged database", s.path, lines[0]))
	}
	s.qcDone = true
	return nil
}
