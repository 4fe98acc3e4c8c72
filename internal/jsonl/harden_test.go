package jsonl

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dshctl/dshctl/internal/durable"
	"github.com/dshctl/dshctl/internal/jsonl/hostile"
	"github.com/dshctl/dshctl/internal/jsonl/osfs"
	"github.com/dshctl/dshctl/internal/seam"
)

// within runs op and fails the test if it has not returned after a
// minute: a store file that blocks an open must never hang a command (a
// blocked open waits forever; a busy machine may hold a quick one back
// for seconds).
func within(t *testing.T, what string, op func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- op() }()
	select {
	case err := <-done:
		return err
	case <-time.After(time.Minute):
		t.Fatalf("%s blocked", what)
		return nil
	}
}

// TestSymlinksRefused checks that a symbolic link where the store expects
// a folder or a lock file is refused, with a message that says so, and
// that nothing is ever written through it (issue 16 item 5).
func TestSymlinksRefused(t *testing.T) {
	ctx := context.Background()
	root, elsewhere := t.TempDir(), t.TempDir()
	if _, err := hostile.Session(root, "real", true); err != nil {
		t.Fatal(err)
	}
	// A session folder that is a link to a folder outside the store.
	if err := os.Symlink(elsewhere, filepath.Join(root, hostile.ProjectDir, "linked")); err != nil {
		t.Skipf("no symbolic links here: %v", err)
	}
	// A project folder that is a link.
	if err := os.Symlink(elsewhere, filepath.Join(root, "--elsewhere--")); err != nil {
		t.Fatal(err)
	}
	// A lock file that is a link to a file that does not exist yet.
	target := filepath.Join(elsewhere, "planted")
	if err := os.Symlink(target, filepath.Join(root, hostile.ProjectDir, "real", lockName)); err != nil {
		t.Fatal(err)
	}
	s, _ := openStore(t, root, Options{BackupDir: t.TempDir()})
	refused := func(what string, err error) {
		t.Helper()
		if err == nil || !strings.Contains(err.Error(), "symbolic link") {
			t.Errorf("%s: %v, want a refusal naming the symbolic link", what, err)
		}
	}
	_, err := s.Stat(ctx, "linked")
	refused("Stat of a linked session folder", err)
	_, err = s.Open(ctx, "linked", seam.Read)
	refused("Open of a linked session folder", err)

	hdr := header("linked", 4)
	hdr.Cwd = "/p"
	_, err = s.Create(ctx, hdr, seam.CreateOptions{})
	refused("Create in a linked session folder", err)

	hdr = header("new", 4)
	hdr.Cwd = "/elsewhere"
	w, err := s.Create(ctx, hdr, seam.CreateOptions{})
	if err == nil {
		err = w.Flush(ctx)
		w.Close()
	}
	refused("Create in a linked project folder", err)

	_, err = s.Open(ctx, "real", seam.Write)
	refused("write open with a linked lock file", err)

	if entries, _ := os.ReadDir(elsewhere); len(entries) != 0 {
		t.Errorf("written through a link: %v", entries)
	}
	entries, err := s.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var linked int
	for _, e := range entries {
		switch e.Snapshot.Header.ID {
		case "linked", "--elsewhere--":
			linked++
			refused("List entry "+e.Snapshot.Header.ID, e.Err)
		case "real":
			if e.Err != nil {
				t.Errorf("List: the real session: %v", e.Err)
			}
		}
	}
	if linked != 2 {
		t.Errorf("List reported %d links, want 2: %+v", linked, entries)
	}
}

