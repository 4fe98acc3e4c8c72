//go:build !unix

package export

const streamFlags = 0

func noReader(error) bool { return false }
