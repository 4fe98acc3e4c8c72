package export

import (
	"cmp"
	"context"
	"io"
	"path/filepath"
	"runtime"
	"sync"

	"github.com/dshctl/dshctl/internal/seam"
)

// DirOptions configure ToDir.
type DirOptions struct {
	Options
	// Force replaces existing files.
	Force bool
	// Jobs is how many sessions are exported at once; 0 means one per CPU.
	Jobs int
	// Done, when set, is called once per session as it finishes, one call
	// at a time.
	Done func(Result)
}

// Source is a session to export and the store that holds it.
type Source struct {
	Service seam.Service
	ID      string
}

// CheckDir is CheckPath of the folder dir for each store that sources come
// from, once per store: an export into dir must not write inside any.
func CheckDir(dir string, sources []Source) error {
	checked := map[seam.Service]bool{}
	for _, src := range sources {
		if !checked[src.Service] {
			checked[src.Service] = true
			if _, err := CheckPath(dir, src.Service); err != nil {
				return err
			}
		}
	}
	return nil
}

// Result says what the export of one session to a file did.
type Result struct {
	ID   string
	Path string
	// Bytes is the size of the ZIP.
	Bytes   int64
	Entries []Entry
	// Err is why the session was not exported; nothing is left at Path
	// then.
	Err error
}

// ToDir exports each of sessions into its own ZIP in dir, Jobs at a time,
// and returns the results in the order of sessions. Files are named
// FileName(id), made unique among the sessions the way subagent folders are
// (a second id with the same safe name gets a ~2 suffix), so the names
// depend on the ids alone. Each store is listed and indexed once for the
// descendants of all its sessions. A session that fails does not stop the others;
// cancelling ctx stops them all.
func ToDir(ctx context.Context, sessions []Source, dir string, opts DirOptions) []Result {
	results := make([]Result, len(sessions))
	names := newFileNamer()
	for i, s := range sessions {
		results[i] = Result{ID: s.ID, Path: filepath.Join(dir, "dsh-session-"+names.name(s.ID)+".zip")}
	}
	trees := map[seam.Service]*Tree{}
	listErr := map[seam.Service]error{}
	if !opts.NoSubagents {
		for _, s := range sessions {
			if _, ok := trees[s.Service]; !ok {
				entries, err := s.Service.List(ctx)
				trees[s.Service], listErr[s.Service] = NewTree(entries), err
			}
		}
	}
	jobs := opts.Jobs
	if jobs <= 0 {
		jobs = runtime.GOMAXPROCS(0)
	}
	var mu sync.Mutex // serializes Done
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(jobs, len(sessions)) {
		wg.Go(func() {
			for i := range next {
				r, svc := &results[i], sessions[i].Service
				if err := cmp.Or(ctx.Err(), listErr[svc]); err != nil {
					r.Err = err
				} else {
					var subagents []string
					if !opts.NoSubagents {
						subagents = trees[svc].Descendants(r.ID)
					}
					r.Bytes, r.Err = WriteFile(ctx, r.Path, WriteOptions{Force: opts.Force}, svc, func(w io.Writer) error {
						var err error
						r.Entries, err = writeZip(ctx, svc, r.ID, subagents, w, nil)
						return err
					})
					if r.Err != nil {
						r.Entries = nil
					}
				}
				if opts.Done != nil {
					mu.Lock()
					opts.Done(*r)
					mu.Unlock()
				}
			}
		})
	}
	for i := range sessions {
		next <- i
	}
	close(next)
	wg.Wait()
	return results
}