// TestUnreadableFolderIsOneEntry checks that a project or session folder
// that cannot be read is an error entry of List and breaks nothing else:
// the store opens, and every other session lists, reads and takes
// appends (issue 16 item 4).
func TestUnreadableFolderIsOneEntry(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	for _, id := range []string{"a", "b"} {
		if _, err := hostile.Session(root, id, true); err != nil {
			t.Fatal(err)
		}
	}
	locked := []string{filepath.Join(root, hostile.ProjectDir, "b"), filepath.Join(root, "--closed--")}
	if err := os.MkdirAll(locked[1], 0o755); err != nil {
		t.Fatal(err)
	}
	tfs := &testFS{}
	tfs.failReadDir = func(path string) error {
		for _, l := range locked {
			if path == l {
				return &fs.PathError{Op: "open", Path: path, Err: syscall.EACCES}
			}
		}
		return nil
	}
	s, err := Open(root, Options{BackupDir: t.TempDir(), fs: tfs})
	if err != nil {
		t.Fatalf("Open of a store with an unreadable folder: %v", err)
	}
	defer s.Close()
	if s.Encoding() != Zstd {
		t.Errorf("encoding %q, want zstd", s.Encoding())
	}
	entries, err := s.List(ctx)
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	got := map[string]error{}
	for _, e := range entries {
		got[e.Snapshot.Header.ID] = e.Err
	}
	if len(got) != 3 || got["a"] != nil || !errors.Is(got["b"], syscall.EACCES) || !errors.Is(got["--closed--"], syscall.EACCES) {
		t.Errorf("List: %v; want a readable, and b and --closed-- unreadable", got)
	}
	if _, err := s.Stat(ctx, "a"); err != nil {
		t.Errorf("Stat of another session: %v", err)
	}
	w, err := s.Open(ctx, "a", seam.Write)
	if err != nil {
		t.Fatalf("write open of another session: %v", err)
	}
	defer w.Close()
	if err := w.Append(ctx, []seam.Event{{Type: "session/title", Seq: 5, Time: 1, Data: []byte(`{"title":"x"}`)}}); err != nil {
		t.Errorf("append to another session: %v", err)
	}
}

// uncommittedInFrame appends to the zstd log at path a frame holding a
// committed event (seq 5) and then a record that does not parse: removing
// it rewrites the log.
func uncommittedInFrame(t *testing.T, path string) {
	t.Helper()
	if err := hostile.Append(path, hostile.Frame(nil, hostile.Text(`{"type":"session/title","seq":5,"time":1,"data":{"title":"kept"}}`+"\n{not json\n"))); err != nil {
		t.Fatal(err)
	}
}

// TestRewriteChecksFreeSpace checks that removing an uncommitted tail
// that starts inside a frame, which copies the log, first checks that the
// file system has room for the copy, and changes nothing when it has not
// (issue 16 item 8).
func TestRewriteChecksFreeSpace(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	path, err := hostile.Session(root, "s", true)
	if err != nil {
		t.Fatal(err)
	}
	uncommittedInFrame(t, path)
	before, _ := os.ReadFile(path)
	backups := t.TempDir()
	s, tfs := openStore(t, root, Options{BackupDir: backups})
	tfs.free = func(string) (int64, error) { return 100, nil }
	w, err := s.Open(ctx, "s", seam.Write)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	err = w.Append(ctx, []seam.Event{{Type: "session/title", Seq: 6, Time: 1, Data: []byte(`{"title":"x"}`)}})
	if err == nil || !strings.Contains(err.Error(), "bytes free") {
		t.Fatalf("append with no room for the rewrite: %v", err)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Errorf("the log changed")
	}
	if entries, _ := os.ReadDir(backups); len(entries) != 0 {
		t.Errorf("a backup was written: %v", entries)
	}
}

// TestFailedCreateLeavesNothing checks that a create that fails writing
// its log (a full disk) removes the session folder it made, lock and all,
// and the project folder it made (issue 16 item 8).
func TestFailedCreateLeavesNothing(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	if _, err := hostile.Session(root, "old", true); err != nil {
		t.Fatal(err)
	}
	s, tfs := openStore(t, root, Options{BackupDir: t.TempDir()})
	tfs.failWrite = func(path string) error {
		if strings.HasSuffix(path, ".tmp") {
			return &fs.PathError{Op: "write", Path: path, Err: syscall.ENOSPC}
		}
		return nil
	}
	for _, cwd := range []string{"/p", "/new/project"} {
		hdr := header("new", 4)
		hdr.Cwd = cwd
		w, err := s.Create(ctx, hdr, seam.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		err = w.Append(ctx, []seam.Event{{Type: "session/title", Seq: 0, Time: 1, Data: []byte(`{"title":"x"}`)}})
		w.Close()
		if !errors.Is(err, syscall.ENOSPC) {
			t.Fatalf("create on a full disk: %v", err)
		}
		project, _ := ProjectKey(cwd)
		if _, err := os.Lstat(filepath.Join(root, project, "new")); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("cwd %s: the session folder is left: %v", cwd, err)
		}
	}
	if _, err := os.Lstat(filepath.Join(root, "--new-project--")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the project folder made for the create is left")
	}
	if _, err := os.Lstat(filepath.Join(root, hostile.ProjectDir)); err != nil {
		t.Errorf("the existing project folder is gone: %v", err)
	}
}

