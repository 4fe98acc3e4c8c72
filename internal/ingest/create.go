package ingest

import (
	"context"
	"fmt"
	"strings"

	"github.com/dshctl/dshctl/internal/seam"
)

// Latest as the Version of a header given to Create asks for the newest
// format among the store's sessions.
const Latest = -1

// ShadowError refuses to create ID, a prefix of the stored session
// Stored: the next command naming that prefix would reach the new session
// instead of the old one.
type ShadowError struct {
	ID, Stored string
}

func (e *ShadowError) Error() string {
	return fmt.Sprintf("create %q: the id is a prefix of the stored session %q", e.ID, e.Stored)
}

// Create creates the session h describes in svc as dsh would create it
// (seam.NewHeader completes the header). A Version of Latest takes the
// newest format among the store's readable sessions, or v0 in a store
// without any (the one format every released dsh reads), never newer than
// the store's own limit (seam.FormatLimiter: a schema-14 database holds v0
// only), so that the dsh using the store can read it. An id that is a
// prefix of a stored one is a *ShadowError.
func Create(ctx context.Context, svc seam.Service, h seam.Header) (seam.Handle, error) {
	newest, err := latest(ctx, svc, h.ID)
	if err != nil {
		return nil, err
	}
	if h.Version == Latest {
		h.Version = newest
	}
	return svc.Create(ctx, seam.NewHeader(h), seam.CreateOptions{})
}

// latest returns the version Latest stands for in svc, and a
// *ShadowError when id is a prefix of a stored id.
func latest(ctx context.Context, svc seam.Service, id string) (int, error) {
	entries, err := svc.List(ctx)
	if err != nil {
		return 0, err
	}
	newest := -1
	for _, en := range entries {
		if other := en.Snapshot.Header.ID; other != id && strings.HasPrefix(other, id) {
			return 0, &ShadowError{ID: id, Stored: other}
		}
		if en.Err == nil {
			newest = max(newest, en.Snapshot.Header.Version)
		}
	}
	newest = max(newest, 0)
	if fl, ok := svc.(seam.FormatLimiter); ok {
		newest = min(newest, fl.MaxFormatVersion())
	}
	return newest, nil
}
