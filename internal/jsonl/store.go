// Package jsonl is the JSONL backend of the persistence seam: dsh session
// logs stored as files, plain (.jsonl) or as concatenated zstd frames
// (.jsonl.zstd), format v0 to v4 (spec/store.md).
//
// Reads follow dsh's recoverable mode and never serve a torn tail. Stat and
// List read only the head and the tail of each log; Scan streams with
// memory bounded by the largest record (in reverse, by the largest zstd
// frame). Write handles hold the session's flock and append one frame (or
// the batch's lines) per batch, fsynced.
package jsonl

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/dshctl/dshctl/internal/durable"
	"github.com/dshctl/dshctl/internal/jsonl/osfs"
	"github.com/dshctl/dshctl/internal/seam"
)

// Options configure Open.
type Options struct {
	// Compression is the encoding of the root's logs. Empty means: detect
	// it from the logs the root holds, or Zstd for a root without logs.
	// Logs of the other encoding are reported as encoding mismatches.
	Compression Encoding
	// BackupDir receives the bytes that removing a torn or uncommitted
	// tail cuts from a log, in a folder per session. The caller chooses
	// it (dshctl: under $XDG_STATE_HOME); when it is empty, an append that
	// must remove a tail fails with ErrNoBackupDir and changes nothing.
	BackupDir string
	// AllowUnknownTypes makes reads serve events whose type the log's
	// version does not know and that are not ignorable, instead of failing
	// with ErrUnsupportedFormat. It is for inspection (cat shows a plugin's
	// events while verify reports them); write opens refuse such logs
	// regardless.
	AllowUnknownTypes bool
	// CreateRoot makes the root directory (0700) when it is missing;
	// otherwise a missing root is ErrNotFound.
	CreateRoot bool
	// MaxRecordBytes bounds one record (a line of a log, without its
	// newline) that a read holds in memory; 0 means
	// DefaultMaxRecordBytes. A longer record is an ErrLimit error naming
	// it, never an allocation: it is skipped as it is read.
	MaxRecordBytes int64
	// MaxFrameBytes bounds the decoded content of one zstd frame; 0 means
	// DefaultMaxFrameBytes. A frame of a few KiB can decode to GiBs:
	// past the limit it is an ErrLimit error naming it, whatever its
	// header declares, so no frame costs more work than this.
	MaxFrameBytes int64
	// ProbeWriters makes a write open refuse, before anything is written,
	// a session whose log another process has open for writing, where the
	// OS tells (procfd): a writer that takes no lock, as dsh 0.1.0.
	ProbeWriters bool
	// InUseWindow, when positive, makes a write open refuse a session
	// whose log changed less than this long ago, and not by dshctl (which
	// notes its own writes in the session's lock file): dsh 0.1.0 opens
	// the log only for the moment of each append, so a log that just
	// changed is the sign it is running.
	InUseWindow time.Duration

	// fs replaces the file system in tests.
	fs fileSystem
}

// The default limits of Options: well above any record or append batch dsh
// writes (a tool result of a few MiB is large; images are offloaded to
// files of their own), far below what a hostile log can make a reader hold
// or decode. A record streamed from a large frame is gathered in memory as
// it is read, then joined, so a read may hold about twice the record
// limit: 32 MiB keeps a command under 100 MB whatever the log holds (the
// bad_*.txtar scripts measure it).
const (
	DefaultMaxRecordBytes = 32 << 20
	DefaultMaxFrameBytes  = 256 << 20
)

// ErrRecordLimit and ErrFrameLimit are what the cause of a seam.ErrLimit
// error matches when a read stopped at Options.MaxRecordBytes or
// Options.MaxFrameBytes, the limits a caller may raise. A frame beyond
// the decoder's own limits (a window over 8 MiB) matches neither.
var (
	ErrRecordLimit = errors.New("record limit")
	ErrFrameLimit  = errors.New("frame limit")
)

