package jsonl

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/dshctl/dshctl/internal/seam"
)

// NoCwdFolder is the project folder of sessions whose header has no cwd.
const NoCwdFolder = "_no-cwd"

// lockName is the cross-process write lock file of a session folder.
const lockName = "session.lock"

// maxProjectKey is the length dsh cuts a project key to, in UTF-16 units.
const maxProjectKey = 251

// ProjectKey returns the project folder name for cwd, "--<key>--", the way
// dsh derives it: separators collapse to '-', other units outside
// [A-Za-z0-9._-] become ~XXXX. The key is lossy; session ids keep sessions
// apart. An empty cwd is an error.
func ProjectKey(cwd string) (string, error) {
	if cwd == "" {
		return "", errors.New("empty cwd")
	}
	units, err := utf16Units(cwd)
	if err != nil {
		return "", fmt.Errorf("cwd %q: %w", cwd, err)
	}
	var b strings.Builder
	b.Grow(len(cwd))
	sep := false
	for _, u := range units {
		if u == '/' || u == '\\' || u == ':' {
			if !sep {
				b.WriteByte('-')
			}
			sep = true
			continue
		}
		sep = false
		appendUnit(&b, u)
	}
	key := strings.TrimLeft(b.String(), "-")
	if key == "" {
		key = "root"
	}
	if len(key) > maxProjectKey { // the key is ASCII: bytes are units
		key = key[:maxProjectKey]
	}
	return "--" + key + "--", nil
}

// projectFolder returns the folder that holds sessions whose header names
// cwd: the project key, or NoCwdFolder when cwd is absent.
func projectFolder(cwd string) (string, error) {
	if cwd == "" {
		return NoCwdFolder, nil
	}
	return ProjectKey(cwd)
}

// IsProjectFolder reports whether name, an entry of a store's root, can be
// a project folder: how a root is told from other folders.
func IsProjectFolder(name string) bool { return isProjectFolder(name) }

// isProjectFolder reports whether a root entry name can be a project folder.
func isProjectFolder(name string) bool {
	return name == NoCwdFolder || (len(name) > 4 && strings.HasPrefix(name, "--") && strings.HasSuffix(name, "--"))
}

// EncodeSegment returns the session folder name of id. Every UTF-16 unit
// outside [A-Za-z0-9._-] becomes ~XXXX (so '/', '\\', ':' and NUL never reach
// the file system) and "." and ".." are escaped, so the name never leaves its
// project folder. The mapping is injective; DecodeSegment reverses it.
func EncodeSegment(id string) (string, error) {
	if id == "" {
		return "", errors.New("empty session id")
	}
	units, err := utf16Units(id)
	if err != nil {
		return "", fmt.Errorf("session id %q: %w", id, err)
	}
	switch id {
	case ".":
		return "~002E", nil
	case "..":
		return "~002E~002E", nil
	}
	if allPlain(id) {
		return id, nil // nothing to escape, the common case
	}
	var b strings.Builder
	b.Grow(len(id))
	for _, u := range units {
		appendUnit(&b, u)
	}
	return b.String(), nil
}

// DecodeSegment returns the session id a folder name encodes. It accepts
// only the canonical encoding (what EncodeSegment returns), so two folders
// never decode to the same id.
func DecodeSegment(name string) (string, error) {
	bad := func(why string) (string, error) {
		return "", fmt.Errorf("folder name %q is not an encoded session id: %s", name, why)
	}
	if name == "" {
		return bad("empty")
	}
	if allPlain(name) && name != "." && name != ".." {
		return name, nil // nothing escaped: the name is the id, canonically
	}
	units := make([]uint16, 0, len(name))
	for i := 0; i < len(name); {
		c := name[i]
		if c == '~' {
			if i+5 > len(name) {
				return bad("short escape")
			}
			n, err := strconv.ParseUint(name[i+1:i+5], 16, 16)
			if err != nil || strings.ToUpper(name[i+1:i+5]) != name[i+1:i+5] {
				return bad("invalid escape")
			}
			units = append(units, uint16(n))
			i += 5
			continue
		}
		if !plainUnit(uint16(c)) {
			// Named as the character it is: 'ü', not its first byte 'Ã'.
			if r, n := utf8.DecodeRuneInString(name[i:]); r != utf8.RuneError || n > 1 {
				return bad(fmt.Sprintf("unescaped %q", r))
			}
			return bad(fmt.Sprintf("unescaped byte %#02x, not UTF-8", c))
		}
		units = append(units, uint16(c))
		i++
	}
	for i := 0; i < len(units); i++ {
		switch {
		case utf16.IsSurrogate(rune(units[i])) && units[i] < 0xDC00 && i+1 < len(units) &&
			units[i+1] >= 0xDC00 && units[i+1] <= 0xDFFF:
			i++
		case utf16.IsSurrogate(rune(units[i])):
			return bad("unpaired surrogate")
		}
	}
	id := string(utf16.Decode(units))
	if enc, err := EncodeSegment(id); err != nil || enc != name {
		return bad("not canonical")
	}
	return id, nil
}

