package reconcile

import (
	"fmt"
	"strings"
)

// Policy is a keep rule under test: which live rows survive a reconcile, plus
// the historical bugs a variant re-introduces into the state machine.
type Policy struct {
	Name   string
	Doc    string
	Hidden bool // a historical bug variant, for tests and demos

	membership bool
	bugs       bug
}

// bug is a set of historical bugs, each undone by a later fix: bugs A–D of
// the shipped client, and the bugs the membership policy had before each of
// the fixes its generated traces called for (each kept as a regression trace
// in testdata/traces/regress-*.jsonl).
type bug uint16

const (
	// bugA: reconcile cleared the whole live tail, the newer turn included.
	bugA bug = 1 << iota
	// bugB: untagged user rows (optimistic and queued messages) were dropped.
	bugB
	// bugC: turn-start's backfill tagged every trailing untagged user row,
	// queued ones included.
	bugC
	// bugD: rows consumed by an interrupt were left untagged.
	bugD
	// bugLateQueued: membership before fix 1: a late "queued" answer to a
	// send undid its binding even when a continuation had bound it for sure.
	bugLateQueued
	// bugRequeueCancelled: membership before fix 2: a message-queued frame
	// that crossed the user's cancel queued the cancelled message again.
	bugRequeueCancelled
	// bugTrustGuess: membership before fix 3: the turn a send was guessed to
	// have started alone decided whether its row was durable; the fetched
	// rows of the turns since the send did not settle it.
	bugTrustGuess
	// bugStaleTag: membership before fix 4: kept user rows kept whatever turn
	// tag turn-start's backfill had guessed for them.
	bugStaleTag
	// bugPreserveSealed: membership before fix 5: LT was preserved even after
	// this client had seen that turn sealed.
	bugPreserveSealed
	// bugDropSealed: membership before fix 6: LT was dropped once this client
	// had seen that turn sealed, even when the fetched rows, requested
	// before the seal, did not hold it yet.
	bugDropSealed
	// bugInterruptLT: membership before fix 7: a consumed interrupt was
	// taken to belong to the client's LT, and tagged with it, instead of
	// the turn the server's frames say it was running; after a reconnect
	// snapshot without currentTurnId LT is stale.
	bugInterruptLT
	// bugNoServerLink: membership before fix 8: a message the client sent
	// as a plain row (believing the agent idle) but the server queued under
	// its own id showed twice: its row, and the row message-queued added
	// for the server's id.
	bugNoServerLink
)

// The policies, by name. membership is the default.
var (
	Membership = Policy{Name: "membership", Doc: "positive membership: keep a live row only while it has a reason to outlive the reconcile; dedup against the fetched rows; stale fetches ignored", membership: true}
	Legacy     = Policy{Name: "legacy", Doc: "as shipped: keep rows of the preserved newer turn and every untagged user row"}
	BugA       = Policy{Name: "bug-a", Hidden: true, Doc: "legacy before fix A: reconcile clears the live tail of the newer turn (no preserved turn)", bugs: bugA}
	BugB       = Policy{Name: "bug-b", Hidden: true, Doc: "legacy before fix B: untagged user rows dropped", bugs: bugB}
	BugC       = Policy{Name: "bug-c", Hidden: true, Doc: "legacy before fix C: backfill tags every trailing untagged user row", bugs: bugC}
	BugD       = Policy{Name: "bug-d", Hidden: true, Doc: "legacy before fix D: consumed interrupt rows left untagged", bugs: bugD}

	MembershipPre1 = Policy{Name: "membership-pre1", Hidden: true, membership: true, bugs: bugLateQueued,
		Doc: "membership before fix 1: a late http queued answer undoes a continuation's binding"}
	MembershipPre2 = Policy{Name: "membership-pre2", Hidden: true, membership: true, bugs: bugRequeueCancelled,
		Doc: "membership before fix 2: a message-queued frame re-adds a message the user cancelled"}
	MembershipPre3 = Policy{Name: "membership-pre3", Hidden: true, membership: true, bugs: bugTrustGuess,
		Doc: "membership before fix 3: the guessed turn of a send, not the fetched rows, decides whether it is durable"}
	MembershipPre4 = Policy{Name: "membership-pre4", Hidden: true, membership: true, bugs: bugStaleTag,
		Doc: "membership before fix 4: kept rows keep the turn tag the backfill guessed"}
	MembershipPre5 = Policy{Name: "membership-pre5", Hidden: true, membership: true, bugs: bugPreserveSealed,
		Doc: "membership before fix 5: LT preserved after the client saw that turn sealed"}
	MembershipPre6 = Policy{Name: "membership-pre6", Hidden: true, membership: true, bugs: bugDropSealed,
		Doc: "membership before fix 6: LT dropped once seen sealed, even by rows requested before the seal"}
	MembershipPre7 = Policy{Name: "membership-pre7", Hidden: true, membership: true, bugs: bugInterruptLT,
		Doc: "membership before fix 7: an interrupt belongs to the client's LT, not to the turn the server was running"}
	MembershipPre8 = Policy{Name: "membership-pre8", Hidden: true, membership: true, bugs: bugNoServerLink,
		Doc: "membership before fix 8: a plain send the server queued under its own id shows twice"}
)

