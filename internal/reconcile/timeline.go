package reconcile

// serverTurns follows the turn the server is running, from its frames alone:
// turn-start, turn-sealed and the statuses snapshot a reconnect brings. A
// client that missed frames (a dropped socket) learns from a snapshot, or
// from content arriving while it believes the server idle, that the server
// runs a turn, but not always which: a snapshot without currentTurnId, a
// turn-start it never got. With la (the lookahead of a whole trace) that turn
// is known from the frames that follow; without it (the client itself) it is
// unknown until its seal, the next turn-start or a snapshot naming a turn.
type serverTurns struct {
	cur     string // the running turn; "" when idle or unknown
	unknown bool   // running, but which turn is not known
	la      *lookahead
}

// ahead returns the turn the frames after record i show the server was
// running at i, when the tracker has the lookahead.
func (s *serverTurns) ahead(i int) string {
	if s.la == nil {
		return ""
	}
	return s.la.aheadOf(i)
}

// activity reports whether ev shows the server running a turn.
func activity(ev *Event) bool {
	switch ev.Type {
	case "text-delta", "reasoning-delta", "tool-call", "tool-result", "shell-output":
		return true
	case "message-consumed":
		return ev.Reason != "continuation"
	}
	return false
}

// turnChange is what one frame tells about the server's turns: the turns it
// ended (a missed seal shows as a turn that ends when another starts) and
// the turn it started. A turn the client learns of only by its seal starts
// there too (implicit): the caller skips a start of a turn it knows.
type turnChange struct {
	sealed   [2]string
	started  string
	implicit bool
}

func (c *turnChange) seal(t string) {
	if t == "" || c.sealed[0] == t {
		return
	}
	if c.sealed[0] == "" {
		c.sealed[0] = t
	} else {
		c.sealed[1] = t
	}
}

// frame advances past ev, the i-th record, which concerns tab.
func (s *serverTurns) frame(i int, ev *Event, tab string) turnChange {
	var c turnChange
	switch ev.Type {
	case "turn-start":
		if ev.TurnID == "" || ev.TurnID == s.cur {
			return c
		}
		c.seal(s.cur)
		c.started = ev.TurnID
		s.cur, s.unknown = ev.TurnID, false
	case "turn-sealed":
		t := ev.TurnID
		switch {
		case t == "":
		case t == s.cur:
			s.cur = ""
		case s.cur != "":
			// A late seal of an older turn: the running one goes on.
		default:
			// Idle, or running a turn a reconnect hid: t is a turn whose
			// start this client did not see.
			c.started, c.implicit = t, true
			s.unknown = false
		}
		c.seal(t)
	case "statuses":
		snap, ok := ev.Statuses[tab]
		if !ok {
			return c
		}
		running := ""
		switch {
		case snap.Status != StatusRunning:
		case snap.CurrentTurnID != "":
			running = snap.CurrentTurnID
		default:
			running = s.ahead(i)
			if running == "" {
				c.seal(s.cur)
				s.cur, s.unknown = "", true
				return c
			}
		}
		if running == s.cur && (running != "" || !s.unknown) {
			return c
		}
		c.seal(s.cur)
		c.started, c.implicit = running, true
		s.cur, s.unknown = running, false
	default:
		if s.cur != "" || s.unknown || !activity(ev) {
			return c
		}
		// The turn-start was missed.
		if t := s.ahead(i); t != "" {
			c.started, c.implicit = t, true
			s.cur = t
		} else {
			s.unknown = true
		}
	}
	return c
}
