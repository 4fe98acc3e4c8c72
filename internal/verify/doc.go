// Package verify is dshctl's check of stored sessions and its repair of
// their tails: the reports of `verify` (Run, Check) and the
// rules they apply (LogCheck), in a mode (Mode) that says how strict a
// finding's severity is.
//
// LogCheck judges one log's records, as a backend's seam.LogVerifier hands
// them over in storage order: seq contiguity, vocabulary, turn and step
// bracketing, tool-call pairing and the commit rule of store.md 4. A
// repair removes only what that rule leaves uncommitted, or a torn tail,
// through the backend's seam.TailRepairer, which saves what it removes
// first. Like inspect, it reaches a store only through seam interfaces and
// never touches files; memory is bounded by a turn and a cap on the
// findings kept, not by the log.
package verify
