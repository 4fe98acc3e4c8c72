package seam

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/dshctl/dshctl/internal/rawjson"
)

// MaxVersion is the newest log format dshctl reads and writes.
const MaxVersion = 4

// Header is the first record of a log. Optional string fields are empty when
// absent; SeedLength and IsSeeded are nil when absent.
type Header struct {
	Version         int
	ID              string
	CreatedAt       int64
	Cwd             string
	ParentSession   string
	SeedLength      *int64 // v0/v1 only
	IsSeeded        *bool  // v2+ only, required there
	Origin          string // "" or "subagent"
	DelegationDepth int64
	AgentPreset     string
	// NoDelegationDepth says the stored header has no delegationDepth (a
	// SQLite row whose column is NULL, as dsh 0.0.1's live path left it):
	// consumers show it as absent. DelegationDepth is then 0, which is
	// what the header line holds (dsh's JSONL writers emit 0 for it).
	NoDelegationDepth bool
}

// Seeded reports whether the session starts with events inherited from a
// parent.
func (h *Header) Seeded() bool {
	if h.IsSeeded != nil {
		return *h.IsSeeded
	}
	return h.SeedLength != nil && *h.SeedLength > 0
}

// AppendJSON appends the header line's JSON in dsh's key order, with exactly
// the keys that are set.
func (h *Header) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"type":"session","version":`...)
	dst = strconv.AppendInt(dst, int64(h.Version), 10)
	dst = append(dst, `,"id":`...)
	dst = rawjson.AppendString(dst, h.ID)
	dst = append(dst, `,"createdAt":`...)
	dst = strconv.AppendInt(dst, h.CreatedAt, 10)
	if h.Cwd != "" {
		dst = append(dst, `,"cwd":`...)
		dst = rawjson.AppendString(dst, h.Cwd)
	}
	if h.ParentSession != "" {
		dst = append(dst, `,"parentSession":`...)
		dst = rawjson.AppendString(dst, h.ParentSession)
	}
	if h.SeedLength != nil {
		dst = append(dst, `,"seedLength":`...)
		dst = strconv.AppendInt(dst, *h.SeedLength, 10)
	}
	if h.IsSeeded != nil {
		dst = append(dst, `,"isSeeded":`...)
		dst = strconv.AppendBool(dst, *h.IsSeeded)
	}
	if h.Origin != "" {
		dst = append(dst, `,"origin":`...)
		dst = rawjson.AppendString(dst, h.Origin)
	}
	dst = append(dst, `,"delegationDepth":`...)
	dst = strconv.AppendInt(dst, h.DelegationDepth, 10)
	if h.AgentPreset != "" {
		dst = append(dst, `,"agentPreset":`...)
		dst = rawjson.AppendString(dst, h.AgentPreset)
	}
	return append(dst, '}')
}

// MarshalJSON returns the header line's JSON.
func (h Header) MarshalJSON() ([]byte, error) { return h.AppendJSON(nil), nil }

// headerKeys lists the keys a header may hold, per version family.
var (
	headerKeysV0 = []string{"type", "version", "id", "createdAt", "cwd", "parentSession",
		"seedLength", "origin", "delegationDepth", "agentPreset"}
	headerKeysV2 = []string{"type", "version", "id", "createdAt", "cwd", "parentSession",
		"isSeeded", "origin", "delegationDepth", "agentPreset"}
	retiredHeaderKeys = []string{"sandboxMode", "approvalPolicy"}
)

// ParseHeader decodes and validates a header line. A version newer than
// MaxVersion is ErrUnsupportedFormat, checked before the shape; any other
// defect is ErrCorrupt. The returned errors carry no position; callers add it.
func ParseHeader(line []byte) (Header, error) {
	var h Header
	var fields fieldList
	if _, err := fields.parse(line); err != nil {
		return h, corruptf("header is not a JSON object: %v", err)
	}
	if t, ok := fields.get("type"); !ok || string(t) != `"session"` {
		return h, corruptf("first record is not a session header")
	}
	v, err := fields.int("version", true)
	if err != nil {
		return h, corruptf("header: %v", err)
	}
	switch ClassifyVersion(v) {
	case VersionNewer:
		return h, &Error{Kind: ErrUnsupportedFormat, Pos: NoPos, Err: fmt.Errorf(
			"log format v%d, but dshctl reads only v0 to v%d: written by a newer dsh", v, MaxVersion)}
	case VersionInvalid:
		return h, corruptf("header: version %d is negative", v)
	}
	h.Version = int(v)
	allowed := headerKeysV0
	if h.Version >= 2 {
		allowed = headerKeysV2
	}
	for _, k := range fields.keys() {
		if slices.Contains(retiredHeaderKeys, k) {
			return h, corruptf("header: retired key %q", k)
		}
		if h.Version >= 2 && !slices.Contains(allowed, k) {
			return h, corruptf("header: unexpected key %q for v%d", k, h.Version)
		}
	}
	if h.ID, err = fields.string("id", true); err != nil {
		return h, corruptf("header: %v", err)
	}
	if h.ID == "" {
		return h, corruptf("header: empty id")
	}
	if h.CreatedAt, err = fields.int("createdAt", true); err != nil {
		return h, corruptf("header: %v", err)
	}
	if h.CreatedAt < 0 || rawjson.IsNegZero(fields.value("createdAt")) {
		return h, corruptf("header: createdAt must be a non-negative integer")
	}
	if h.Cwd, err = fields.string("cwd", false); err != nil {
		return h, corruptf("header: %v", err)
	}
	if _, ok := fields.get("cwd"); ok && h.Cwd == "" {
		return h, corruptf("header: empty cwd")
	}
	if h.Version >= 4 && h.Cwd != "" && !isAbsPath(h.Cwd) {
		return h, corruptf("header: cwd %q is not absolute", h.Cwd)
	}
	if h.ParentSession, err = fields.string("parentSession", false); err != nil {
		return h, corruptf("header: %v", err)
	}
	if h.Origin, err = fields.string("origin", false); err != nil {
		return h, corruptf("header: %v", err)
	}
	if _, ok := fields.get("origin"); ok && h.Origin != "subagent" {
		return h, corruptf("header: origin %q is not \"subagent\"", h.Origin)
	}
	if h.AgentPreset, err = fields.string("agentPreset", false); err != nil {
		return h, corruptf("header: %v", err)
	}
	if h.DelegationDepth, err = fields.int("delegationDepth", true); err != nil {
		return h, corruptf("header: %v", err)
	}
	if h.DelegationDepth < 0 {
		return h, corruptf("header: delegationDepth must be non-negative")
	}
	if h.Version < 2 {
		if _, ok := fields.get("seedLength"); ok {
			n, err := fields.int("seedLength", true)
			if err != nil || n < 0 {
				return h, corruptf("header: seedLength must be a non-negative integer")
			}
			h.SeedLength = &n
		}
	} else {
		raw, ok := fields.get("isSeeded")
		if !ok {
			return h, corruptf("header: missing isSeeded")
		}
		var b bool
		if err := json.Unmarshal(raw, &b); err != nil || (string(raw) != "true" && string(raw) != "false") {
			return h, corruptf("header: isSeeded must be a boolean")
		}
		h.IsSeeded = &b
	}
	return h, nil
}

// ValidateHeader checks a header built in memory (for Create) against the
// rules of its version, and that it names the wanted id when want is set. A
// version newer than MaxVersion is ErrUnsupportedFormat; any other defect is
// ErrInvalid, since nothing stored is at fault.
func ValidateHeader(h Header, want string) error {
	parsed, err := ParseHeader(h.AppendJSON(nil))
	if errors.Is(err, ErrCorrupt) {
		var e *Error
		errors.As(err, &e)
		return &Error{Kind: ErrInvalid, Pos: NoPos, Err: e.Err}
	}
	if err != nil {
		return err
	}
	if want != "" && parsed.ID != want {
		return invalidf("header id %q does not match session %q", parsed.ID, want)
	}
	if h.Version < 2 && h.IsSeeded != nil {
		return invalidf("header: isSeeded is not a v%d field", h.Version)
	}
	return nil
}

// isAbsPath reports whether p is absolute on POSIX or Windows.
func isAbsPath(p string) bool {
	if strings.HasPrefix(p, "/") || strings.HasPrefix(p, `\\`) {
		return true
	}
	return len(p) >= 3 && p[1] == ':' && (p[2] == '\\' || p[2] == '/') &&
		(p[0]|0x20 >= 'a' && p[0]|0x20 <= 'z')
}

// VersionSupport classifies a log format version.
type VersionSupport int

const (
	VersionCurrent VersionSupport = iota // MaxVersion
	VersionOlder                         // readable, older than MaxVersion
	VersionNewer                         // written by a newer dsh
	VersionInvalid                       // negative
)

// ClassifyVersion says whether dshctl can read version v.
func ClassifyVersion(v int64) VersionSupport {
	switch {
	case v < 0:
		return VersionInvalid
	case v > MaxVersion:
		return VersionNewer
	case v == MaxVersion:
		return VersionCurrent
	}
	return VersionOlder
}

func corruptf(format string, args ...any) *Error {
	return &Error{Kind: ErrCorrupt, Pos: NoPos, Err: fmt.Errorf(format, args...)}
}

// brokef is corruptf for a record that breaks rule (ErrPackedRow, ...).
func brokef(rule error, format string, args ...any) *Error {
	return &Error{Kind: ErrCorrupt, Pos: NoPos, Err: &ruleError{rule, fmt.Errorf(format, args...)}}
}

func invalidf(format string, args ...any) *Error {
	return &Error{Kind: ErrInvalid, Pos: NoPos, Err: fmt.Errorf(format, args...)}
}

// NewHeader completes h as the header of a new session the way dsh writes
// one, so that every backend and command creates the same header from the
// same request: from v2 on an unset isSeeded is false, and a subagent
// without a delegation depth is one level deep. Fields already set are
// kept; Create still validates the result.
func NewHeader(h Header) Header {
	if h.Version >= 2 && h.IsSeeded == nil {
		seeded := false
		h.IsSeeded = &seeded
	}
	if h.Origin == "subagent" && h.DelegationDepth == 0 {
		h.DelegationDepth = 1
	}
	return h
}
