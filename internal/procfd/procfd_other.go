//go:build !linux

package procfd

import "context"

// Writers cannot tell on this system: macOS, the BSDs and Windows have no
// /proc to read without cgo (macOS's proc_pidinfo, Windows' Restart
// Manager), so it returns ErrCannotTell.
func Writers(context.Context, ...string) ([]Holder, error) { return nil, ErrCannotTell }
