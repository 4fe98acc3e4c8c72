package seam

import "strings"

// SafeName returns id with every UTF-16 unit outside [A-Za-z0-9_-]
// replaced by '_' (as dsh's JavaScript does), for file names outside the
// store (backups, exports), whatever backend holds the session.
func SafeName(id string) string {
	var b strings.Builder
	for _, r := range id {
		switch {
		case r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == '-':
			b.WriteRune(r)
		case r > 0xFFFF: // a surrogate pair: two units
			b.WriteString("__")
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}
