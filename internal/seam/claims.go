package seam

import (
	"errors"
	"sync"
)

// Claims is the registry of the session ids a service's write handles own
// in this process, pending creates included: the in-process half of
// single-writer ownership, the backend's cross-process lock being the
// other. A create's claim is pending until the session is stored (or its
// handle closes): reads see a pending session through Pending. The zero
// value is ready to use.
type Claims[H comparable] struct {
	mu sync.Mutex
	m  map[string]claim[H]
}

type claim[H comparable] struct {
	h       H
	pending bool // a create not stored yet
}

// Claim registers h, a handle of the stored session id (an open for
// writing, a renumber), as its owner. When another handle owns it, it
// fails with ErrAlreadyOwned.
func (c *Claims[H]) Claim(op, id string, h H) error {
	return c.claim(op, id, claim[H]{h: h}, ErrAlreadyOwned)
}

// Create registers h, the handle of a create of id not stored yet, as its
// owner, pending. When another handle owns id, it fails with
// ErrAlreadyExists.
func (c *Claims[H]) Create(id string, h H) error {
	return c.claim("create", id, claim[H]{h: h, pending: true}, ErrAlreadyExists)
}

func (c *Claims[H]) claim(op, id string, cl claim[H], kind error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, held := c.m[id]; held {
		return &Error{Kind: kind, Op: op, ID: id, Pos: NoPos, Err: errors.New("held by another handle of this process")}
	}
	if c.m == nil {
		c.m = map[string]claim[H]{}
	}
	c.m[id] = cl
	return nil
}

// EndPending says that h's create of id is pending no more: it is stored,
// or h is closing. The claim itself stays until Release.
func (c *Claims[H]) EndPending(id string, h H) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cl, held := c.m[id]; held && cl.h == h {
		cl.pending = false
		c.m[id] = cl
	}
}

// Release drops h's claim on id; a claim of another handle stays.
func (c *Claims[H]) Release(id string, h H) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cl, held := c.m[id]; held && cl.h == h {
		delete(c.m, id)
	}
}

// Pending returns the handle of a create of id not stored yet.
func (c *Claims[H]) Pending(id string) (H, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cl, held := c.m[id]
	if !held || !cl.pending {
		var zero H
		return zero, false
	}
	return cl.h, true
}

// PendingOwners returns the handles of every create not stored yet, in no
// particular order.
func (c *Claims[H]) PendingOwners() []H {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []H
	for _, cl := range c.m {
		if cl.pending {
			out = append(out, cl.h)
		}
	}
	return out
}

// Owners returns every owning handle, in no particular order.
func (c *Claims[H]) Owners() []H {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]H, 0, len(c.m))
	for _, cl := range c.m {
		out = append(out, cl.h)
	}
	return out
}

// CheckCreate validates what Create is given, before anything else: the
// header against the rules of its version, and the inherited event count
// against the header (equal to seedLength in v0/v1, 0 for an unseeded
// header, never negative). Errors are ErrInvalid.
func CheckCreate(h Header, opts CreateOptions) error {
	invalid := func(err error) error {
		var e *Error
		if errors.As(err, &e) && e.Err != nil {
			err = e.Err
		}
		return &Error{Kind: ErrInvalid, Op: "create", ID: h.ID, Pos: NoPos, Err: err}
	}
	if err := ValidateHeader(h, ""); err != nil {
		return invalid(err)
	}
	switch n := opts.InheritedEventCount; {
	case h.Version < 2 && h.SeedLength != nil && n != *h.SeedLength:
		return invalid(invalidf("inherited event count %d differs from seedLength %d", n, *h.SeedLength))
	case !h.Seeded() && n != 0:
		return invalid(invalidf("inherited event count %d for an unseeded header", n))
	case n < 0:
		return invalid(invalidf("negative inherited event count"))
	}
	return nil
}
