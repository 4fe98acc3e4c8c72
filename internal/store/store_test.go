package store

import (
	"context"
	"errors"
	"github.com/dshctl/dshctl/internal/ingest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/dshctl/dshctl/internal/fixture"
	"github.com/dshctl/dshctl/internal/inspect"
	"github.com/dshctl/dshctl/internal/seam"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestRequestSpec(t *testing.T) {
	for _, c := range []struct {
		flag string
		env  map[string]string
		want Spec
	}{
		{"/flag", map[string]string{"DSHCTL_STORE": "/e", "DSH_HOME": "/d"}, Spec{"/flag", FromFlag}},
		{"", map[string]string{"DSHCTL_STORE": "/e", "DSH_HOME": "/d"}, Spec{"/e", FromEnv}},
		{"", map[string]string{"DSH_HOME": "/d", "HOME": "/h"}, Spec{"/d/sessions", FromDSHHome}},
		{"", map[string]string{"DSH_HOME": "  ", "HOME": "/h"}, Spec{"/h/.dsh/sessions", FromDefault}},
		{"", map[string]string{"HOME": "/h"}, Spec{"/h/.dsh/sessions", FromDefault}},
	} {
		got, err := Request{Flag: c.flag, Getenv: env(c.env)}.Spec()
		if err != nil || got != c.want {
			t.Errorf("Spec(%q, %v) = %+v, %v; want %+v", c.flag, c.env, got, err, c.want)
		}
	}
	if _, err := (Request{Getenv: env(nil)}).Spec(); !errors.Is(err, ErrNoHome) {
		t.Errorf("Spec without HOME: %v, want ErrNoHome", err)
	}
	got, err := DefaultBackupDir(env(map[string]string{"XDG_STATE_HOME": "/s", "HOME": "/h"}))
	if err != nil || got != "/s/dshctl/backups" {
		t.Errorf("DefaultBackupDir = %q, %v", got, err)
	}
	got, err = DefaultBackupDir(env(map[string]string{"HOME": "/h"}))
	if err != nil || got != "/h/.local/state/dshctl/backups" {
		t.Errorf("DefaultBackupDir = %q, %v", got, err)
	}
}

func TestLocate(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "sessions.db")
	if err := os.WriteFile(db, append([]byte("SQLite format 3\x00"), make([]byte, 84)...), 0o600); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(other, []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "nowhere")
	empty := t.TempDir()
	for _, c := range []struct {
		path   string
		create bool
		want   Location
		err    error
	}{
		{empty, false, Location{Kind: JSONL, Path: empty}, nil},
		{dir, false, Location{}, ErrNotStore},
		{"sqlite:" + missing, false, Location{Kind: SQLite, Path: missing, Missing: true}, nil},
		{"sqlite:" + db, false, Location{Kind: SQLite, Path: db}, nil},
		{db, false, Location{Kind: SQLite, Path: db}, nil},
		{other, false, Location{}, ErrNotDir},
		{missing, false, Location{}, ErrNotExist},
		{missing, true, Location{Kind: JSONL, Path: missing, Missing: true}, nil},
	} {
		got, err := Locate(Spec{c.path, FromFlag}, c.create)
		if got != c.want || !errors.Is(err, c.err) || (c.err == nil) != (err == nil) {
			t.Errorf("Locate(%s, create %v) = %+v, %v; want %+v, %v", c.path, c.create, got, err, c.want, c.err)
		}
		var se *Error
		if c.err != nil && (!errors.As(err, &se) || se.Path != c.path || se.Spec.From != FromFlag) {
			t.Errorf("Locate(%s): error %#v does not say which store", c.path, err)
		}
	}
	// A SQLite file that is no dsh store is refused by the SQLite backend.
	if _, err := Open(Spec{db, FromFlag}, Options{}); err == nil || errors.Is(err, ErrNotDir) {
		t.Errorf("Open of a SQLite file that is no dsh store: %v", err)
	}
	if _, err := Open(Spec{"sqlite:" + missing, FromFlag}, Options{}); !errors.Is(err, ErrNotExist) {
		t.Errorf("Open of a missing sqlite:PATH: %v, want ErrNotExist", err)
	}
}

