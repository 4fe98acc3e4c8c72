package seamtest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"slices"
	"sync"
	"testing"

	"github.com/dshctl/dshctl/internal/export"
	"github.com/dshctl/dshctl/internal/seam"
)

// memBackend is the reference backend the suite is tested against: a store
// in memory, one per dir, shared by every service opened on that dir. Its
// logs are physical records (header line, body lines, a torn tail) decoded
// with the seam helpers, like a file; write ownership is a map entry, so
// "another process" is an entry no service made.
type memBackend struct{}

var memDisks sync.Map // dir → *memDisk

// memDisk is one store. Its mutex guards every service, handle and log on it.
type memDisk struct {
	dir          string
	mu           sync.Mutex
	logs         map[string]*memLog
	owners       map[string]any // id → the write handle or foreign holder
	incarnations int
}

type memLog struct {
	header      []byte
	rows        [][]byte // committed body records
	torn        []byte   // an interrupted append, never served
	incarnation int
	changes     int
}

func (memBackend) Versions() []int { return []int{0, 1, 2, 3, 4} }

func (memBackend) New(t *testing.T, dir string) seam.Service {
	d, _ := memDisks.LoadOrStore(dir, &memDisk{dir: dir, logs: map[string]*memLog{}, owners: map[string]any{}})
	return &memService{disk: d.(*memDisk), pending: map[string]*memHandle{}, writers: map[*memHandle]bool{}}
}

func (b memBackend) disk(t *testing.T, dir string) *memDisk {
	d, ok := memDisks.Load(dir)
	if !ok {
		t.Fatalf("memstore: no store at %s", dir)
	}
	return d.(*memDisk)
}

func (b memBackend) WriteLog(t *testing.T, dir string, h seam.Header, records [][]byte) {
	b.New(t, dir)
	d := b.disk(t, dir)
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.logs[h.ID] != nil {
		t.Fatalf("memstore: WriteLog: %q exists", h.ID)
	}
	d.incarnations++
	d.logs[h.ID] = &memLog{header: h.AppendJSON(nil), rows: slices.Clone(records), incarnation: d.incarnations}
}

func (b memBackend) TearTail(t *testing.T, dir, id string) {
	d := b.disk(t, dir)
	d.mu.Lock()
	defer d.mu.Unlock()
	log := d.logs[id]
	if log == nil {
		t.Fatalf("memstore: TearTail: no session %q", id)
	}
	log.torn = []byte(`{"type":"turn/start","seq":`)
	log.changes++
}

func (b memBackend) HoldLockElsewhere(t *testing.T, dir, id string) (release func()) {
	d := b.disk(t, dir)
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.owners[id] != nil {
		t.Fatalf("memstore: HoldLockElsewhere: %q is owned", id)
	}
	holder := new(int)
	d.owners[id] = holder
	return func() {
		d.mu.Lock()
		defer d.mu.Unlock()
		if d.owners[id] == holder {
			delete(d.owners, id)
		}
	}
}

func memErr(kind error, op, id string) *seam.Error {
	return &seam.Error{Kind: kind, Op: op, ID: id, Pos: seam.NoPos}
}

// decode validates the whole log and returns its events.
func (l *memLog) decode(id string) (seam.Header, []seam.Event, int64, error) {
	h, err := seam.ParseHeader(l.header)
	if err != nil {
		return h, nil, 0, seam.Wrap(err, seam.ErrCorrupt, "open", id)
	}
	var (
		events []seam.Event
		cur    seam.Cursor
		seed   seam.SeedMarker
	)
	for _, row := range l.rows {
		rec, err := seam.DecodeRecord(row, h.Version)
		if err == nil {
			err = cur.Advance(&rec)
		}
		if err != nil {
			return h, nil, 0, seam.Wrap(err, seam.ErrCorrupt, "open", id)
		}
		for _, e := range rec.Events() {
			if err := seam.CheckVocabulary(&e, h.Version); err != nil {
				return h, nil, 0, seam.Wrap(err, seam.ErrUnsupportedFormat, "open", id)
			}
			seed.Observe(&e)
			events = append(events, e)
		}
	}
	inherited, err := seed.Result(&h)
	return h, events, inherited, seam.Wrap(err, seam.ErrCorrupt, "open", id)
}

// nextSeq derives the event count from the last committed record alone.
func (l *memLog) nextSeq(v int) int64 {
	if len(l.rows) == 0 {
		return 0
	}
	rec, err := seam.DecodeRecord(l.rows[len(l.rows)-1], v)
	if err != nil {
		return 0
	}
	return rec.NextSeq()
}

