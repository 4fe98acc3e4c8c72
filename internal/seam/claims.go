package seam

import (
	"errors"
	"sync"
)

// Claims is the registry of the session ids a service's write handles own
// in this process, pending creates included: the in-process half of
// single-writer ownership, the backend's cross-process lock being the
// other. The zero value is ready to use.
type Claims[H comparable] struct {
	mu sync.Mutex
	m  map[string]H
}

// Claim registers h as the owner of id. When another handle owns it, it
// fails with kind: ErrAlreadyOwned for an open, ErrAlreadyExists for a
// create.
func (c *Claims[H]) Claim(op, id string, h H, kind error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, held := c.m[id]; held {
		return &Error{Kind: kind, Op: op, ID: id, Pos: NoPos, Err: errors.New("held by another handle of this process")}
	}
	if c.m == nil {
		c.m = map[string]H{}
	}
	c.m[id] = h
	return nil
}

// Release drops h's claim on id; a claim of another handle stays.
func (c *Claims[H]) Release(id string, h H) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if owner, held := c.m[id]; held && owner == h {
		delete(c.m, id)
	}
}

// Owner returns the handle that owns id.
func (c *Claims[H]) Owner(id string) (H, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	h, ok := c.m[id]
	return h, ok
}

// Owners returns every owning handle, in no particular order.
func (c *Claims[H]) Owners() []H {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]H, 0, len(c.m))
	for _, h := range c.m {
		out = append(out, h)
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
