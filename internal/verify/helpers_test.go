package verify

import "github.com/dshctl/dshctl/internal/seam/seamtest"

// The fake handle and event builders are seamtest's.
type fakeHandle = seamtest.Fake

var (
	newFake  = seamtest.NewFake
	ev       = seamtest.Event
	renumber = seamtest.Renumber
)