// TestRootKeepsOwners runs as root on a store owned by another user and
// checks that what a repair rewrites and what it creates (a lock file, a
// session's folder and log) keep the owner, group and mode of what they
// replace or live in, so that the owner (and dsh) can still write them
// afterwards (issue 16 item 6).
func TestRootKeepsOwners(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	const uid, gid = 65534, 65534
	ctx := context.Background()
	base := t.TempDir()
	os.Chmod(base, 0o755)
	os.Chmod(filepath.Dir(base), 0o755) // for the owner to reach the store
	root := filepath.Join(base, "sessions")
	path, err := hostile.Session(root, "s", true)
	if err != nil {
		t.Fatal(err)
	}
	uncommittedInFrame(t, path)
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		os.Lchown(p, uid, gid)
		if !d.IsDir() {
			os.Chmod(p, 0o640)
		}
		return nil
	})
	s, _ := openStore(t, root, Options{BackupDir: t.TempDir()})
	w, err := s.Open(ctx, "s", seam.Write)
	if err != nil {
		t.Fatal(err)
	}
	err = w.Append(ctx, []seam.Event{{Type: "session/title", Seq: 6, Time: 1, Data: []byte(`{"title":"x"}`)}})
	w.Close()
	if err != nil {
		t.Fatal(err)
	}
	if reps := len(w.(seam.TailRepairer).Repairs()); reps == 0 {
		t.Fatalf("no repair: the test misses the rewrite")
	}
	for _, id := range []string{"new", "other"} {
		hdr := header(id, 4)
		hdr.Cwd = map[string]string{"new": "/p", "other": "/other"}[id]
		w, err := s.Create(ctx, hdr, seam.CreateOptions{})
		if err == nil {
			err = w.Flush(ctx)
			w.Close()
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	owned := func(p string, mode fs.FileMode) {
		t.Helper()
		fi, err := os.Lstat(p)
		if err != nil {
			t.Error(err)
			return
		}
		u, g, _ := durable.Owner(fi)
		if u != uid || g != gid || fi.Mode().Perm() != mode {
			t.Errorf("%s: owner %d:%d mode %v, want %d:%d %v", p, u, g, fi.Mode().Perm(), uid, gid, mode)
		}
	}
	dir := filepath.Join(root, hostile.ProjectDir)
	owned(path, 0o640)
	owned(filepath.Join(dir, "s", lockName), 0o600)
	owned(filepath.Join(dir, "new"), 0o700)
	owned(filepath.Join(dir, "new", "session.v4.jsonl.zstd"), 0o600)
	owned(filepath.Join(dir, "new", lockName), 0o600)
	owned(filepath.Join(root, "--other--"), 0o700)
	owned(filepath.Join(root, "--other--", "other", "session.v4.jsonl.zstd"), 0o600)

	// The owner writes on: its dsh opens the log for appending and takes
	// the lock.
	if _, err := exec.LookPath("setpriv"); err != nil {
		t.Skip("no setpriv to act as the owner")
	}
	for _, p := range []string{path, filepath.Join(dir, "s", lockName), filepath.Join(root, "--other--", "other", "session.v4.jsonl.zstd")} {
		out, err := exec.Command("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "sh", "-c", `exec 3>>"$1"`, "sh", p).CombinedOutput()
		if err != nil {
			t.Errorf("the owner cannot write %s: %v: %s", p, err, out)
		}
	}
}

// TestBackupFoldersDurable checks that the folders a repair makes for its
// backup are synced into their parents before the log is cut, so that a
// power loss cannot keep the cut and lose the backup (durability review
// finding 11).
func TestBackupFoldersDurable(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	path, err := hostile.Session(root, "s", true)
	if err != nil {
		t.Fatal(err)
	}
	uncommittedInFrame(t, path)
	state := t.TempDir()
	backups := filepath.Join(state, "dshctl", "backups")
	s, tfs := openStore(t, root, Options{BackupDir: backups})
	var synced []string
	tfs.set(&tfs.failSync, func(p string) error {
		synced = append(synced, p)
		return nil
	})
	w, err := s.Open(ctx, "s", seam.Write)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.Append(ctx, []seam.Event{{Type: "session/title", Seq: 6, Time: 1, Data: []byte(`{"title":"x"}`)}}); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{state, filepath.Join(state, "dshctl"), backups, filepath.Join(backups, SafeName("s"))} {
		if !slices.Contains(synced, dir) {
			t.Errorf("%s was not synced after a folder was made in it (synced: %v)", dir, synced)
		}
	}
}

// TestCopyRangeCancelled checks that the copies of a backup and of a log
// rewrite stop when the context is done, between blocks, instead of
// copying a multi-GB log to the end first (durability review finding 16).
func TestCopyRangeCancelled(t *testing.T) {
	dir := t.TempDir()
	fsys := osfs.OS{}
	src, err := fsys.OpenFile(filepath.Join(dir, "src"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if err := src.Truncate(8 << 20); err != nil {
		t.Fatal(err)
	}
	dst, err := fsys.OpenFile(filepath.Join(dir, "dst"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cw := &cancelAfter{file: dst, n: 2, cancel: cancel}
	if err := osfs.CopyRange(ctx, cw, src, 0, 8<<20); !errors.Is(err, context.Canceled) {
		t.Fatalf("copyRange after cancel: %v, want context.Canceled", err)
	}
	if fi, _ := dst.Stat(); fi.Size() > 2<<20 {
		t.Errorf("copyRange wrote %d bytes after it was cancelled at 2 MiB", fi.Size())
	}
}

// cancelAfter is a file that cancels a context after n writes.
type cancelAfter struct {
	file
	n      int
	cancel func()
}

func (c *cancelAfter) Write(p []byte) (int, error) {
	if c.n--; c.n == 0 {
		c.cancel()
	}
	return c.file.Write(p)
}

// TestCreateWhereAFileIs: a regular file where a project folder should be
// is named for what it is, and is left alone.
func TestCreateWhereAFileIs(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	file := filepath.Join(root, "--plain--")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, _ := openStore(t, root, Options{BackupDir: t.TempDir()})
	hdr := header("new", 4)
	hdr.Cwd = "/plain"
	w, err := s.Create(ctx, hdr, seam.CreateOptions{})
	if err == nil {
		err = w.Flush(ctx)
		w.Close()
	}
	if err == nil || !strings.Contains(err.Error(), "not a directory (a regular file)") {
		t.Errorf("Create under a file: %v, want it named as not a directory", err)
	}
	if b, _ := os.ReadFile(file); string(b) != "x" {
		t.Errorf("the file changed: %q", b)
	}
}

// TestCutFrameWithFramesInside: a frame that the end of the file cuts but
// that has complete frames inside it is damage, not a torn tail (a crash
// cuts only the frame being written, so frames after its start are
// committed data): a read and a write open refuse the log, and the write
// open cuts nothing.
func TestCutFrameWithFramesInside(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	path, err := hostile.Session(root, "s", true)
	if err != nil {
		t.Fatal(err)
	}
	// A frame header and a raw block that claims 100 KiB, holding two
	// complete frames of later turns; the file ends inside the block.
	cut := []byte{0x28, 0xb5, 0x2f, 0xfd, 0x04, (21 - 10) << 3}
	size := 100 << 10
	v := uint32(size) << 3 // raw block, not the last
	cut = append(cut, byte(v), byte(v>>8), byte(v>>16))
	cut = hostile.Frame(cut, hostile.Text(hostile.Turn(5, 2)))
	cut = hostile.Frame(cut, hostile.Text(hostile.Turn(10, 3)))
	if err := hostile.Append(path, cut); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(path)
	s, _ := openStore(t, root, Options{BackupDir: t.TempDir()})
	if _, err := scanAll(t, s, "s"); !errors.Is(err, seam.ErrCorrupt) {
		t.Errorf("read: %v, want ErrCorrupt", err)
	}
	if h, err := s.Open(ctx, "s", seam.Write); !errors.Is(err, seam.ErrCorrupt) {
		if err == nil {
			h.Close()
		}
		t.Errorf("write open: %v, want ErrCorrupt", err)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(after, before) {
		t.Errorf("the log changed: %d bytes, was %d", len(after), len(before))
	}
}
