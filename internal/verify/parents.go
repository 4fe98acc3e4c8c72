package verify

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/dshctl/dshctl/internal/seam"
)

// parentCycles says, for each of ids whose parentSession chain through the
// sessions of svc never ends, how it loops: the session is on the loop, or
// its chain runs into one. dsh follows the chain to show a subagent's or a
// fork's ancestry, so a loop is never what its writer meant. The sessions'
// headers come from one listing; a parent the store does not have ends its
// chain. The work is linear in the sessions the chains visit.
func parentCycles(ctx context.Context, svc seam.Service, ids []string) (map[string]string, error) {
	entries, err := svc.List(ctx)
	if err != nil {
		return nil, err
	}
	parent := make(map[string]string, len(entries))
	for _, en := range entries {
		if h := en.Snapshot.Header; en.Err == nil && h.ID != "" && h.ParentSession != "" {
			parent[h.ID] = h.ParentSession
		}
	}
	// The fate of each session whose chain was walked: "" for one whose
	// chain ends, else the loop it is on or runs into, and where it meets
	// it (itself when it is on it).
	type fate struct {
		loop  []string
		meets int // index in loop
	}
	fates := map[string]*fate{}
	ends := &fate{}
	for _, id := range ids {
		var path []string
		at := map[string]int{} // index on the path being walked
		cur := id
		var f *fate
		for f == nil {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			if known, ok := fates[cur]; ok {
				f = known
				break
			}
			if i, ok := at[cur]; ok {
				// Back at cur: the loop is path[i:].
				loop := slices.Clone(path[i:])
				for k, s := range loop {
					fates[s] = &fate{loop: loop, meets: k}
				}
				path = path[:i]
				f = &fate{loop: loop, meets: 0}
				break
			}
			p, ok := parent[cur]
			if !ok {
				f = ends
				break
			}
			at[cur] = len(path)
			path = append(path, cur)
			cur = p
		}
		for _, s := range path {
			fates[s] = f // leads to where the walk stopped
		}
	}
	out := map[string]string{}
	for _, id := range ids {
		switch f := fates[id]; {
		case f == nil || f == ends:
		case f.loop[f.meets] == id:
			out[id] = "its parentSession chain loops: " + loopText(f.loop, f.meets)
		default:
			out[id] = fmt.Sprintf("its parentSession chain runs into a loop at %q: %s", f.loop[f.meets], loopText(f.loop, f.meets))
		}
	}
	return out, nil
}

// loopText is a loop of sessions as the chain goes from its member at
// index i back to it: "a" → "b" → "a". A long loop is shortened to its first
// members and its length, so that a store of one huge loop does not give a
// finding per member as long as the loop.
func loopText(loop []string, i int) string {
	const most = 8
	names := make([]string, 0, min(len(loop), most)+2)
	for k := range min(len(loop), most) {
		names = append(names, fmt.Sprintf("%q", loop[(i+k)%len(loop)]))
	}
	if len(loop) > most {
		names = append(names, fmt.Sprintf("… (%d sessions in all)", len(loop)))
	}
	names = append(names, fmt.Sprintf("%q", loop[i]))
	return strings.Join(names, " → ")
}