func (d *memDisk) snapshot(id string, l *memLog) (seam.Snapshot, error) {
	h, err := seam.ParseHeader(l.header)
	snap := seam.Snapshot{
		Header:    h,
		Revision:  fmt.Sprintf("%d.%d", l.incarnation, l.changes),
		SizeBytes: int64(len(l.header) + 1 + len(l.torn)),
		Location:  seam.Location{Backend: "mem", Path: d.dir + "/" + id, Encoding: "none", Generation: h.Version, TornBytes: int64(len(l.torn))},
	}
	for _, row := range l.rows {
		snap.SizeBytes += int64(len(row) + 1)
	}
	if err != nil {
		snap.Header.ID = id
		return snap, seam.Wrap(err, seam.ErrCorrupt, "stat", id)
	}
	snap.EventCount = l.nextSeq(h.Version)
	return snap, nil
}

type memService struct {
	disk    *memDisk
	pending map[string]*memHandle // creates not yet published
	writers map[*memHandle]bool   // open write handles
}

func (s *memService) Create(ctx context.Context, h seam.Header, opts seam.CreateOptions) (seam.Handle, error) {
	if err := seam.ValidateHeader(h, ""); err != nil {
		return nil, seam.Wrap(err, seam.ErrInvalid, "create", h.ID)
	}
	s.disk.mu.Lock()
	defer s.disk.mu.Unlock()
	if s.disk.logs[h.ID] != nil || s.pending[h.ID] != nil {
		return nil, memErr(seam.ErrAlreadyExists, "create", h.ID)
	}
	hd := &memHandle{svc: s, id: h.ID, header: h, access: seam.Write, pending: true, inherited: opts.InheritedEventCount}
	s.pending[h.ID] = hd
	s.writers[hd] = true
	return hd, nil
}

func (s *memService) Open(ctx context.Context, id string, access seam.Access) (seam.Handle, error) {
	s.disk.mu.Lock()
	defer s.disk.mu.Unlock()
	l := s.disk.logs[id]
	if l == nil {
		return nil, memErr(seam.ErrNotFound, "open", id)
	}
	if access == seam.Write && s.disk.owners[id] != nil {
		return nil, memErr(seam.ErrAlreadyOwned, "open", id)
	}
	h, _, inherited, err := l.decode(id)
	if err != nil {
		return nil, err
	}
	hd := &memHandle{svc: s, id: id, header: h, access: access, inherited: inherited}
	if access == seam.Write {
		s.disk.owners[id] = hd
		s.writers[hd] = true
	}
	return hd, nil
}

func (s *memService) Stat(ctx context.Context, id string) (seam.Snapshot, error) {
	s.disk.mu.Lock()
	defer s.disk.mu.Unlock()
	if l := s.disk.logs[id]; l != nil {
		return s.disk.snapshot(id, l)
	}
	if p := s.pending[id]; p != nil {
		return seam.Snapshot{Header: p.header, Revision: "pending", Location: seam.Location{Backend: "mem"}}, nil
	}
	return seam.Snapshot{}, memErr(seam.ErrNotFound, "stat", id)
}

func (s *memService) List(ctx context.Context) ([]seam.Entry, error) {
	s.disk.mu.Lock()
	defer s.disk.mu.Unlock()
	var out []seam.Entry
	for id, l := range s.disk.logs {
		snap, err := s.disk.snapshot(id, l)
		out = append(out, seam.Entry{Snapshot: snap, Err: err})
	}
	for _, p := range s.pending {
		out = append(out, seam.Entry{Snapshot: seam.Snapshot{Header: p.header, Revision: "pending", Location: seam.Location{Backend: "mem"}}})
	}
	return out, nil
}

func (s *memService) Flush(ctx context.Context) error {
	s.disk.mu.Lock()
	writers := make([]*memHandle, 0, len(s.writers))
	for h := range s.writers {
		writers = append(writers, h)
	}
	s.disk.mu.Unlock()
	var errs []error
	for _, h := range writers {
		errs = append(errs, h.Flush(ctx))
	}
	return errors.Join(errs...)
}

func (s *memService) Close() error { return nil }

type memHandle struct {
	svc       *memService
	id        string
	header    seam.Header
	access    seam.Access
	inherited int64
	pending   bool // created, not yet published
	closed    bool
}

func (h *memHandle) ID() string                 { return h.id }
func (h *memHandle) Header() seam.Header        { return h.header }
func (h *memHandle) InheritedEventCount() int64 { return h.inherited }
func (h *memHandle) Access() seam.Access        { return h.access }

// rows returns a copy of the committed records under the lock, or an error
// for a closed handle.
func (h *memHandle) rows(op string) ([][]byte, error) {
	d := h.svc.disk
	d.mu.Lock()
	defer d.mu.Unlock()
	if h.closed {
		return nil, memErr(seam.ErrHandleClosed, op, h.id)
	}
	if h.pending {
		return nil, nil
	}
	return slices.Clone(d.logs[h.id].rows), nil
}

