package reconcile

// idIndex is where each id first stands in a list that mostly grows at its
// end (the live rows, the queue): appends are indexed when next looked up,
// and any other change, which the machine marks with stale, rebuilds it
// then. A message-queued frame looks up its id three times; without it the
// lookups of a long queue cost the queue's length each.
type idIndex struct {
	pos   map[string]int
	n     int // the entries indexed
	stale bool
}

// checkIndexes makes every lookup compare the index with a scan (tests).
var checkIndexes = false

// sync brings x up to the list of n entries whose keys key gives.
func (x *idIndex) sync(n int, key func(i int, add func(string))) {
	if x.pos == nil || x.stale || x.n > n {
		if x.pos == nil {
			x.pos = map[string]int{}
		}
		clear(x.pos)
		x.n, x.stale = 0, false
	}
	for ; x.n < n; x.n++ {
		i := x.n
		key(i, func(k string) {
			if _, ok := x.pos[k]; !ok && k != "" {
				x.pos[k] = i
			}
		})
	}
}

func (x *idIndex) get(id string) int {
	if i, ok := x.pos[id]; ok {
		return i
	}
	return -1
}

func (m *Machine) find(id string) int {
	if id == "" {
		return -1
	}
	m.rowIdx.sync(len(m.S.L), func(i int, add func(string)) { add(m.S.L[i].ID) })
	i := m.rowIdx.get(id)
	if checkIndexes {
		want := -1
		for k := range m.S.L {
			if m.S.L[k].ID == id {
				want = k
				break
			}
		}
		if want != i {
			panic("reconcile: row index " + id)
		}
	}
	return i
}

func (m *Machine) findQ(id string) int {
	if id == "" {
		return -1
	}
	m.qIdx.sync(len(m.S.Q), func(i int, add func(string)) { add(m.S.Q[i].ID); add(m.S.Q[i].ServerID) })
	i := m.qIdx.get(id)
	if checkIndexes {
		want := -1
		for k, q := range m.S.Q {
			if q.ID == id || (q.ServerID != "" && q.ServerID == id) {
				want = k
				break
			}
		}
		if want != i {
			panic("reconcile: queue index " + id)
		}
	}
	return i
}

// changed marks the indexes stale after a change other than an append.
func (m *Machine) changed() { m.rowIdx.stale, m.qIdx.stale = true, true }