// Store is a JSONL session store rooted at one directory. It implements
// seam.Service, seam.LockProber and, through its handles, seam.RawReader.
type Store struct {
	root     string
	enc      Encoding // guarded by mu
	encFixed bool     // enc came from opts or from a log in the root
	opts     Options
	fs       fileSystem
	lim      limits

	mu      sync.Mutex
	writers seam.Claims[*handle] // ids this store owns for writing, pending creates included
	closed  bool

	decs decoderPool

	// folders remembers the project folder of each cwd met in a header
	// (cwd → *cwdFolder), which every open checks.
	folders sync.Map
}

var (
	_ seam.Service    = (*Store)(nil)
	_ seam.LockProber = (*Store)(nil)
	_ seam.Finder     = (*Store)(nil)
)

// Open returns the store rooted at root. It detects the root's encoding
// from the logs it holds.
func Open(root string, opts Options) (*Store, error) {
	fsys := opts.fs
	if fsys == nil {
		fsys = osfs.OS{}
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, &seam.Error{Kind: seam.ErrIO, Op: "open store", Pos: seam.NoPos, Err: err}
	}
	if opts.Compression != "" && opts.Compression != Zstd && opts.Compression != None {
		return nil, seam.Errorf(seam.ErrInvalid, "open store", "", seam.NoPos, "compression %q is not zstd or none", opts.Compression)
	}
	// Backups are named by absolute paths, so that the restore command of
	// a backup's note works from any folder.
	if opts.BackupDir != "" {
		if opts.BackupDir, err = filepath.Abs(opts.BackupDir); err != nil {
			return nil, &seam.Error{Kind: seam.ErrIO, Op: "open store", Pos: seam.NoPos, Err: err}
		}
	}
	fi, err := fsys.Stat(abs)
	if errors.Is(err, fs.ErrNotExist) && opts.CreateRoot {
		err = durable.MkdirAll(fsys, abs, 0o700)
		if err == nil {
			fi, err = fsys.Stat(abs)
		}
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, &seam.Error{Kind: seam.ErrNotFound, Op: "open store", Pos: seam.PathPos(abs),
			Err: fmt.Errorf("no session store at %s", abs)}
	case err != nil:
		return nil, &seam.Error{Kind: seam.ErrIO, Op: "open store", Pos: seam.NoPos, Err: err}
	case !fi.IsDir():
		return nil, seam.Errorf(seam.ErrInvalid, "open store", "", seam.NoPos, "%s is not a directory", abs)
	}
	if opts.MaxRecordBytes < 0 || opts.MaxFrameBytes < 0 {
		return nil, seam.Errorf(seam.ErrInvalid, "open store", "", seam.NoPos, "negative record or frame limit")
	}
	lim := limits{record: opts.MaxRecordBytes, frame: opts.MaxFrameBytes}
	if lim.record == 0 {
		lim.record = DefaultMaxRecordBytes
	}
	if lim.frame == 0 {
		lim.frame = DefaultMaxFrameBytes
	}
	s := &Store{root: abs, opts: opts, fs: fsys, lim: lim}
	found, err := s.detectEncoding()
	if err != nil {
		return nil, &seam.Error{Kind: seam.ErrIO, Op: "open store", Pos: seam.NoPos, Err: err}
	}
	s.setEncoding(found)
	return s, nil
}

// setEncoding fixes the store's encoding from opts or from found, the
// encoding detected in the root. A root without logs stays undecided, so
// that the first session another process stores there decides it.
func (s *Store) setEncoding(found Encoding) {
	switch {
	case s.opts.Compression != "":
		s.enc, s.encFixed = s.opts.Compression, true
	case found != "":
		s.enc, s.encFixed = found, true
	default:
		s.enc = Zstd
	}
}

// Root returns the store's root directory.
func (s *Store) Root() string { return s.root }

// Encoding returns the encoding of the store's logs.
func (s *Store) Encoding() Encoding {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.enc
}

// redetect decides the encoding of a root that held no log so far.
func (s *Store) redetect() error {
	s.mu.Lock()
	fixed := s.encFixed
	s.mu.Unlock()
	if fixed {
		return nil
	}
	found, err := s.detectEncoding()
	if err != nil {
		return err
	}
	s.mu.Lock()
	if !s.encFixed {
		s.setEncoding(found)
	}
	s.mu.Unlock()
	return nil
}

