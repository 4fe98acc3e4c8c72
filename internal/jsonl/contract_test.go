package jsonl

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/dshctl/dshctl/internal/export"
	"github.com/dshctl/dshctl/internal/jsonl/osfs"
	"github.com/dshctl/dshctl/internal/jsonl/zstdframe"
	"github.com/dshctl/dshctl/internal/seam"
	"github.com/dshctl/dshctl/internal/seam/seamtest"
)

func TestMain(m *testing.M) {
	// A child process of seamtest.HoldInChild: hold the flock on args[0].
	seamtest.RunChild(func(args []string) (func(), error) {
		f, err := osfs.OS{}.OpenFile(args[0], os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			return nil, err
		}
		if err := f.TryLock(true); err != nil {
			f.Close()
			return nil, err
		}
		return func() { f.Close() }, nil
	})
	os.Exit(m.Run())
}

// contractBackend runs the seam contract suite on one encoding.
type contractBackend struct{ enc Encoding }

func (b contractBackend) Versions() []int { return []int{0, 2, 4} }

func (b contractBackend) New(t *testing.T, dir string) seam.Service {
	s, err := Open(dir, Options{Compression: b.enc, BackupDir: t.TempDir(), CreateRoot: true})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func (b contractBackend) WriteLog(t *testing.T, dir string, h seam.Header, records [][]byte) {
	project, err := projectFolder(h.Cwd)
	if err != nil {
		t.Fatal(err)
	}
	seg, err := EncodeSegment(h.ID)
	if err != nil {
		t.Fatal(err)
	}
	header := append(h.AppendJSON(nil), '\n')
	var body []byte
	for _, r := range records {
		body = append(append(body, r...), '\n')
	}
	content := append(header, body...)
	if b.enc == Zstd {
		content = zstdframe.AppendFrame(nil, header)
		if len(body) > 0 {
			content = zstdframe.AppendFrame(content, body)
		}
	}
	writeLog(t, dir, project, seg, LogName(h.Version, b.enc), string(content))
}

// logPath returns the live log of a stored session.
func (b contractBackend) logPath(t *testing.T, dir, id string) string {
	s, err := Open(dir, Options{Compression: b.enc})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	snap, err := s.Stat(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return snap.Location.Path
}

func (b contractBackend) TearTail(t *testing.T, dir, id string) {
	torn := []byte(`{"type":"turn/start","seq":`)
	if b.enc == Zstd {
		torn = zstdframe.AppendFrame(nil, []byte(`{"type":"turn/start","seq":1,"time":1,"data":{}}`+"\n"))
		torn = torn[:len(torn)-3]
	}
	appendFile(t, b.logPath(t, dir, id), torn)
}

func (b contractBackend) HoldLockElsewhere(t *testing.T, dir, id string) func() {
	return seamtest.HoldInChild(t, filepath.Join(filepath.Dir(b.logPath(t, dir, id)), lockName))
}

func TestContract(t *testing.T) {
	for _, enc := range []Encoding{Zstd, None} {
		t.Run(string(enc), func(t *testing.T) { seamtest.Run(t, contractBackend{enc}, seamtest.WithExport(exportSession)) })
	}
}

// exportSession is the export point 22 checks.
func exportSession(ctx context.Context, svc seam.Service, id string, w io.Writer) error {
	_, err := export.Session(ctx, svc, id, w, export.Options{})
	return err
}
