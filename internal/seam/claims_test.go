package seam

import (
	"errors"
	"testing"
)

func TestClaims(t *testing.T) {
	var c Claims[*int]
	a, b := new(int), new(int)
	if err := c.Claim("open", "s", a); err != nil {
		t.Fatal(err)
	}
	err := c.Create("s", b)
	var e *Error
	if !errors.Is(err, ErrAlreadyExists) || !errors.As(err, &e) || e.ID != "s" || e.Op != "create" {
		t.Fatalf("second claim: %v", err)
	}
	c.Release("s", b) // not the owner: no effect
	if o := c.Owners(); len(o) != 1 || o[0] != a {
		t.Fatalf("owners after a stranger's release: %v", o)
	}
	if _, ok := c.Pending("s"); ok {
		t.Fatal("an open's claim is pending")
	}
	c.Release("s", a)
	if len(c.Owners()) != 0 {
		t.Fatal("claim kept after release")
	}
	if err := c.Claim("renumber", "s", b); err != nil {
		t.Fatalf("claim after release: %v", err)
	}
	if err := c.Claim("open", "s", a); !errors.Is(err, ErrAlreadyOwned) {
		t.Fatalf("an open of a claimed id: %v", err)
	}
}

// TestClaimsPending: a create is pending from its claim until EndPending
// (its session stored, or its handle closing), and only its own handle
// ends it.
func TestClaimsPending(t *testing.T) {
	var c Claims[*int]
	a, b, o := new(int), new(int), new(int)
	if err := c.Create("a", a); err != nil {
		t.Fatal(err)
	}
	if err := c.Create("b", b); err != nil {
		t.Fatal(err)
	}
	if err := c.Claim("open", "o", o); err != nil {
		t.Fatal(err)
	}
	if h, ok := c.Pending("a"); !ok || h != a {
		t.Fatalf("Pending(a) = %v, %v", h, ok)
	}
	if _, ok := c.Pending("o"); ok {
		t.Fatal("an open is pending")
	}
	if p := c.PendingOwners(); len(p) != 2 || !(p[0] == a && p[1] == b || p[0] == b && p[1] == a) {
		t.Fatalf("PendingOwners = %v", p)
	}
	c.EndPending("a", b) // not its handle: no effect
	if _, ok := c.Pending("a"); !ok {
		t.Fatal("another handle ended a's create")
	}
	c.EndPending("a", a)
	if _, ok := c.Pending("a"); ok {
		t.Fatal("a stored create is still pending")
	}
	if p := c.PendingOwners(); len(p) != 1 || p[0] != b {
		t.Fatalf("PendingOwners after a was stored = %v", p)
	}
	if len(c.Owners()) != 3 {
		t.Fatal("a stored create gave up its claim")
	}
	if err := c.Claim("open", "a", o); !errors.Is(err, ErrAlreadyOwned) {
		t.Fatalf("an open of a stored create's id: %v", err)
	}
	c.Release("b", b)
	if _, ok := c.Pending("b"); ok || len(c.PendingOwners()) != 0 {
		t.Fatal("a released create is still pending")
	}
}

func TestCheckCreate(t *testing.T) {
	yes, no := true, false
	five := int64(5)
	for _, c := range []struct {
		name string
		h    Header
		n    int64
		ok   bool
	}{
		{"v4", Header{Version: 4, ID: "a", CreatedAt: 1, IsSeeded: &no}, 0, true},
		{"v4_seeded", Header{Version: 4, ID: "a", CreatedAt: 1, IsSeeded: &yes}, 3, true},
		{"v4_unseeded_count", Header{Version: 4, ID: "a", CreatedAt: 1, IsSeeded: &no}, 3, false},
		{"v0_seed_length", Header{Version: 0, ID: "a", CreatedAt: 1, SeedLength: &five}, 5, true},
		{"v0_seed_length_differs", Header{Version: 0, ID: "a", CreatedAt: 1, SeedLength: &five}, 4, false},
		{"negative", Header{Version: 4, ID: "a", CreatedAt: 1, IsSeeded: &yes}, -1, false},
		{"bad_header", Header{Version: 4, ID: "", CreatedAt: 1, IsSeeded: &no}, 0, false},
	} {
		err := CheckCreate(c.h, CreateOptions{InheritedEventCount: c.n})
		if c.ok != (err == nil) || (err != nil && !errors.Is(err, ErrInvalid)) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}
