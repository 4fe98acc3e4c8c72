package jsonl

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/dshctl/dshctl/internal/seam"
)

// listOpenResult is what ListOpen gave for one entry.
type listOpenResult struct {
	entry   seam.Entry
	events  []seam.Event // a full read of the handle
	openErr string
}

func listOpenAll(t *testing.T, s *Store, during func(seam.Entry, seam.Handle)) map[string]listOpenResult {
	return listOpenWith(t, s, false, during)
}

// listOpenWith is listOpenAll through ListOpenOrdered when ordered, which
// is asked to visit the entries in reverse path order: it checks that the
// entries given to order are the ones visited, with the same headers, and
// that each position is visited once.
func listOpenWith(t *testing.T, s *Store, ordered bool, during func(seam.Entry, seam.Handle)) map[string]listOpenResult {
	t.Helper()
	ctx := context.Background()
	var mu sync.Mutex
	out := map[string]listOpenResult{}
	visit := func(en seam.Entry, h seam.Handle, err error) {
		r := listOpenResult{entry: en}
		if err != nil {
			r.openErr = err.Error()
		}
		if (h != nil) != (en.Err == nil && err == nil) {
			t.Errorf("%s: handle %v with Err %v and open error %v", en.Snapshot.Location.Path, h != nil, en.Err, err)
		}
		if h != nil {
			if during != nil {
				during(en, h)
			}
			evs, rerr := h.Read(ctx, 0, -1)
			if rerr != nil {
				t.Errorf("%s: read: %v", en.Snapshot.Header.ID, rerr)
			}
			r.events = evs
		}
		mu.Lock()
		defer mu.Unlock()
		key := en.Snapshot.Location.Path
		if _, dup := out[key]; dup {
			t.Errorf("%s visited twice", key)
		}
		out[key] = r
	}
	if !ordered {
		if err := s.ListOpen(ctx, nil, visit); err != nil {
			t.Fatal(err)
		}
		return out
	}
	var heads []seam.Entry
	var perm []int
	order := func(hs []seam.Entry) []int {
		heads = hs
		for i := range hs {
			perm = append(perm, i)
		}
		sort.Slice(perm, func(a, b int) bool { return hs[perm[a]].Snapshot.Location.Path > hs[perm[b]].Snapshot.Location.Path })
		return perm
	}
	visited := map[int]bool{}
	err := s.ListOpenOrdered(ctx, order, func(i int, en seam.Entry, h seam.Handle, err error) {
		mu.Lock()
		if visited[i] || i < 0 || i >= len(perm) {
			t.Errorf("position %d visited twice or out of range", i)
		}
		visited[i] = true
		head := heads[perm[i]]
		mu.Unlock()
		if head.Snapshot.Location.Path != en.Snapshot.Location.Path {
			t.Errorf("position %d: visited %s, ordered %s", i, en.Snapshot.Location.Path, head.Snapshot.Location.Path)
		}
		if head.Err == nil && en.Err == nil && !reflect.DeepEqual(head.Snapshot.Header, en.Snapshot.Header) {
			t.Errorf("%s: header %+v, visited with %+v", en.Snapshot.Location.Path, head.Snapshot.Header, en.Snapshot.Header)
		}
		visit(en, h, err)
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(visited) != len(heads) {
		t.Errorf("visited %d of %d entries", len(visited), len(heads))
	}
	return out
}

// TestListOpenMatchesListAndOpen checks that ListOpen and ListOpenOrdered
// visit the entries List returns, with handles that read what Open's
// handles read, and the errors Open reports.
func TestListOpenMatchesListAndOpen(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		enc     Encoding
		ordered bool
	}{{Zstd, false}, {None, false}, {Zstd, true}, {None, true}} {
		enc := c.enc
		t.Run(fmt.Sprintf("%s/ordered=%v", enc, c.ordered), func(t *testing.T) {
			root, s := newSessionStore(t, enc, 10)
			appendElsewhere(t, root, enc, "s", 5)
			name := "session.jsonl"
			if enc == Zstd {
				name += ".zstd"
			}
			o, _ := openStore(t, root, Options{Compression: enc, BackupDir: t.TempDir()})
			for i := range 3 {
				id := fmt.Sprintf("t%d", i)
				h, err := o.Create(ctx, seam.Header{ID: id, Version: 0, CreatedAt: 1, Cwd: "/p"}, seam.CreateOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if err := h.Append(ctx, seqEvents(0, int64(3*i+1))); err != nil {
					t.Fatal(err)
				}
				h.Close()
			}
			if enc == None {
				writeLog(t, root, "--p--", "dup", name, headerFor("dup"))
				writeLog(t, root, "--q--", "dup", name, headerFor("dup"))
				writeLog(t, root, "--p--", "bad", name, "{\"nope\":1}\n")
				// Ids two project folders name, one of them a folder
				// without a log: no duplicates, one read with a handle,
				// the other unreadable.
				writeLog(t, root, "--p--", "solo", name, headerFor("solo")+strings.Join(fuzzLines, ""))
				writeLog(t, root, "--p--", "solobad", name, "{\"nope\":1}\n")
				for _, id := range []string{"solo", "solobad"} {
					if err := os.MkdirAll(filepath.Join(root, "--q--", id), 0o755); err != nil {
						t.Fatal(err)
					}
				}
			}
			pend, err := s.Create(ctx, seam.Header{ID: "pending", Version: 0, CreatedAt: 2, Cwd: "/p"}, seam.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer pend.Close()

			got := listOpenWith(t, s, c.ordered, nil)
			entries, err := s.List(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(entries) {
				t.Fatalf("ListOpen visited %d entries, List returned %d", len(got), len(entries))
			}
			paths := make([]string, 0, len(entries))
			for _, en := range entries {
				key := en.Snapshot.Location.Path
				paths = append(paths, key)
				r, ok := got[key]
				if !ok {
					t.Fatalf("%s not visited", key)
				}
				if fmt.Sprint(r.entry.Err) != fmt.Sprint(en.Err) {
					t.Errorf("%s: Err %v, List says %v", key, r.entry.Err, en.Err)
				}
				if !reflect.DeepEqual(r.entry.Snapshot, en.Snapshot) {
					t.Errorf("%s: snapshot %+v, List says %+v", key, r.entry.Snapshot, en.Snapshot)
				}
				if en.Err != nil {
					continue
				}
				h, err := s.Open(ctx, en.Snapshot.Header.ID, seam.Read)
				if err != nil {
					if r.openErr != err.Error() {
						t.Errorf("%s: open error %q, Open says %v", key, r.openErr, err)
					}
					continue
				}
				want, err := h.Read(ctx, 0, -1)
				h.Close()
				if err != nil {
					t.Fatal(err)
				}
				if len(want) == 0 {
					want = nil
				}
				if len(r.events) == 0 {
					r.events = nil
				}
				if !reflect.DeepEqual(r.events, want) {
					t.Errorf("%s: handle read %d events, Open's %d", key, len(r.events), len(want))
				}
			}
			if !sort.StringsAreSorted(paths) {
				t.Errorf("List not in path order")
			}
		})
	}
}

// TestListOpenFreshness checks that a read of a ListOpen handle started
// after an Append returned sees it, in both directions.
func TestListOpenFreshness(t *testing.T) {
	ctx := context.Background()
	for _, enc := range []Encoding{Zstd, None} {
		t.Run(string(enc), func(t *testing.T) {
			root, s := newSessionStore(t, enc, 10)
			seen := 0
			listOpenAll(t, s, func(en seam.Entry, h seam.Handle) {
				seen++
				appendElsewhere(t, root, enc, "s", 4)
				var last int64 = -1
				for e, err := range h.Scan(ctx, seam.ScanOptions{Reverse: true}) {
					if err != nil {
						t.Fatal(err)
					}
					last = e.Seq
					break
				}
				if last != 13 {
					t.Errorf("reverse scan after the append starts at seq %d, want 13", last)
				}
			})
			if seen != 1 {
				t.Fatalf("visited %d sessions", seen)
			}
		})
	}
}