// detectEncoding returns the encoding of the first session folder, in
// name order, whose logs all use one encoding (a folder holding both is an
// error of its own, not evidence), or "" when there is none.
func (s *Store) detectEncoding() (Encoding, error) {
	projects, err := s.fs.ReadDir(s.root)
	if err != nil {
		return "", err
	}
	for _, p := range projects {
		if !p.IsDir() || !isProjectFolder(p.Name()) {
			continue
		}
		// A folder that cannot be read is no evidence, and no reason to
		// fail: List reports it, and every other session works.
		entries, err := s.fs.ReadDir(filepath.Join(s.root, p.Name()))
		if err != nil {
			continue
		}
		for _, e := range entries {
			if !e.IsDir() {
				continue
			}
			files, err := s.fs.ReadDir(filepath.Join(s.root, p.Name(), e.Name()))
			if err != nil {
				continue
			}
			var found Encoding
			for _, f := range files {
				if _, enc, ok := ParseLogName(f.Name()); ok {
					if found != "" && found != enc {
						found = ""
						break
					}
					found = enc
				}
			}
			if found != "" {
				return found, nil
			}
		}
	}
	return "", nil
}

// sessionDir is a session folder and the logs in it.
type sessionDir struct {
	id      string
	project string // project folder name
	dir     string // path of the session folder
	live    int    // generation of the live log; -1 when none
	older   []int
	temps   []string // names of temp files a killed writer left (isStaleTemp)
}

func (d *sessionDir) livePath(enc Encoding) string {
	return filepath.Join(d.dir, LogName(d.live, enc))
}

// location returns the Location of d's live log.
func (s *Store) location(d *sessionDir) seam.Location {
	loc := seam.Location{Backend: "jsonl", Encoding: string(s.Encoding()), Generation: max(d.live, 0), OlderGenerations: d.older}
	if d.live >= 0 {
		loc.Path = d.livePath(s.Encoding())
	} else {
		loc.Path = d.dir
	}
	return loc
}

// find locates the session folder of id among the project folders.
func (s *Store) find(op, id string) (*sessionDir, error) {
	seg, err := EncodeSegment(id)
	if err != nil {
		return nil, seam.Errorf(seam.ErrInvalid, op, id, seam.NoPos, "%v", err)
	}
	projects, err := s.fs.ReadDir(s.root)
	if err != nil {
		return nil, &seam.Error{Kind: seam.ErrIO, Op: op, ID: id, Pos: seam.NoPos, Err: err}
	}
	var found []string
	var link string // a session folder of the id that is a symbolic link
	for _, p := range projects {
		if !p.IsDir() || !isProjectFolder(p.Name()) {
			continue
		}
		path := filepath.Join(s.root, p.Name(), seg)
		fi, err := s.fs.Lstat(path)
		switch {
		case err != nil:
		case fi.IsDir():
			found = append(found, p.Name())
		case fi.Mode()&fs.ModeSymlink != 0:
			link = path
		}
	}
	if len(found) == 0 && link != "" {
		return nil, symlinkFolderError(op, id, link)
	}
	var dirs []*sessionDir
	for _, p := range found {
		d, err := s.inspect(op, id, p, seg)
		if err != nil {
			return nil, err
		}
		if d.live >= 0 {
			dirs = append(dirs, d)
		}
	}
	switch len(dirs) {
	case 0:
		return nil, seam.NotFound(op, id)
	case 1:
		return dirs[0], nil
	}
	return nil, duplicateIDError(op, id, s.root, len(dirs), dirs[0].dir, dirs[1].dir)
}

// symlinkFolderError reports a symbolic link where the store expects the
// folder at path: dshctl neither reads nor writes through it.
func symlinkFolderError(op, id, path string) error {
	return seam.Errorf(seam.ErrCorrupt, op, id, seam.PathPos(path),
		"%s is %w", path, ErrSymlink)
}