// Policies lists every policy, the default first.
func Policies() []Policy {
	return []Policy{Membership, Legacy, BugA, BugB, BugC, BugD,
		MembershipPre1, MembershipPre2, MembershipPre3, MembershipPre4, MembershipPre5, MembershipPre6,
		MembershipPre7, MembershipPre8}
}

// fixed returns the policy this one becomes once its bugs are fixed.
func (p Policy) fixed() Policy {
	if p.membership {
		return Membership
	}
	return Legacy
}

// PolicyByName returns the named policy.
func PolicyByName(name string) (Policy, error) {
	var names []string
	for _, p := range Policies() {
		if p.Name == name {
			return p, nil
		}
		names = append(names, p.Name)
	}
	return Policy{}, fmt.Errorf("unknown policy %q (want one of %s)", name, strings.Join(names, ", "))
}

// String returns the policy's name.
func (p Policy) String() string { return p.Name }

// keep computes the live rows that survive applying fetched rows for a
// reconcile of turn t, and whether LT and CA survive. It is pure: the
// idempotence check calls it a second time on its own result.
func (p Policy) keep(s *State, bk *book, f fetchResult) (kept []Message, keepLT, keepCA bool) {
	if p.membership {
		return p.keepMembership(s, bk, f)
	}
	preserve := ""
	if f.mode == modeReconcile && s.LT != "" && s.LT != f.turn && p.bugs&bugA == 0 {
		preserve = s.LT
	}
	if f.mode == modeResync {
		// Non-preserving reload: L cleared.
		return nil, false, false
	}
	for _, r := range s.L {
		switch {
		case preserve != "" && r.TurnID == preserve:
			kept = append(kept, r)
		case r.Role == RoleUser && r.TurnID == "" && p.bugs&bugB == 0:
			kept = append(kept, r)
		}
	}
	return kept, preserve != "", preserve != ""
}

