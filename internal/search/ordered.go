package search

import (
	"sync"
)

// laneCap is how much output a job that is not first in line holds
// before it waits for its turn: the memory of an ordered run is bounded
// by its workers times this (plus one record each).
const laneCap = 256 << 10

// Out receives the output of jobs in job order, one call at a time.
type Out interface {
	// Write takes a piece of job's output.
	Write(job int, b []byte) error
	// Fail says that job failed with err, after the output it gave.
	Fail(job int, err error) error
}

// ordered puts the output of jobs run in parallel back in job order: the
// first unfinished job (the head) writes straight to out, the others hold
// their output until it is their turn, each up to laneCap; one that has
// more waits until it is the head. Jobs must be started in order (each
// job only once every job before it has started), so that the head is
// always running or done and a waiting job always gets its turn.
type ordered struct {
	out  Out
	mu   sync.Mutex
	cond sync.Cond
	head int
	held map[int]*lane
	err  error // out's first error: every later write fails with it
}

// lane is the output a job holds until its turn.
type lane struct {
	pieces []piece
	size   int
	done   bool
}

// piece is output held: bytes, or a failure.
type piece struct {
	b   []byte
	err error
}

func (o *ordered) give(job int, p piece) {
	if p.err != nil {
		o.err = o.out.Fail(job, p.err)
	} else {
		o.err = o.out.Write(job, p.b)
	}
	if o.err != nil {
		o.cond.Broadcast() // the jobs waiting for their turn fail now
	}
}

func newOrdered(out Out) *ordered {
	o := &ordered{out: out, held: map[int]*lane{}}
	o.cond.L = &o.mu
	return o
}

// write gives out b, job's next piece, now if job is the head, else when
// it is. b is copied when it is held, so the caller may reuse it.
func (o *ordered) write(job int, b []byte) error {
	return o.put(job, piece{b: b})
}

// fail gives out job's failure, in its turn.
func (o *ordered) fail(job int, err error) error {
	return o.put(job, piece{err: err})
}

func (o *ordered) put(job int, p piece) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	for {
		switch {
		case o.err != nil:
			return o.err
		case job == o.head:
			o.give(job, p)
			return o.err
		}
		l := o.held[job]
		if l == nil {
			l = &lane{}
			o.held[job] = l
		}
		if l.size+len(p.b) <= laneCap {
			p.b = append([]byte(nil), p.b...)
			l.pieces = append(l.pieces, p)
			l.size += len(p.b)
			return nil
		}
		o.cond.Wait() // until job is the head: its lane is written then
	}
}

// done ends job's output: when job is the head, the jobs after it that
// are done are written out, and the next one that is not becomes the
// head.
func (o *ordered) done(job int) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	l := o.held[job]
	if l == nil {
		l = &lane{}
		o.held[job] = l
	}
	l.done = true
	for o.err == nil {
		l, ok := o.held[o.head]
		if !ok {
			break
		}
		for _, p := range l.pieces {
			if o.give(o.head, p); o.err != nil {
				break
			}
		}
		l.pieces, l.size = nil, 0
		if !l.done {
			break // the new head: it writes straight out from now on
		}
		delete(o.held, o.head)
		o.head++
	}
	o.cond.Broadcast()
	return o.err
}

// error is the first error out gave.
func (o *ordered) error() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.err
}
