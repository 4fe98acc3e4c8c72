//go:build !linux && !darwin && !windows

package procfd

import "context"

// Writers cannot tell on this system (the BSDs and the rest): it has no
// /proc that lists descriptors, and no tool dshctl relies on to ask, so
// it returns ErrCannotTell.
func Writers(context.Context, ...string) ([]Holder, error) { return nil, ErrCannotTell }