func (h *memHandle) Snapshot(ctx context.Context) (seam.Snapshot, error) {
	d := h.svc.disk
	d.mu.Lock()
	defer d.mu.Unlock()
	switch {
	case h.closed:
		return seam.Snapshot{}, memErr(seam.ErrHandleClosed, "stat", h.id)
	case h.pending:
		return seam.Snapshot{Header: h.header, Revision: "pending", Location: seam.Location{Backend: "mem"}}, nil
	}
	return d.snapshot(h.id, d.logs[h.id])
}

func (h *memHandle) Read(ctx context.Context, offset, length int64) ([]seam.Event, error) {
	rows, err := h.rows("read")
	if err != nil {
		return nil, err
	}
	if offset < 0 {
		return nil, memErr(seam.ErrInvalid, "read", h.id)
	}
	out := []seam.Event{}
	for _, row := range rows {
		rec, err := seam.DecodeRecord(row, h.header.Version)
		if err != nil {
			return nil, seam.Wrap(err, seam.ErrCorrupt, "read", h.id)
		}
		for _, e := range rec.Events() {
			if e.Seq >= offset && (length < 0 || e.Seq < offset+length) {
				out = append(out, e)
			}
		}
	}
	return out, nil
}

func (h *memHandle) Scan(ctx context.Context, opts seam.ScanOptions) iter.Seq2[seam.Event, error] {
	return func(yield func(seam.Event, error) bool) {
		rows, err := h.rows("scan")
		if err != nil {
			yield(seam.Event{}, err)
			return
		}
		if opts.Reverse {
			slices.Reverse(rows)
		}
		var used int64
		for _, row := range rows {
			if used += int64(len(row)); opts.MaxBytes > 0 && used > opts.MaxBytes {
				yield(seam.Event{}, memErr(seam.ErrScanBudget, "scan", h.id))
				return
			}
			rec, err := seam.DecodeRecord(row, h.header.Version)
			if err != nil {
				yield(seam.Event{}, seam.Wrap(err, seam.ErrCorrupt, "scan", h.id))
				return
			}
			events := rec.Events()
			if opts.Reverse {
				slices.Reverse(events)
			}
			for _, e := range events {
				if opts.Reverse && opts.From > 0 && e.Seq >= opts.From || !opts.Reverse && e.Seq < opts.From {
					continue
				}
				if !yield(e, nil) {
					return
				}
			}
		}
	}
}

// publish stores a created session; the caller holds the lock.
func (h *memHandle) publish(op string) error {
	d := h.svc.disk
	if d.logs[h.id] != nil {
		return memErr(seam.ErrAlreadyExists, op, h.id)
	}
	d.incarnations++
	d.logs[h.id] = &memLog{header: h.header.AppendJSON(nil), incarnation: d.incarnations}
	d.owners[h.id] = h
	delete(h.svc.pending, h.id)
	h.pending = false
	return nil
}

// writable checks that h may write; the caller holds the lock.
func (h *memHandle) writable(op string) error {
	switch {
	case h.closed:
		return memErr(seam.ErrHandleClosed, op, h.id)
	case h.access != seam.Write:
		return memErr(seam.ErrReadOnly, op, h.id)
	}
	return nil
}

func (h *memHandle) Append(ctx context.Context, events []seam.Event) error {
	d := h.svc.disk
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := h.writable("append"); err != nil || len(events) == 0 {
		return err
	}
	var next int64
	if !h.pending {
		next = d.logs[h.id].nextSeq(h.header.Version)
	}
	batch, err := seam.PrepareBatch(h.id, h.header.Version, next, events)
	if err != nil {
		return err
	}
	if h.pending {
		if err := h.publish("append"); err != nil {
			return err
		}
	}
	l := d.logs[h.id]
	l.torn = nil
	for i := range batch {
		l.rows = append(l.rows, batch[i].AppendRecordJSON(nil, h.header.Version))
	}
	l.changes++
	return nil
}

func (h *memHandle) Flush(ctx context.Context) error {
	d := h.svc.disk
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := h.writable("flush"); err != nil || !h.pending {
		return err
	}
	return h.publish("flush")
}

func (h *memHandle) Close() error {
	d := h.svc.disk
	d.mu.Lock()
	defer d.mu.Unlock()
	if h.closed {
		return nil
	}
	h.closed = true
	delete(h.svc.writers, h)
	if h.pending {
		delete(h.svc.pending, h.id)
	} else if d.owners[h.id] == h {
		delete(d.owners, h.id)
	}
	return nil
}

func TestMemBackend(t *testing.T) {
	Run(t, memBackend{}, WithExport(func(ctx context.Context, svc seam.Service, id string, w io.Writer) error {
		_, err := export.Session(ctx, svc, id, w, export.Options{})
		return err
	}))
}