// inspect reads a session folder: its generations and encoding.
func (s *Store) inspect(op, id, project, seg string) (*sessionDir, error) {
	d := &sessionDir{id: id, project: project, dir: filepath.Join(s.root, project, seg), live: -1}
	entries, err := s.fs.ReadDir(d.dir)
	if err != nil {
		return d, &seam.Error{Kind: seam.ErrIO, Op: op, ID: id, Pos: seam.NoPos, Err: err}
	}
	var gens []int
	for _, e := range entries {
		gen, enc, ok := ParseLogName(e.Name())
		if !ok {
			if isStaleTemp(e.Name()) {
				d.temps = append(d.temps, e.Name())
			}
			continue
		}
		path := filepath.Join(d.dir, e.Name())
		p := seam.PathPos(path)
		if enc != s.Encoding() {
			return d, seam.Errorf(seam.ErrCorrupt, op, id, p,
				"encoding mismatch: session artifact %q uses %s, but this store holds %s logs; use a separate root or select the matching compression",
				path, enc.suffix(), s.Encoding().suffix())
		}
		if !e.Type().IsRegular() {
			return d, seam.Errorf(seam.ErrCorrupt, op, id, p, "%s is not a regular file", path)
		}
		gens = append(gens, gen)
	}
	if len(gens) == 0 {
		return d, nil
	}
	slices.Sort(gens)
	d.live, d.older = gens[len(gens)-1], gens[:len(gens)-1]
	if len(d.older) == 0 {
		d.older = nil
	}
	return d, nil
}

// openLog opens the live log of d with flag.
func (s *Store) openLog(op string, d *sessionDir, flag int) (*logFile, error) {
	path := d.livePath(s.Encoding())
	f, err := s.fs.OpenFile(path, flag, 0)
	if err != nil {
		kind := seam.ErrIO
		if errors.Is(err, fs.ErrNotExist) {
			kind = seam.ErrNotFound
		}
		return nil, &seam.Error{Kind: kind, Op: op, ID: d.id, Pos: seam.PathPos(path), Err: err}
	}
	return &logFile{f: f, path: path, id: d.id, enc: s.Encoding(), gen: d.live, decs: &s.decs, lim: s.lim}, nil
}

// cwdFolder is a cwd met in a header and its project folder.
type cwdFolder struct{ cwd, folder string }

// checkProject checks that the header's cwd maps to the project folder
// holding the session, or to a folder that is the same directory.
func (s *Store) checkProject(l *logFile, d *sessionDir, h *seam.Header) error {
	var want string
	if v, ok := s.folders.Load(h.Cwd); ok {
		p := v.(*cwdFolder)
		// Sessions of a project share one copy of its cwd (list keeps
		// every header).
		h.Cwd, want = p.cwd, p.folder
	} else {
		var err error
		if want, err = projectFolder(h.Cwd); err != nil {
			return l.errorf(seam.ErrCorrupt, l.pos(0, -1, 1, -1), "header cwd: %v", err)
		}
		s.folders.Store(h.Cwd, &cwdFolder{h.Cwd, want})
	}
	if want == d.project {
		return nil
	}
	a, err1 := s.fs.Stat(filepath.Join(s.root, want))
	b, err2 := s.fs.Stat(filepath.Join(s.root, d.project))
	if err1 == nil && err2 == nil && os.SameFile(a, b) {
		return nil
	}
	return l.errorf(seam.ErrCorrupt, l.pos(0, -1, 1, -1), "header cwd %q belongs in project folder %q, not %q", h.Cwd, want, d.project)
}

// revision is the opaque token of a file's state.
func revision(fi fs.FileInfo) string {
	dev, ino, ctime := osfs.Identity(fi)
	b := make([]byte, 0, 5*18)
	b = strconv.AppendUint(b, dev, 16)
	b = strconv.AppendUint(append(b, ':'), ino, 16)
	for _, v := range [...]int64{fi.Size(), fi.ModTime().UnixNano(), ctime} {
		b = strconv.AppendInt(append(b, ':'), v, 16)
	}
	return string(b)
}

// headTail is a log's header and tail, read without its body.
type headTail struct {
	hi   headerInfo
	tail tailInfo
	size int64
	rev  string
}

// readHeadTail reads the header and the tail of an open log.
func (s *Store) readHeadTail(ctx context.Context, l *logFile, d *sessionDir) (headTail, error) {
	ht, w, err := s.readHeadTailWindow(ctx, l, d)
	if w != nil {
		w.release()
	}
	return ht, err
}

