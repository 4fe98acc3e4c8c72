package export

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
)

// maxSafeLen bounds a name made from an id, so that the file name of an
// export (prefix, name, dedup suffix, ".zip") and a subagent's folder stay
// under the 255 bytes most file systems allow in one path element.
const maxSafeLen = 200

// SafeName returns id with every UTF-16 unit outside [A-Za-z0-9_-]
// replaced by '_', as dsh's JavaScript writes file names: the result is
// plain ASCII, holds no '.', '/', '\' or ':', and cannot name a parent
// folder or an absolute path whatever the id holds. An id whose name would
// pass maxSafeLen bytes is cut and ends in '~' and a hash of the whole id,
// so that long ids sharing a prefix keep distinct names.
func SafeName(id string) string {
	var b strings.Builder
	b.Grow(len(id))
	for _, r := range id {
		switch {
		case r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == '-':
			b.WriteRune(r)
		case r > 0xFFFF: // a surrogate pair in UTF-16: two units
			b.WriteString("__")
		default:
			b.WriteByte('_')
		}
	}
	s := b.String()
	if len(s) > maxSafeLen {
		sum := sha256.Sum256([]byte(id))
		s = s[:maxSafeLen-17] + "~" + hex.EncodeToString(sum[:8])
	}
	return s
}

// FileName is the default file name of the export of session id:
// dsh-session-<SafeName(id)>.zip.
func FileName(id string) string { return "dsh-session-" + SafeName(id) + ".zip" }

// LogName is the name of a format-version-v log inside an export, the name
// dsh gives that generation on disk without compression: session.jsonl for
// v0, session.v<N>.jsonl for later formats.
func LogName(v int) string {
	if v == 0 {
		return "session.jsonl"
	}
	return "session.v" + strconv.Itoa(v) + ".jsonl"
}

// subagentsDir is the folder of an export that holds the descendant
// sessions, one folder each.
const subagentsDir = "subagents/"

// namer hands out names that are unique within one set (the folders of
// subagents/, the files of an export directory). The first id to ask for a
// name gets its SafeName; a later id whose SafeName is taken gets
// SafeName~2, ~3, …: '~' never occurs in a SafeName except before a hash,
// so the suffix cannot make a name another id would get plainly.
type namer struct {
	used map[string]bool
	// prefixed: the names get a prefix (dsh-session-…), which no Windows
	// device name has, so they need no suffix for one.
	prefixed bool
}

func newNamer() *namer { return &namer{used: map[string]bool{}} }

// newFileNamer names the files of an export directory.
func newFileNamer() *namer { return &namer{used: map[string]bool{}, prefixed: true} }

// name returns the unique name of id. Names compare case-insensitively, so
// that two ids never share a folder on a case-insensitive file system
// (macOS, Windows), and a bare Windows device name (CON, NUL, COM1, …)
// gets a suffix too.
func (n *namer) name(id string) string {
	base := SafeName(id)
	if base == "" {
		base = "_"
	}
	if !n.prefixed && reservedOnWindows(base) {
		base += "~"
	}
	name := base
	for k := 2; n.used[strings.ToLower(name)]; k++ {
		name = base + "~" + strconv.Itoa(k)
	}
	n.used[strings.ToLower(name)] = true
	return name
}

// reservedOnWindows reports whether name is a device name Windows will not
// create as a file or folder. SafeName leaves no dot, so only bare names
// matter.
func reservedOnWindows(name string) bool {
	switch strings.ToUpper(name) {
	case "CON", "PRN", "AUX", "NUL":
		return true
	}
	if len(name) == 4 {
		u := strings.ToUpper(name)
		return (u[:3] == "COM" || u[:3] == "LPT") && u[3] >= '0' && u[3] <= '9'
	}
	return false
}