// TestLocateHome checks how a dsh home that holds sessions.sqlite is read:
// its JSONL root when it has one, noting the database, else the database,
// noting the inference; named by a flag or found as dsh's default.
func TestLocateHome(t *testing.T) {
	sqliteOnly, both, jsonlOnly := t.TempDir(), t.TempDir(), t.TempDir()
	for _, home := range []string{sqliteOnly, both} {
		if err := os.WriteFile(filepath.Join(home, SQLiteName), append([]byte("SQLite format 3\x00"), make([]byte, 84)...), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, home := range []string{both, jsonlOnly} {
		if err := os.Mkdir(filepath.Join(home, "sessions"), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		spec Spec
		kind Kind
		path string
		note string
	}{
		{Spec{sqliteOnly, FromFlag}, SQLite, filepath.Join(sqliteOnly, SQLiteName), "using the SQLite store"},
		{Spec{filepath.Join(sqliteOnly, "sessions"), FromDSHHome}, SQLite, filepath.Join(sqliteOnly, SQLiteName), "using the SQLite store"},
		{Spec{both, FromFlag}, JSONL, filepath.Join(both, "sessions"), "also holds the SQLite store"},
		{Spec{filepath.Join(both, "sessions"), FromDefault}, JSONL, filepath.Join(both, "sessions"), "--store sqlite:" + filepath.Join(both, SQLiteName)},
		{Spec{filepath.Join(both, "sessions"), FromFlag}, JSONL, filepath.Join(both, "sessions"), ""},
		{Spec{jsonlOnly, FromEnv}, JSONL, filepath.Join(jsonlOnly, "sessions"), "using the JSONL store"},
		{Spec{filepath.Join(jsonlOnly, "sessions"), FromDefault}, JSONL, filepath.Join(jsonlOnly, "sessions"), ""},
	} {
		loc, err := Locate(c.spec, false)
		if err != nil || loc.Kind != c.kind || loc.Path != c.path || !strings.Contains(loc.Note, c.note) || (c.note == "") != (loc.Note == "") {
			t.Errorf("Locate(%+v) = %+v, %v; want kind %v at %s, a note with %q", c.spec, loc, err, c.kind, c.path, c.note)
		}
	}
}

// TestLocateRecognises: a folder is named by what it holds, whatever the
// user took it for.
func TestLocateRecognises(t *testing.T) {
	root := newStore(t, 4, "s1")
	home := filepath.Dir(root) // newStore's root is <tmp>/store
	if err := os.Rename(root, filepath.Join(home, "sessions")); err != nil {
		t.Fatal(err)
	}
	root = filepath.Join(home, "sessions")
	project := filepath.Join(root, "--w--")
	session := filepath.Join(project, "s1")
	log := filepath.Join(session, "session.v4.jsonl.zstd")
	junk := t.TempDir()
	if err := os.WriteFile(filepath.Join(junk, "notes.txt"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(junk, "src"), 0o700); err != nil {
		t.Fatal(err)
	}
	empty := t.TempDir()
	for _, c := range []struct {
		path      string
		want      Location
		err       error
		store, id string
	}{
		{root, Location{Kind: JSONL, Path: root}, nil, "", ""},
		{empty, Location{Kind: JSONL, Path: empty}, nil, "", ""},
		{home, Location{Kind: JSONL, Path: root, Note: "using the JSONL store " + root + ", found in " + home}, nil, "", ""},
		{project, Location{}, ErrProjectFolder, root, ""},
		{session, Location{}, ErrSessionFolder, root, "s1"},
		{log, Location{}, ErrSessionFolder, root, "s1"},
		{junk, Location{}, ErrNotStore, "", ""},
	} {
		got, err := Locate(Spec{c.path, FromFlag}, true)
		if got != c.want || !errors.Is(err, c.err) || (c.err == nil) != (err == nil) {
			t.Errorf("Locate(%s) = %+v, %v; want %+v, %v", c.path, got, err, c.want, c.err)
			continue
		}
		var se *Error
		if c.err != nil && (!errors.As(err, &se) || se.Path != c.path || se.Store != c.store || se.ID != c.id || se.LogFile != (c.path == log)) {
			t.Errorf("Locate(%s): error %#v, want store %q, id %q", c.path, err, c.store, c.id)
		}
	}
	var note string
	svc, err := Open(Spec{home, FromFlag}, Options{Note: func(msg string) { note = msg }})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	if !strings.Contains(note, root) {
		t.Errorf("the note %q does not name the home's store", note)
	}
	if entries, err := svc.List(context.Background()); err != nil || len(entries) != 1 {
		t.Errorf("the home's store lists %d sessions, %v", len(entries), err)
	}
}

// newStore creates a JSONL store in a temp dir holding the given ids, each
// a session of one turn in format version v.
func newStore(t *testing.T, v int, ids ...string) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "store")
	svc, err := Open(Spec{root, FromFlag}, Options{Create: true, BackupDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	for _, id := range ids {
		res, err := ingest.Append(context.Background(), svc, id, ingest.Options{
			Create: &seam.Header{Version: v, CreatedAt: 1785331618000, Cwd: "/w"}, Input: strings.NewReader(turn), Name: "turn", AssignSeq: true, Now: 1})
		if err != nil || !res.Created || res.Appended != 2 {
			t.Fatalf("create %s: %+v, %v", id, res, err)
		}
	}
	return root
}

const turn = `{"type":"turn/start","time":1785400000000,"data":{"turn":1}}
{"type":"turn/end","time":1785400000000,"data":{"turn":1,"reason":{"kind":"completed"}}}
`

func TestOpenSession(t *testing.T) {
	ctx := context.Background()
	root := newStore(t, 4, "session-4f1c2a9e", "session-4f1d0000", "task:review/01 ü~x")
	r := Request{Flag: root, Getenv: env(nil)}
	for arg, want := range map[string]string{
		"session-4f1c2a9e": "session-4f1c2a9e",
		"session-4f1c":     "session-4f1c2a9e",
		"task:":            "task:review/01 ü~x",
		filepath.Join(root, "--w--", "task~003Areview~002F01~0020~00FC~007Ex"):    "task:review/01 ü~x",
		filepath.Join(root, "--w--", "session-4f1d0000", "session.v4.jsonl.zstd"): "session-4f1d0000",
	} {
		s, err := OpenSession(ctx, r, arg, Options{})
		if err != nil {
			t.Errorf("OpenSession(%q): %v", arg, err)
			continue
		}
		if s.ID != want {
			t.Errorf("OpenSession(%q) = %q, want %q", arg, s.ID, want)
		}
		s.Close()
	}
	// A path names its store, whatever the environment says; a --store
	// naming another is an error, since which was meant cannot be told.
	path := filepath.Join(root, "--w--", "session-4f1c2a9e")
	elsewhere := filepath.Join(t.TempDir(), "none")
	if s, err := OpenSession(ctx, Request{Getenv: env(map[string]string{"DSHCTL_STORE": elsewhere})}, path, Options{}); err != nil || s.ID != "session-4f1c2a9e" {
		t.Errorf("OpenSession by path with another store in DSHCTL_STORE: %v", err)
	} else {
		s.Close()
	}
	var other *OtherStoreError
	if _, err := OpenSession(ctx, Request{Flag: elsewhere, Getenv: env(nil)}, path, Options{}); !errors.As(err, &other) || other.Root != root {
		t.Errorf("OpenSession by path with another --store: %v, want an *OtherStoreError", err)
	}
	if s, err := OpenSession(ctx, Request{Flag: root + string(filepath.Separator), Getenv: env(nil)}, path, Options{}); err != nil {
		t.Errorf("OpenSession by path with its own --store: %v", err)
	} else {
		s.Close()
	}
	var amb *AmbiguousError
	if _, err := OpenSession(ctx, r, "session-4f1", Options{}); !errors.As(err, &amb) ||
		!slices.Equal(amb.Matches, []string{"session-4f1c2a9e", "session-4f1d0000"}) {
		t.Errorf("ambiguous prefix: %v", err)
	}
	if _, err := OpenSession(ctx, r, "nosuch", Options{}); !errors.Is(err, seam.ErrNotFound) {
		t.Errorf("unknown id: %v, want ErrNotFound", err)
	}
	if _, err := OpenSession(ctx, r, "", Options{}); !errors.Is(err, ErrEmptyArg) {
		t.Errorf("empty argument: %v, want ErrEmptyArg", err)
	}
	if _, err := OpenSession(ctx, Request{Flag: filepath.Join(root, "nowhere"), Getenv: env(nil)}, "x", Options{}); !errors.Is(err, ErrNotExist) {
		t.Errorf("missing store: %v, want ErrNotExist", err)
	}
}

// TestOpenSessions: several arguments share their store's Service, a
// session named twice (by id, prefix or path) is there once, stores are
// grouped in the order first named, and an argument that names nothing
// fails with the sessions opened so far returned for closing.
func TestOpenSessions(t *testing.T) {
	ctx := context.Background()
	root := newStore(t, 4, "session-a", "session-b")
	other := newStore(t, 4, "session-a")
	r := Request{Getenv: env(map[string]string{"DSHCTL_STORE": root})}
	ss, err := OpenSessions(ctx, r, []string{"session-b", filepath.Join(other, "--w--", "session-a"), "session-a",
		filepath.Join(root, "--w--", "session-b"), "session-a"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range ss.Sessions {
		got = append(got, s.ID)
	}
	if !slices.Equal(got, []string{"session-b", "session-a", "session-a"}) {
		t.Fatalf("sessions %q", got)
	}
	groups := ss.Groups()
	if len(groups) != 2 || !slices.Equal(groups[0].IDs, []string{"session-b", "session-a"}) || !slices.Equal(groups[1].IDs, []string{"session-a"}) ||
		groups[0].Service != ss.Sessions[0].Service || groups[1].Service != ss.Sessions[1].Service {
		t.Fatalf("groups %+v", groups)
	}
	if err := ss.Close(); err != nil {
		t.Fatal(err)
	}

	ss, err = OpenSessions(ctx, r, nil, Options{})
	if err != nil || len(ss.Sessions) != 0 || ss.Whole == nil || len(ss.Groups()) != 1 || ss.Groups()[0].IDs != nil {
		t.Fatalf("no arguments, the whole store: %+v, %v", ss, err)
	}
	ss.Close()

	ss, err = OpenSessions(ctx, r, []string{"session-a", "nosuch"}, Options{})
	if !errors.Is(err, seam.ErrNotFound) || len(ss.Sessions) != 1 {
		t.Fatalf("unknown id: %+v, %v", ss, err)
	}
	ss.Close()
	if err := (*Sessions)(nil).Close(); err != nil {
		t.Fatal(err)
	}
}

// TestComplete: the sessions whose ids start with the word, at most max,
// with their cwd.
func TestComplete(t *testing.T) {
	root := newStore(t, 4, "session-a1", "session-a2", "other")
	r := Request{Flag: root, Getenv: env(nil)}
	got, err := Complete(context.Background(), r, "session-a", 10, Options{})
	if err != nil || len(got) != 2 || got[0].Cwd != "/w" || got[0].Unreadable {
		t.Fatalf("complete: %+v, %v", got, err)
	}
	ids := []string{got[0].ID, got[1].ID}
	slices.Sort(ids)
	if !slices.Equal(ids, []string{"session-a1", "session-a2"}) {
		t.Errorf("ids %q", ids)
	}
	if got, _ := Complete(context.Background(), r, "", 2, Options{}); len(got) != 2 {
		t.Errorf("max 2: %+v", got)
	}
	if _, err := Complete(context.Background(), Request{Flag: filepath.Join(root, "none"), Getenv: env(nil)}, "", 2, Options{}); !errors.Is(err, ErrNotExist) {
		t.Errorf("missing store: %v", err)
	}
}

// TestOpenTarget: without create, the session arg names; with it, arg is
// the id as given, in the store asked for, made if missing.
func TestOpenTarget(t *testing.T) {
	ctx := context.Background()
	root := newStore(t, 4, "session-a1")
	r := Request{Flag: root, Getenv: env(nil)}
	s, err := OpenTarget(ctx, r, "session-a", false, Options{})
	if err != nil || s.ID != "session-a1" {
		t.Fatalf("resolve: %+v, %v", s, err)
	}
	s.Close()
	if _, err := OpenTarget(ctx, r, "new", false, Options{}); !errors.Is(err, seam.ErrNotFound) {
		t.Fatalf("unknown without create: %v", err)
	}
	fresh := Request{Flag: filepath.Join(t.TempDir(), "made"), Getenv: env(nil)}
	s, err = OpenTarget(ctx, fresh, "session-a", true, Options{Create: true})
	if err != nil || s.ID != "session-a" {
		t.Fatalf("create: %+v, %v", s, err)
	}
	s.Close()

}

func TestSourceString(t *testing.T) {
	for s, want := range map[Source]string{FromFlag: "--store", FromEnv: "DSHCTL_STORE", FromDSHHome: "DSH_HOME",
		FromDefault: "default", FromPath: "path", 9: "Source(9)"} {
		if got := s.String(); got != want {
			t.Errorf("%d: %q, want %q", int(s), got, want)
		}
	}
}

func TestCompressionOnlyForAnEmptyRoot(t *testing.T) {
	root := newStore(t, 4, "s")
	if _, err := Open(Spec{root, FromFlag}, Options{Compression: "none"}); !errors.Is(err, ErrNotEmpty) {
		t.Errorf("compression for a root with sessions: %v, want ErrNotEmpty", err)
	}
	// The root's own encoding may be named: it changes nothing.
	svc, err := Open(Spec{root, FromFlag}, Options{Compression: "zstd"})
	if err != nil {
		t.Fatalf("the root's own compression: %v", err)
	}
	svc.Close()
	svc, err = Open(Spec{t.TempDir(), FromFlag}, Options{Compression: "none"})
	if err != nil {
		t.Fatalf("compression for an empty root: %v", err)
	}
	svc.Close()
}

// TestListBothPaths: inspect.List gives the same rows whether the service
// opens sessions in its listing pass (seam.OpenLister) or not.
func TestListBothPaths(t *testing.T) {
	ctx := context.Background()
	for _, dir := range []string{"jsonl-zstd", "jsonl-none", "damaged/zstd-header-frame-not-single-line", "damaged/mixed-encoding"} {
		t.Run(dir, func(t *testing.T) {
			svc, err := Open(Spec{fixture.Path(t, "dsh-0.1.0", dir), FromFlag}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer svc.Close()
			if _, ok := svc.(seam.OpenLister); !ok {
				t.Fatal("the JSONL store is not an OpenLister")
			}
			var total int
			var steps atomic.Int64 // steps come from several goroutines
			opened, err := inspect.List(ctx, svc, inspect.ListOptions{Progress: func(n int) func() {
				total = n
				return func() { steps.Add(1) }
			}})
			if n := int(steps.Load()); err != nil || len(opened) == 0 || n != len(opened) || total < n {
				t.Fatalf("List via ListOpen: %d rows, %d steps of %d, %v", len(opened), n, total, err)
			}
			plain, err := inspect.List(ctx, struct{ seam.Service }{svc}, inspect.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			order := func(rows []inspect.Session) []*inspect.Session {
				out := make([]*inspect.Session, len(rows))
				for i := range rows {
					out[i] = &rows[i]
				}
				inspect.SortRows(out, "created")
				return out
			}
			a, b := order(opened), order(plain)
			if !reflect.DeepEqual(a, b) {
				for i := range a {
					if !reflect.DeepEqual(a[i], b[i]) {
						t.Fatalf("row %d differs:\nListOpen %+v\nList     %+v", i, *a[i], *b[i])
					}
				}
				t.Fatalf("%d rows vs %d", len(a), len(b))
			}
		})
	}
}

// TestPrefixOfUnreadableSession: a prefix naming a session that cannot be
// read resolves to it, so that the command's own operation reports the
// problem (and labels it), not the listing that resolved the prefix.
func TestPrefixOfUnreadableSession(t *testing.T) {
	ctx := context.Background()
	root := filepath.Join(t.TempDir(), "root")
	if err := os.CopyFS(root, os.DirFS(fixture.Path(t, "dsh-0.1.0/damaged/zstd-header-frame-not-single-line"))); err != nil {
		t.Fatal(err)
	}
	s, err := OpenSession(ctx, Request{Flag: root, Getenv: env(nil)}, "session-4f", Options{})
	if err != nil {
		t.Fatalf("OpenSession by prefix: %v", err)
	}
	defer s.Close()
	_, err = s.Service.Stat(ctx, s.ID)
	if err == nil || !strings.HasPrefix(err.Error(), `stat "session-4f1c`) {
		t.Fatalf("stat of the unreadable session: %v", err)
	}
}