// keepMembership keeps a live row only with a positive reason:
//   - its message is not durable yet (queued, waiting for its turn, a
//     continuation waiting for turn-start, a failed send and its error row);
//   - or it belongs to the preserved newer turn and the fetched rows do not
//     represent it yet; a user row of any turn is likewise kept until the
//     fetched rows hold it (a fetch issued before that turn started does not);
//   - or it is content of a turn the fetched rows cannot hold yet: one this
//     client had not seen sealed when it asked for them (LT can be stale
//     after a reconnect), or the turn a reconnect hid, still running.
//
// Everything else goes, untagged rows included: no row is kept "just in case".
// CA survives with its row.
func (p Policy) keepMembership(s *State, bk *book, f fetchResult) ([]Message, bool, bool) {
	// For a resync, f.turn is LT when it was issued: a turn that started
	// since is newer than the snapshot the server answered from.
	preserve := ""
	if s.LT != "" && s.LT != f.turn && !p.holdsSealed(bk, f, s.LT) {
		preserve = s.LT
	}
	var kept []Message
	keepCA := false
	for _, r := range s.L {
		if !p.keepRow(r, bk, f, preserve) {
			continue
		}
		if p.bugs&bugStaleTag == 0 {
			r = retag(r, bk, preserve)
		}
		keepCA = keepCA || (r.ID == s.CA && p.bugs&bugInterruptLT == 0)
		kept = append(kept, r)
	}
	return kept, preserve != "", preserve != "" || keepCA
}

// holdsSealed reports whether the rows of f already hold turn t: this client
// saw t sealed before it requested f, and the server writes a turn before it
// sends turn-sealed. LT is not preserved then (a deferred reconcile names
// only the last sealed turn, which need not be LT). Rows requested before the
// seal do not hold t: its live rows stay until its own reconcile.
func (p Policy) holdsSealed(bk *book, f fetchResult, t string) bool {
	before, sealed := bk.sealed[t]
	switch {
	case p.bugs&bugPreserveSealed != 0:
		return false
	case p.bugs&bugDropSealed != 0:
		return sealed
	}
	return sealed && f.req > before
}

// retag gives a kept user row the turn membership knows it belongs to: a
// message that is not durable yet belongs to no turn, whatever turn-start's
// backfill guessed; the preserved turn's rows keep theirs, and an interrupt
// gets the turn the server folded it into.
func retag(r Message, bk *book, preserve string) Message {
	if r.Role != RoleUser {
		return r
	}
	e := bk.entries[msgID(r.ID)]
	switch {
	case e.kind == bkInterrupt && bk.bugs&bugInterruptLT != 0:
	case e.kind == bkInterrupt:
		// The turn the server folded it into, whatever a backfill said.
		r.TurnID = e.turn
	case e.kind == bkBound && e.turn == preserve:
		r.TurnID = preserve
	default:
		r.TurnID = ""
	}
	return r
}

func (p Policy) keepRow(r Message, bk *book, f fetchResult, preserve string) bool {
	rows := f.rows
	switch r.Role {
	case RoleUser:
		e, ok := bk.entries[msgID(r.ID)]
		if !ok {
			return false
		}
		switch e.kind {
		case bkQueued, bkFailed:
			return true
		case bkAwaiting, bkOptimistic, bkBound, bkContinuation:
			if p.bugs&bugTrustGuess != 0 {
				return e.kind != bkBound || !rows.hasUserText(e.turn, r.text())
			}
			// Which turn a send started is a guess until the fetched rows
			// say it: any turn since the send whose user row holds its
			// text represents it.
			return !bk.represented(e, rows, r.text())
		case bkInterrupt:
			return !bk.interruptHeld(e, rows, r.text())
		}
		return false
	case RoleSystem:
		if id, ok := strings.CutPrefix(r.ID, errorRowPrefix); ok {
			e, found := bk.entries[id]
			return found && e.kind == bkFailed
		}
		return false
	default:
		switch {
		case r.unknownTurn:
			// Content of the turn a reconnect hid, which still runs:
			// no fetched row can be told to hold it.
			return bk.server.unknown
		case r.TurnID == "":
			return false
		case r.TurnID == preserve:
			return !rows.hasContent(preserve)
		case p.bugs&bugInterruptLT != 0:
			return false
		}
		// Content of a turn other than LT, which a reconnect can leave
		// stale: kept while the rows do not show that turn and cannot yet
		// (it was not seen sealed before they were requested).
		return !rows.hasContent(r.TurnID) && !p.holdsSealed(bk, f, r.TurnID)
	}
}