func utf16Units(s string) ([]uint16, error) {
	if !utf8.ValidString(s) {
		return nil, errors.New("not valid UTF-8")
	}
	return utf16.Encode([]rune(s)), nil
}

// allPlain reports whether every byte of s is a plain unit, so that s
// needs no escape in a folder name.
func allPlain(s string) bool {
	for i := 0; i < len(s); i++ {
		if !plainUnit(uint16(s[i])) {
			return false
		}
	}
	return true
}

func plainUnit(u uint16) bool {
	return u >= 'A' && u <= 'Z' || u >= 'a' && u <= 'z' || u >= '0' && u <= '9' ||
		u == '.' || u == '_' || u == '-'
}

func appendUnit(b *strings.Builder, u uint16) {
	if plainUnit(u) {
		b.WriteByte(byte(u))
		return
	}
	fmt.Fprintf(b, "~%04X", u)
}

// Encoding is the physical encoding of the logs of a root.
type Encoding string

const (
	// Zstd logs are concatenations of zstd frames (.jsonl.zstd).
	Zstd Encoding = "zstd"
	// None logs are plain JSONL (.jsonl).
	None Encoding = "none"
)

func (e Encoding) suffix() string {
	if e == Zstd {
		return ".jsonl.zstd"
	}
	return ".jsonl"
}

// LogName returns the file name of generation gen of a session log:
// session.jsonl[.zstd] for format v0, session.vN.jsonl[.zstd] after.
func LogName(gen int, enc Encoding) string {
	if gen == 0 {
		return "session" + enc.suffix()
	}
	return "session.v" + strconv.Itoa(gen) + enc.suffix()
}

// ParseLogName tells whether name is a session log file and returns its
// generation and encoding. Temporary files (*.tmp) are not logs.
func ParseLogName(name string) (gen int, enc Encoding, ok bool) {
	var rest string
	switch {
	case strings.HasSuffix(name, ".jsonl.zstd"):
		rest, enc = strings.TrimSuffix(name, ".jsonl.zstd"), Zstd
	case strings.HasSuffix(name, ".jsonl"):
		rest, enc = strings.TrimSuffix(name, ".jsonl"), None
	default:
		return 0, "", false
	}
	if rest == "session" {
		return 0, enc, true
	}
	digits, found := strings.CutPrefix(rest, "session.v")
	if !found || digits == "" || digits[0] == '0' || len(digits) > 9 {
		return 0, "", false
	}
	n, err := strconv.Atoi(digits)
	if err != nil || n <= 0 {
		return 0, "", false
	}
	return n, enc, true
}

// SafeName returns id with every UTF-16 unit outside [A-Za-z0-9_-]
// replaced by '_', for file names outside the store; see seam.SafeName.
func SafeName(id string) string { return seam.SafeName(id) }

// SessionFromPath locates the session that path names: a session folder
// (<root>/<project folder>/<encoded id>) or a log file in one. The root is
// inferred from the path, so a user can name a session by its files
// without naming the store.
func SessionFromPath(path string) (root, id string, err error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", "", err
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return "", "", err
	}
	dir := abs
	if !fi.IsDir() {
		if _, _, ok := ParseLogName(filepath.Base(abs)); !ok {
			return "", "", fmt.Errorf("%s is not a session log (session.jsonl[.zstd] or session.vN.jsonl[.zstd])", abs)
		}
		dir = filepath.Dir(abs)
	}
	project := filepath.Dir(dir)
	if !isProjectFolder(filepath.Base(project)) {
		return "", "", fmt.Errorf("%s is not a session folder: its parent is not a project folder of a dsh store", dir)
	}
	if id, err = DecodeSegment(filepath.Base(dir)); err != nil {
		return "", "", err
	}
	return filepath.Dir(project), id, nil
}
