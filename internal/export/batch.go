package export

import (
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

// ToDir exports each of ids into its own ZIP in dir, Jobs at a time, and
// returns the results in the order of ids. Files are named FileName(id),
// made unique among ids the way subagent folders are (a second id with the
// same safe name gets a ~2 suffix), so the names depend on ids alone. The
// store is listed once for every session's descendants. A session that
// fails does not stop the others; cancelling ctx stops them all.
func ToDir(ctx context.Context, svc seam.Service, ids []string, dir string, opts DirOptions) []Result {
	results := make([]Result, len(ids))
	names := newNamer()
	for i, id := range ids {
		results[i] = Result{ID: id, Path: filepath.Join(dir, "dsh-session-"+names.name(id)+".zip")}
	}
	var entries []seam.Entry
	if !opts.NoSubagents {
		var err error
		if entries, err = svc.List(ctx); err != nil {
			for i := range results {
				results[i].Err = err
			}
			return results
		}
	}
	jobs := opts.Jobs
	if jobs <= 0 {
		jobs = runtime.GOMAXPROCS(0)
	}
	var mu sync.Mutex // serializes Done
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(jobs, len(ids)) {
		wg.Go(func() {
			for i := range next {
				r := &results[i]
				if err := ctx.Err(); err != nil {
					r.Err = err
				} else {
					var subagents []string
					if !opts.NoSubagents {
						subagents = Descendants(entries, r.ID)
					}
					r.Bytes, r.Err = WriteFile(ctx, r.Path, opts.Force, func(w io.Writer) error {
						var err error
						r.Entries, err = Write(ctx, svc, r.ID, subagents, w, Options{})
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
	for i := range ids {
		next <- i
	}
	close(next)
	wg.Wait()
	return results
}