// readHeadTailWindow is readHeadTail, also returning the window of the
// log's head and tail it read (nil when it could not read it), which the
// caller must release.
func (s *Store) readHeadTailWindow(ctx context.Context, l *logFile, d *sessionDir) (headTail, *windowFile, error) {
	var ht headTail
	fi, err := l.f.Stat()
	if err != nil {
		return ht, nil, l.ioError(err, -1)
	}
	ht.size, ht.rev = fi.Size(), revision(fi)
	// Read the head and the tail once; the header and tail searches then
	// read from memory.
	w, err := newWindowFile(l.f, ht.size)
	if err != nil {
		return ht, nil, l.ioError(err, 0)
	}
	wl := *l
	wl.f = w
	dec, done := s.decs.once(ctx, l.lim.frame)
	defer done()
	if ht.hi, err = wl.readHeader(ht.size, dec); err != nil {
		return ht, w, err
	}
	if err := s.checkProject(&wl, d, &ht.hi.hdr); err != nil {
		return ht, w, err
	}
	ht.tail, err = wl.readTail(ctx, ht.size, &ht.hi, dec)
	if err != nil && !errors.Is(err, ErrRecordLimit) {
		return ht, w, err
	}
	r := &reader{l: &wl, hdr: &ht.hi.hdr, body: ht.hi.body(), lenient: true}
	return ht, w, r.checkTail(ctx, ht.size, &ht.tail, err)
}

// snapshotOf is the Snapshot of the session in d whose log's head and tail
// are ht.
func (s *Store) snapshotOf(d *sessionDir, ht *headTail) seam.Snapshot {
	snap := seam.Snapshot{Header: ht.hi.hdr, Revision: ht.rev, EventCount: ht.tail.next, SizeBytes: ht.size, Location: s.location(d)}
	snap.Location.TornBytes = ht.size - ht.tail.physEnd
	snap.Location.UncommittedBytes = max(ht.tail.physEnd-ht.tail.commitEnd, 0)
	return snap
}

// snapshot reads the metadata of the session in d.
func (s *Store) snapshot(ctx context.Context, op string, d *sessionDir) (seam.Snapshot, error) {
	snap := seam.Snapshot{Header: seam.Header{ID: d.id}, Location: s.location(d)}
	l, err := s.openLog(op, d, os.O_RDONLY)
	if err != nil {
		return snap, err
	}
	defer l.f.Close()
	ht, err := s.readHeadTail(ctx, l, d)
	snap.SizeBytes, snap.Revision = ht.size, ht.rev
	if err != nil {
		return snap, seam.Wrap(err, seam.ErrIO, op, d.id)
	}
	return s.snapshotOf(d, &ht), nil
}

// Stat returns the metadata of a session from the head and the tail of its
// live log.
func (s *Store) Stat(ctx context.Context, id string) (seam.Snapshot, error) {
	if err := s.check(ctx, "stat"); err != nil {
		return seam.Snapshot{}, err
	}
	if h, ok := s.writers.Pending(id); ok {
		return h.pendingSnapshot(), nil
	}
	d, err := s.find("stat", id)
	if err != nil {
		return seam.Snapshot{}, err
	}
	return s.snapshot(ctx, "stat", d)
}

// Find reports whether session id is stored, reading its folder but not
// its log (seam.Finder).
func (s *Store) Find(ctx context.Context, id string) error {
	if err := s.check(ctx, "stat"); err != nil {
		return err
	}
	if _, ok := s.writers.Pending(id); ok {
		return nil
	}
	_, err := s.find("stat", id)
	return err
}

// check fails when the store is closed or ctx is done.
func (s *Store) check(ctx context.Context, op string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return &seam.Error{Kind: seam.ErrHandleClosed, Op: op, Pos: seam.NoPos, Err: errors.New("store is closed")}
	}
	if err := s.redetect(); err != nil {
		return &seam.Error{Kind: seam.ErrIO, Op: op, Pos: seam.NoPos, Err: err}
	}
	return nil
}
