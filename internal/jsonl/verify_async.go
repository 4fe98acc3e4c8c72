package jsonl

import (
	"github.com/dshctl/dshctl/internal/seam"
)

// walkOut is where a check of a log sends what it finds, in storage order:
// the calls of a seam.LogVisitor, but for the records: it sends the
// complete record lines, which walkOut decodes for the visitor.
type walkOut interface {
	Header(h seam.Header, valid bool)
	Finding(f seam.Finding)
	BeginUnit(p seam.Pos)
	EndUnit(end seam.UnitEnd)
	TornTail(p seam.Pos, size int64)
	BadRecord(p seam.Pos, cause error, turnEnd bool)
	// BadRecords passes on a run of junk counted in bulk (junkVisitor).
	BadRecords(p seam.Pos, n int64)
	// record takes one complete line (with its '\n') of a version-ver log;
	// line is valid only during the call.
	record(line []byte, p seam.Pos, ver int)
	// close delivers everything sent; the visitor is not called after.
	close()
}

// asyncOut runs the visitor, and the decoding of records, on a goroutine
// of its own, so that a check reads and decompresses the log on one core
// while it validates records and applies the event rules on another. It
// passes batches of calls, with copies of their lines, through a channel
// of two: memory stays bounded by a few batches (and the longest record).
type asyncOut struct {
	v    seam.LogVisitor
	cur  *opBatch
	ch   chan *opBatch
	free chan *opBatch
	done chan struct{}
}

// asyncBatch is the size of the lines a batch carries before it is sent,
// and asyncOps the number of calls: a log of millions of one-byte lines
// must not make a batch of millions of calls.
const (
	asyncBatch = 256 << 10
	asyncOps   = 4096
)

type opKind uint8

const (
	opRecord opKind = iota
	opHeader
	opFinding
	opBegin
	opEnd
	opTorn
	opBad
	opJunk
)

// op is one call of the visitor, or one line to decode. The rare calls'
// arguments are behind pointers, so that a record's op stays small.
type op struct {
	kind       opKind
	ver        int
	start, end int // the line, in the batch's arena
	pos        seam.Pos
	finding    *seam.Finding
	header     *seam.Header
	valid      bool
	unitEnd    *seam.UnitEnd
	size       int64
	cause      error
	turnEnd    bool
}

type opBatch struct {
	ops   []op
	arena []byte
}

func newAsyncOut(v seam.LogVisitor) *asyncOut {
	a := &asyncOut{v: v, ch: make(chan *opBatch, 2), free: make(chan *opBatch, 4), done: make(chan struct{})}
	go a.run()
	return a
}

func (a *asyncOut) run() {
	defer close(a.done)
	for b := range a.ch {
		for i := range b.ops {
			o := &b.ops[i]
			switch o.kind {
			case opRecord:
				decodeLine(a.v, b.arena[o.start:o.end], o.pos, o.ver)
			case opHeader:
				a.v.Header(*o.header, o.valid)
			case opFinding:
				a.v.Finding(*o.finding)
			case opBegin:
				a.v.BeginUnit(o.pos)
			case opEnd:
				a.v.EndUnit(*o.unitEnd)
			case opTorn:
				a.v.TornTail(o.pos, o.size)
			case opBad:
				a.v.BadRecord(o.pos, o.cause, o.turnEnd)
			case opJunk:
				a.v.(junkVisitor).BadRecords(o.pos, o.size)
			}
		}
		clear(b.ops) // drop the pointers it holds
		b.ops, b.arena = b.ops[:0], b.arena[:0]
		select {
		case a.free <- b:
		default:
		}
	}
}

// push queues o, sending the batch when its lines reach asyncBatch or its
// calls asyncOps.
func (a *asyncOut) push(o op, line []byte) {
	if a.cur == nil {
		select {
		case a.cur = <-a.free:
		default:
			a.cur = &opBatch{ops: make([]op, 0, asyncOps), arena: make([]byte, 0, asyncBatch+4096)}
		}
	}
	b := a.cur
	if line != nil {
		o.start = len(b.arena)
		b.arena = append(b.arena, line...)
		o.end = len(b.arena)
	}
	b.ops = append(b.ops, o)
	if len(b.arena) >= asyncBatch || len(b.ops) >= asyncOps {
		a.flush()
	}
}

func (a *asyncOut) flush() {
	if a.cur != nil && len(a.cur.ops) > 0 {
		a.ch <- a.cur
		a.cur = nil
	}
}

func (a *asyncOut) close() {
	a.flush()
	close(a.ch)
	<-a.done
}

func (a *asyncOut) record(line []byte, p seam.Pos, ver int) {
	a.push(op{kind: opRecord, pos: p, ver: ver}, line)
}
func (a *asyncOut) Header(h seam.Header, valid bool) {
	a.push(op{kind: opHeader, header: &h, valid: valid}, nil)
}
func (a *asyncOut) Finding(f seam.Finding)   { a.push(op{kind: opFinding, finding: &f}, nil) }
func (a *asyncOut) BeginUnit(p seam.Pos)     { a.push(op{kind: opBegin, pos: p}, nil) }
func (a *asyncOut) EndUnit(end seam.UnitEnd) { a.push(op{kind: opEnd, unitEnd: &end}, nil) }
func (a *asyncOut) TornTail(p seam.Pos, size int64) {
	a.push(op{kind: opTorn, pos: p, size: size}, nil)
}

// BadRecord passes on a record the walk judged itself (one too large to
// hold), without its line.
func (a *asyncOut) BadRecord(p seam.Pos, cause error, turnEnd bool) {
	a.push(op{kind: opBad, pos: p, cause: cause, turnEnd: turnEnd}, nil)
}

// BadRecords passes on a run of junk records counted in bulk; the walk
// sends it only to a junkVisitor.
func (a *asyncOut) BadRecords(p seam.Pos, n int64) {
	a.push(op{kind: opJunk, pos: p, size: n}, nil)
}

// decodeLine decodes one complete record line of a version-ver log for v.
func decodeLine(v seam.LogVisitor, line []byte, p seam.Pos, ver int) {
	rec, err := seam.DecodeRecordAlias(line[:len(line)-1], ver)
	if err != nil {
		v.BadRecord(p, err, isTurnEnd(line))
		return
	}
	v.Record(&rec, p)
}
