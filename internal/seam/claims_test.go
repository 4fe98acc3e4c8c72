package seam

import (
	"errors"
	"testing"
)

func TestClaims(t *testing.T) {
	var c Claims[*int]
	a, b := new(int), new(int)
	if err := c.Claim("open", "s", a, ErrAlreadyOwned); err != nil {
		t.Fatal(err)
	}
	err := c.Claim("create", "s", b, ErrAlreadyExists)
	var e *Error
	if !errors.Is(err, ErrAlreadyExists) || !errors.As(err, &e) || e.ID != "s" || e.Op != "create" {
		t.Fatalf("second claim: %v", err)
	}
	c.Release("s", b) // not the owner: no effect
	if h, ok := c.Owner("s"); !ok || h != a || len(c.Owners()) != 1 {
		t.Fatalf("owner after a stranger's release: %v %v", h, ok)
	}
	c.Release("s", a)
	if _, ok := c.Owner("s"); ok || len(c.Owners()) != 0 {
		t.Fatal("claim kept after release")
	}
	if err := c.Claim("open", "s", b, ErrAlreadyOwned); err != nil {
		t.Fatalf("claim after release: %v", err)
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
