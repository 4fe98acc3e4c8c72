package seamtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/dshctl/dshctl/internal/seam"
)

// suite runs the points for one backend and one format version.
type suite struct {
	b Backend
	v int
	// export is the export point 22 checks (WithExport).
	export ExportFunc
}

var ctx = context.Background()

// service opens a fresh service on dir, closed at cleanup.
func (s *suite) service(t *testing.T, dir string) seam.Service {
	t.Helper()
	svc := s.b.New(t, dir)
	t.Cleanup(func() {
		if err := svc.Close(); err != nil {
			t.Errorf("service Close: %v", err)
		}
	})
	return svc
}

// create creates session id in svc; the handle is closed at cleanup.
func (s *suite) create(t *testing.T, svc seam.Service, id string) seam.Handle {
	t.Helper()
	h, err := svc.Create(ctx, header(s.v, id), seam.CreateOptions{})
	if err != nil {
		t.Fatalf("Create(%q): %v", id, err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

// open opens session id in svc; the handle is closed at cleanup.
func open(t *testing.T, svc seam.Service, id string, access seam.Access) seam.Handle {
	t.Helper()
	h, err := svc.Open(ctx, id, access)
	if err != nil {
		t.Fatalf("Open(%q, %v): %v", id, access, err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

// stored creates session id on a fresh service over dir, appends events and
// closes both, so that only what is stored remains.
func (s *suite) stored(t *testing.T, dir, id string, events []seam.Event) {
	t.Helper()
	svc := s.b.New(t, dir)
	h, err := svc.Create(ctx, header(s.v, id), seam.CreateOptions{})
	if err != nil {
		t.Fatalf("Create(%q): %v", id, err)
	}
	if err := h.Append(ctx, events); err != nil {
		t.Fatalf("Append: %v", err)
	}
	if len(events) == 0 {
		if err := h.Flush(ctx); err != nil {
			t.Fatalf("Flush: %v", err)
		}
	}
	if err := h.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := svc.Close(); err != nil {
		t.Fatalf("service Close: %v", err)
	}
}

func appendOK(t *testing.T, h seam.Handle, events []seam.Event) {
	t.Helper()
	if err := h.Append(ctx, events); err != nil {
		t.Fatalf("Append(seq %d..): %v", events[0].Seq, err)
	}
}

func readAll(t *testing.T, h seam.Handle) []seam.Event {
	t.Helper()
	got, err := h.Read(ctx, 0, -1)
	if err != nil {
		t.Fatalf("Read(0, -1): %v", err)
	}
	return got
}

func stat(t *testing.T, svc seam.Service, id string) seam.Snapshot {
	t.Helper()
	snap, err := statFind(t, svc, id)
	if err != nil {
		t.Fatalf("Stat(%q): %v", id, err)
	}
	return snap
}

// statFind is svc.Stat, checking that a seam.Finder's Find agrees with it
// on whether id is stored.
func statFind(t *testing.T, svc seam.Service, id string) (seam.Snapshot, error) {
	t.Helper()
	snap, err := svc.Stat(ctx, id)
	if f, ok := svc.(seam.Finder); ok {
		ferr := f.Find(ctx, id)
		if errors.Is(ferr, seam.ErrNotFound) != errors.Is(err, seam.ErrNotFound) || err == nil && ferr != nil {
			t.Fatalf("Find(%q) = %v, but Stat's error is %v", id, ferr, err)
		}
	}
	return snap, err
}

// listed returns the List entry of id, or false.
func listed(t *testing.T, svc seam.Service, id string) (seam.Entry, bool) {
	t.Helper()
	entries, err := svc.List(ctx)
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	for _, e := range entries {
		if e.Snapshot.Header.ID == id {
			return e, true
		}
	}
	return seam.Entry{}, false
}

// wantErr fails t unless err is a *seam.Error matching kind: no backend
// returns a bare os or SQL error.
func wantErr(t *testing.T, err, kind error, what string) {
	t.Helper()
	var se *seam.Error
	switch {
	case err == nil:
		t.Fatalf("%s: no error, want %v", what, kind)
	case !errors.Is(err, kind):
		t.Fatalf("%s: %v, want %v", what, err, kind)
	case !errors.As(err, &se):
		t.Fatalf("%s: %T %v is not a *seam.Error", what, err, err)
	}
}

// sameEvents fails t unless got and want are the same logical events.
func sameEvents(t *testing.T, what string, got, want []seam.Event) {
	t.Helper()
	for i := range min(len(got), len(want)) {
		if g, w := got[i].AppendJSON(nil), want[i].AppendJSON(nil); !bytes.Equal(g, w) {
			t.Fatalf("%s: event %d:\n got %s\nwant %s", what, i, g, w)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("%s: %d events, want %d", what, len(got), len(want))
	}
}

func sameHeader(t *testing.T, what string, got, want seam.Header) {
	t.Helper()
	if g, w := got.AppendJSON(nil), want.AppendJSON(nil); !bytes.Equal(g, w) {
		t.Fatalf("%s: header\n got %s\nwant %s", what, g, w)
	}
}

func scan(h seam.Handle, opts seam.ScanOptions) ([]seam.Event, error) {
	var out []seam.Event
	for e, err := range h.Scan(ctx, opts) {
		if err != nil {
			return out, err
		}
		out = append(out, e)
	}
	return out, nil
}

func (s *suite) roundTrip(t *testing.T) {
	const id = "round-trip"
	all := script(s.v, 20)
	dir := t.TempDir()
	svc := s.service(t, dir)
	h := s.create(t, svc, id)
	if h.ID() != id || h.Access() != seam.Write || h.InheritedEventCount() != 0 {
		t.Fatalf("identity: ID %q, Access %v, InheritedEventCount %d", h.ID(), h.Access(), h.InheritedEventCount())
	}
	sameHeader(t, "Header()", h.Header(), header(s.v, id))
	appendOK(t, h, all[:7])
	appendOK(t, h, nil) // an empty batch is a no-op
	appendOK(t, h, all[7:])

	for _, c := range []struct {
		offset, length int64
		want           []seam.Event
	}{
		{0, -1, all},
		{0, 20, all},
		{3, 4, all[3:7]},
		{5, -1, all[5:]},
		{18, 100, all[18:]},
		{7, 0, nil},
		{20, -1, nil},
		{25, 3, nil},
	} {
		got, err := h.Read(ctx, c.offset, c.length)
		if err != nil {
			t.Fatalf("Read(%d, %d): %v", c.offset, c.length, err)
		}
		sameEvents(t, fmt.Sprintf("Read(%d, %d)", c.offset, c.length), got, c.want)
	}

	reversed := slices.Clone(all)
	slices.Reverse(reversed)
	for _, c := range []struct {
		opts seam.ScanOptions
		want []seam.Event
	}{
		{seam.ScanOptions{}, all},
		{seam.ScanOptions{From: 12}, all[12:]},
		{seam.ScanOptions{Reverse: true}, reversed},
		{seam.ScanOptions{Reverse: true, From: 3}, reversed[17:]},
	} {
		got, err := scan(h, c.opts)
		if err != nil {
			t.Fatalf("Scan(%+v): %v", c.opts, err)
		}
		sameEvents(t, fmt.Sprintf("Scan(%+v)", c.opts), got, c.want)
	}
	got, err := scan(h, seam.ScanOptions{MaxBytes: 1})
	if !errors.Is(err, seam.ErrScanBudget) || len(got) >= len(all) {
		t.Fatalf("Scan(MaxBytes 1): %d events, err %v; want ErrScanBudget before the end", len(got), err)
	}

	// A fresh service reads back what was appended, header included.
	r := open(t, s.service(t, dir), id, seam.Read)
	if r.Access() != seam.Read {
		t.Fatalf("read handle Access() = %v", r.Access())
	}
	sameHeader(t, "fresh Header()", r.Header(), header(s.v, id))
	sameEvents(t, "fresh Read(0, -1)", readAll(t, r), all)
}

func (s *suite) negativeOffset(t *testing.T) {
	const id = "negative-offset"
	dir := t.TempDir()
	s.stored(t, dir, id, script(s.v, 3))
	svc := s.service(t, dir)
	for _, access := range []seam.Access{seam.Read, seam.Write} {
		h := open(t, svc, id, access)
		_, err := h.Read(ctx, -1, -1)
		wantErr(t, err, seam.ErrInvalid, fmt.Sprintf("%v handle Read(-1, -1)", access))
		h.Close()
	}
}

func (s *suite) duplicateCreatePending(t *testing.T) {
	const id = "pending-dup"
	svc := s.service(t, t.TempDir())
	h := s.create(t, svc, id)
	_, err := svc.Create(ctx, header(s.v, id), seam.CreateOptions{})
	wantErr(t, err, seam.ErrAlreadyExists, "second Create while the first is pending")
	if err := h.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	h = s.create(t, svc, id) // free again after the erasing close
	appendOK(t, h, script(s.v, 2))
}

func (s *suite) concurrentCreates(t *testing.T) {
	const racers = 8
	// race runs create concurrently, once per racer, and checks that exactly
	// one wins and every other gets ErrAlreadyExists.
	race := func(t *testing.T, create func(i int) (seam.Handle, error)) {
		t.Helper()
		handles := make([]seam.Handle, racers)
		errs := make([]error, racers)
		var wg sync.WaitGroup
		for i := range racers {
			wg.Go(func() { handles[i], errs[i] = create(i) })
		}
		wg.Wait()
		winners := 0
		for i, err := range errs {
			if err == nil {
				winners++
				t.Cleanup(func() { handles[i].Close() })
				continue
			}
			wantErr(t, err, seam.ErrAlreadyExists, fmt.Sprintf("racer %d", i))
		}
		if winners != 1 {
			t.Fatalf("%d of %d racing creates won, want 1", winners, racers)
		}
	}
	t.Run("one_service", func(t *testing.T) {
		svc := s.service(t, t.TempDir())
		race(t, func(int) (seam.Handle, error) {
			return svc.Create(ctx, header(s.v, "race"), seam.CreateOptions{})
		})
	})
	t.Run("many_services", func(t *testing.T) {
		// Creates are lazy: a loser may learn it lost only when it publishes.
		dir := t.TempDir()
		svcs := make([]seam.Service, racers)
		for i := range svcs {
			svcs[i] = s.service(t, dir)
		}
		race(t, func(i int) (seam.Handle, error) {
			h, err := svcs[i].Create(ctx, header(s.v, "race"), seam.CreateOptions{})
			if err != nil {
				return nil, err
			}
			if err := h.Append(ctx, script(s.v, 1)); err != nil {
				h.Close()
				return nil, err
			}
			return h, nil
		})
	})
}

func (s *suite) duplicateCreateStored(t *testing.T) {
	for _, n := range []int{0, 3} {
		t.Run(fmt.Sprintf("%d_events", n), func(t *testing.T) {
			const id = "stored-dup"
			dir := t.TempDir()
			s.stored(t, dir, id, script(s.v, n))
			svc := s.service(t, dir)
			_, err := svc.Create(ctx, header(s.v, id), seam.CreateOptions{})
			wantErr(t, err, seam.ErrAlreadyExists, "Create of a stored id")
			sameEvents(t, "stored log after the failed Create", readAll(t, open(t, svc, id, seam.Read)), script(s.v, n))
		})
	}
}

func (s *suite) openAbsent(t *testing.T) {
	const id = "absent"
	dir := t.TempDir()
	s.stored(t, dir, "present", script(s.v, 1))
	svc := s.service(t, dir)
	for _, access := range []seam.Access{seam.Read, seam.Write} {
		_, err := svc.Open(ctx, id, access)
		wantErr(t, err, seam.ErrNotFound, fmt.Sprintf("Open(absent, %v)", access))
		var se *seam.Error
		if errors.As(err, &se); se.ID != id {
			t.Fatalf("Open(absent, %v): error names session %q, want %q", access, se.ID, id)
		}
	}
	_, err := statFind(t, svc, id)
	wantErr(t, err, seam.ErrNotFound, "Stat(absent)")
}

func (s *suite) singleWriter(t *testing.T) {
	const id = "owned"
	dir := t.TempDir()
	s.stored(t, dir, id, script(s.v, 4))
	svc, other := s.service(t, dir), s.service(t, dir)
	// busy checks that every write open fails while a writer holds id, and
	// that reads still work.
	busy := func(t *testing.T, who string) {
		t.Helper()
		for name, sv := range map[string]seam.Service{"same service": svc, "other service": other} {
			_, err := sv.Open(ctx, id, seam.Write)
			wantErr(t, err, seam.ErrAlreadyOwned, fmt.Sprintf("write Open (%s) while %s holds it", name, who))
			r := open(t, sv, id, seam.Read)
			sameEvents(t, "Read beside a writer", readAll(t, r), script(s.v, 4))
			r.Close()
		}
	}
	t.Run("in_process", func(t *testing.T) {
		w := open(t, svc, id, seam.Write)
		busy(t, "a handle of this process")
		if err := w.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		open(t, other, id, seam.Write).Close() // released by Close
	})
	t.Run("created", func(t *testing.T) {
		h := s.create(t, svc, "owned-new")
		if err := h.Flush(ctx); err != nil {
			t.Fatalf("Flush: %v", err)
		}
		_, err := other.Open(ctx, "owned-new", seam.Write)
		wantErr(t, err, seam.ErrAlreadyOwned, "write Open of a session its creator holds")
		h.Close()
		open(t, other, "owned-new", seam.Write).Close()
	})
	t.Run("other_process", func(t *testing.T) {
		release := s.b.HoldLockElsewhere(t, dir, id)
		busy(t, "another process")
		busy(t, "another process") // a failed write open leaves no claim behind
		release()
		open(t, svc, id, seam.Write).Close()
	})
}

func (s *suite) readOnly(t *testing.T) {
	const id = "read-only"
	dir := t.TempDir()
	s.stored(t, dir, id, script(s.v, 4))
	svc := s.service(t, dir)
	r := open(t, svc, id, seam.Read)
	wantErr(t, r.Append(ctx, script(s.v, 5)[4:]), seam.ErrReadOnly, "Append on a read handle")
	wantErr(t, r.Flush(ctx), seam.ErrReadOnly, "Flush on a read handle")
	sameEvents(t, "log after refused Append", readAll(t, open(t, s.service(t, dir), id, seam.Read)), script(s.v, 4))
}

func (s *suite) closedHandle(t *testing.T) {
	const id = "closed"
	dir := t.TempDir()
	s.stored(t, dir, id, script(s.v, 4))
	svc := s.service(t, dir)
	for _, access := range []seam.Access{seam.Read, seam.Write} {
		t.Run(access.String(), func(t *testing.T) {
			h := open(t, svc, id, access)
			if err := h.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
			if err := h.Close(); err != nil {
				t.Fatalf("second Close: %v", err)
			}
			_, err := h.Read(ctx, 0, -1)
			wantErr(t, err, seam.ErrHandleClosed, "Read")
			_, err = scan(h, seam.ScanOptions{})
			wantErr(t, err, seam.ErrHandleClosed, "Scan")
			wantErr(t, h.Append(ctx, script(s.v, 5)[4:]), seam.ErrHandleClosed, "Append")
			wantErr(t, h.Flush(ctx), seam.ErrHandleClosed, "Flush")
		})
	}
	sameEvents(t, "log after operations on closed handles", readAll(t, open(t, svc, id, seam.Read)), script(s.v, 4))
}

func (s *suite) serviceFlush(t *testing.T) {
	dir := t.TempDir()
	svc := s.service(t, dir)
	ids := []string{"flush-a", "flush-b", "flush-c"}
	for _, id := range ids {
		s.create(t, svc, id)
	}
	if err := svc.Flush(ctx); err != nil {
		t.Fatalf("service Flush: %v", err)
	}
	fresh := s.service(t, dir)
	for _, id := range ids {
		if snap := stat(t, fresh, id); snap.EventCount != 0 {
			t.Fatalf("Stat(%q).EventCount = %d after Flush, want 0", id, snap.EventCount)
		}
		if _, ok := listed(t, fresh, id); !ok {
			t.Fatalf("List of a fresh service lacks flushed %q", id)
		}
	}
}

func (s *suite) pendingVisibility(t *testing.T) {
	const id = "pending"
	dir := t.TempDir()
	svc := s.service(t, dir)
	s.create(t, svc, id)
	snap := stat(t, svc, id)
	sameHeader(t, "Stat of a pending session", snap.Header, header(s.v, id))
	if snap.EventCount != 0 {
		t.Fatalf("Stat of a pending session: EventCount %d", snap.EventCount)
	}
	if _, ok := listed(t, svc, id); !ok {
		t.Fatal("List of the creating service lacks the pending session")
	}
	fresh := s.service(t, dir)
	_, err := statFind(t, fresh, id)
	wantErr(t, err, seam.ErrNotFound, "Stat of another service's pending session")
	if _, ok := listed(t, fresh, id); ok {
		t.Fatal("List of a fresh service shows another service's pending session")
	}
}

func (s *suite) closeErases(t *testing.T) {
	const id = "erased"
	dir := t.TempDir()
	svc := s.service(t, dir)
	h := s.create(t, svc, id)
	if err := h.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	for name, sv := range map[string]seam.Service{"same service": svc, "fresh service": s.service(t, dir)} {
		_, err := statFind(t, sv, id)
		wantErr(t, err, seam.ErrNotFound, "Stat after an erasing Close ("+name+")")
		if _, ok := listed(t, sv, id); ok {
			t.Fatalf("List (%s) shows an erased session", name)
		}
	}
}

func (s *suite) flushMaterializes(t *testing.T) {
	const id = "empty"
	dir := t.TempDir()
	svc := s.service(t, dir)
	h := s.create(t, svc, id)
	if err := h.Flush(ctx); err != nil {
		t.Fatalf("Flush: %v", err)
	}
	check := func(what string) {
		t.Helper()
		fresh := s.service(t, dir)
		snap := stat(t, fresh, id)
		sameHeader(t, what, snap.Header, header(s.v, id))
		if snap.EventCount != 0 {
			t.Fatalf("%s: EventCount %d", what, snap.EventCount)
		}
		if got := readAll(t, open(t, fresh, id, seam.Read)); len(got) != 0 {
			t.Fatalf("%s: read %d events", what, len(got))
		}
	}
	check("fresh service after Flush")
	if err := h.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	check("fresh service after Flush and Close")
}

func (s *suite) freshness(t *testing.T) {
	const id = "fresh"
	all := script(s.v, 20)
	dir := t.TempDir()
	svc := s.service(t, dir)
	w := s.create(t, svc, id)
	appendOK(t, w, all[:2])
	r := open(t, svc, id, seam.Read) // opened before the later appends
	done := 2
	for _, end := range []int{5, 6, 13, 20} {
		appendOK(t, w, all[done:end])
		done = end
		for name, h := range map[string]seam.Handle{"writer": w, "earlier reader": r, "new reader": open(t, svc, id, seam.Read)} {
			sameEvents(t, fmt.Sprintf("%s after Append up to %d", name, end), readAll(t, h), all[:end])
		}
		if n := stat(t, svc, id).EventCount; n != int64(end) {
			t.Fatalf("Stat after Append up to %d: EventCount %d", end, n)
		}
	}
}

func (s *suite) continueAfterReopen(t *testing.T) {
	const id = "continued"
	all := script(s.v, 15)
	dir := t.TempDir()
	s.stored(t, dir, id, all[:9])
	svc := s.service(t, dir)
	if n := stat(t, svc, id).EventCount; n != 9 {
		t.Fatalf("Stat.EventCount = %d, want 9", n)
	}
	w := open(t, svc, id, seam.Write)
	wantErr(t, w.Append(ctx, all[:1]), seam.ErrSeqMismatch, "Append at seq 0 to a stored log")
	appendOK(t, w, all[9:])
	w.Close()
	sameEvents(t, "continued log", readAll(t, open(t, s.service(t, dir), id, seam.Read)), all)
}

func (s *suite) nonContiguous(t *testing.T) {
	const id = "gaps"
	all := script(s.v, 12)
	renumber := func(seqs ...int64) []seam.Event {
		out := make([]seam.Event, len(seqs))
		for i, seq := range seqs {
			out[i] = all[6+i]
			out[i].Seq = seq
		}
		return out
	}
	dir := t.TempDir()
	s.stored(t, dir, id, all[:6])
	svc := s.service(t, dir)
	w := open(t, svc, id, seam.Write)
	for _, c := range []struct {
		name  string
		batch []seam.Event
		want  string
	}{
		{"gap", renumber(7, 8), `append seq mismatch for "gaps": expected 6 at index 0, got 7`},
		{"overlap", renumber(5, 6), `append seq mismatch for "gaps": expected 6 at index 0, got 5`},
		{"hole_inside", renumber(6, 7, 9), `append seq mismatch for "gaps": expected 8 at index 2, got 9`},
		{"repeat_inside", renumber(6, 6), `append seq mismatch for "gaps": expected 7 at index 1, got 6`},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := w.Append(ctx, c.batch)
			wantErr(t, err, seam.ErrSeqMismatch, "Append")
			if err.Error() != c.want {
				t.Fatalf("Append: message %q, want %q", err.Error(), c.want)
			}
			sameEvents(t, "writer after refused batch", readAll(t, w), all[:6])
			sameEvents(t, "fresh service after refused batch", readAll(t, open(t, s.service(t, dir), id, seam.Read)), all[:6])
		})
	}
	appendOK(t, w, all[6:]) // the handle still works
}

func (s *suite) invalidPayload(t *testing.T) {
	const id = "payloads"
	all := script(s.v, 8)
	dir := t.TempDir()
	s.stored(t, dir, id, all[:5])
	svc := s.service(t, dir)
	w := open(t, svc, id, seam.Write)
	for _, c := range []struct{ name, data string }{
		{"truncated", `{"turn":`},
		{"nan", `{"turn":NaN}`},
		{"infinity", `{"turn":Infinity}`},
		{"trailing_garbage", `{"turn":1}}`},
		{"single_quotes", `{'turn':1}`},
		{"empty", ``},
	} {
		t.Run(c.name, func(t *testing.T) {
			batch := slices.Clone(all[5:8])
			batch[1].Data = []byte(c.data) // a valid event before it must not be stored either
			wantErr(t, w.Append(ctx, batch), seam.ErrInvalid, "Append")
			sameEvents(t, "writer after refused batch", readAll(t, w), all[:5])
			sameEvents(t, "fresh service after refused batch", readAll(t, open(t, s.service(t, dir), id, seam.Read)), all[:5])
		})
	}
	appendOK(t, w, all[5:])
}

func (s *suite) vocabulary(t *testing.T) {
	body := script(s.v, 8)
	unknown := seam.Event{Type: "plugin/roleplay-opened", Seq: 8, Time: createdAt + 900, Data: []byte(`{"scene":"inn"}`)}
	t.Run("not_ignorable", func(t *testing.T) {
		const id = "unknown-type"
		dir := t.TempDir()
		s.b.WriteLog(t, dir, header(s.v, id), records(s.v, append(slices.Clone(body), unknown)))
		svc := s.service(t, dir)
		// Refused either when the read handle opens or when it reads.
		if r, err := svc.Open(ctx, id, seam.Read); err == nil {
			_, err = r.Read(ctx, 0, -1)
			r.Close()
			wantErr(t, err, seam.ErrUnsupportedFormat, "Read of a log with an unknown type")
		} else {
			wantErr(t, err, seam.ErrUnsupportedFormat, "read Open of a log with an unknown type")
		}
		for range 2 { // the failed open released its claim: the second fails the same way
			_, err := svc.Open(ctx, id, seam.Write)
			wantErr(t, err, seam.ErrUnsupportedFormat, "write Open of a log with an unknown type")
		}
	})
	t.Run("ignorable", func(t *testing.T) {
		const id = "ignorable-type"
		dir := t.TempDir()
		unknown := unknown
		unknown.Ignorable = true
		if _, ok := s.b.(NoIgnorableFlag); ok {
			s.stored(t, dir, id, body)
			w := open(t, s.service(t, dir), id, seam.Write)
			wantErr(t, w.Append(ctx, []seam.Event{unknown}), seam.ErrInvalid, "Append of an ignorable event to a format without the flag")
			sameEvents(t, "Read after the refused Append", readAll(t, open(t, s.service(t, dir), id, seam.Read)), body)
			return
		}
		want := append(slices.Clone(body), unknown)
		s.b.WriteLog(t, dir, header(s.v, id), records(s.v, want))
		svc := s.service(t, dir)
		sameEvents(t, "Read", readAll(t, open(t, svc, id, seam.Read)), want)
		w := open(t, svc, id, seam.Write)
		next := script(s.v, 10)[9]
		appendOK(t, w, []seam.Event{next})
		sameEvents(t, "Read after Append", readAll(t, w), append(want, next))
	})
}

func (s *suite) tornTail(t *testing.T) {
	const id = "torn"
	all := script(s.v, 14)
	dir := t.TempDir()
	s.stored(t, dir, id, all[:10])
	s.b.TearTail(t, dir, id)

	svc := s.service(t, dir)
	if _, ok := s.b.(NoTornTail); ok {
		s.damagedFinal(t, svc, id)
		return
	}
	snap := stat(t, svc, id)
	if snap.EventCount != 10 || snap.Location.TornBytes <= 0 {
		t.Fatalf("Stat of a torn log: EventCount %d, TornBytes %d; want 10 and > 0", snap.EventCount, snap.Location.TornBytes)
	}
	sameEvents(t, "Read of a torn log", readAll(t, open(t, svc, id, seam.Read)), all[:10])
	w := open(t, svc, id, seam.Write)
	sameEvents(t, "write handle Read of a torn log", readAll(t, w), all[:10])
	appendOK(t, w, all[10:])
	w.Close()

	fresh := s.service(t, dir)
	sameEvents(t, "Read after repairing Append", readAll(t, open(t, fresh, id, seam.Read)), all)
	snap = stat(t, fresh, id)
	if snap.EventCount != 14 || snap.Location.TornBytes != 0 {
		t.Fatalf("Stat after repairing Append: EventCount %d, TornBytes %d; want 14 and 0", snap.EventCount, snap.Location.TornBytes)
	}
}

// damagedFinal checks a log whose final record is damaged in a format
// without torn tails: every read of it is ErrCorrupt, and so is a write
// open, which must not remove the record.
func (s *suite) damagedFinal(t *testing.T, svc seam.Service, id string) {
	_, err := statFind(t, svc, id)
	wantErr(t, err, seam.ErrCorrupt, "Stat of a log whose final record is damaged")
	if e, ok := listed(t, svc, id); !ok || !errors.Is(e.Err, seam.ErrCorrupt) {
		t.Fatalf("List entry of a log whose final record is damaged: %v, err %v; want ErrCorrupt", ok, e.Err)
	}
	if h, err := svc.Open(ctx, id, seam.Read); err == nil {
		_, err = h.Read(ctx, 0, -1)
		h.Close()
		wantErr(t, err, seam.ErrCorrupt, "Read of a log whose final record is damaged")
	} else {
		wantErr(t, err, seam.ErrCorrupt, "read Open of a log whose final record is damaged")
	}
	_, err = svc.Open(ctx, id, seam.Write)
	wantErr(t, err, seam.ErrCorrupt, "write Open of a log whose final record is damaged")
	_, err = statFind(t, svc, id)
	wantErr(t, err, seam.ErrCorrupt, "Stat after the refused write Open")
}

func (s *suite) revisions(t *testing.T) {
	const id = "revisions"
	all := script(s.v, 6)
	dir := t.TempDir()
	svc := s.service(t, dir)
	// agree returns the revision Stat, List and a fresh service report, and
	// fails t when they differ.
	agree := func(what string) string {
		t.Helper()
		snap := stat(t, svc, id)
		e, ok := listed(t, svc, id)
		if !ok || e.Err != nil {
			t.Fatalf("%s: List entry %v, err %v", what, ok, e.Err)
		}
		fresh := stat(t, s.service(t, dir), id)
		if snap.Revision == "" || e.Snapshot.Revision != snap.Revision || fresh.Revision != snap.Revision {
			t.Fatalf("%s: revisions Stat %q, List %q, fresh Stat %q", what, snap.Revision, e.Snapshot.Revision, fresh.Revision)
		}
		if e.Snapshot.EventCount != snap.EventCount || e.Snapshot.SizeBytes != snap.SizeBytes || snap.SizeBytes <= 0 {
			t.Fatalf("%s: Stat %d events, %d bytes; List %d events, %d bytes", what,
				snap.EventCount, snap.SizeBytes, e.Snapshot.EventCount, e.Snapshot.SizeBytes)
		}
		return snap.Revision
	}
	w := s.create(t, svc, id)
	if err := w.Flush(ctx); err != nil {
		t.Fatalf("Flush: %v", err)
	}
	seen := []string{agree("after Flush")}
	for _, batch := range [][]seam.Event{all[:1], all[1:4], all[4:]} {
		appendOK(t, w, batch)
		rev := agree(fmt.Sprintf("after Append up to %d", batch[len(batch)-1].Seq))
		if slices.Contains(seen, rev) {
			t.Fatalf("revision %q repeats after an Append (seen %q)", rev, seen)
		}
		seen = append(seen, rev)
	}
}

func (s *suite) eventCount(t *testing.T) {
	packed, expanded := packedRecords(t)
	if len(expanded) != packedLogEvents {
		t.Fatalf("packedLog expands to %d events, want %d", len(expanded), packedLogEvents)
	}
	appended := script(s.v, 13)
	for _, c := range []struct {
		name string
		h    seam.Header
		body [][]byte // nil: create and append want
		want []seam.Event
	}{
		{"packed_v0", header(0, "packed"), packed, expanded},
		{"unpacked_v0", header(0, "unpacked"), records(0, expanded), expanded},
		{"appended_" + versionName(s.v), header(s.v, "appended"), nil, appended},
	} {
		for _, torn := range []bool{false, true} {
			name := c.name
			if torn {
				name += "_torn"
			}
			t.Run(name, func(t *testing.T) {
				dir := t.TempDir()
				if c.body == nil {
					s.stored(t, dir, c.h.ID, c.want)
				} else {
					s.b.WriteLog(t, dir, c.h, c.body)
				}
				if torn {
					if _, ok := s.b.(NoTornTail); ok {
						t.Skip("the format holds no torn tail (point 19 checks a damaged final record)")
					}
					s.b.TearTail(t, dir, c.h.ID)
				}
				svc := s.service(t, dir)
				got := readAll(t, open(t, svc, c.h.ID, seam.Read))
				sameEvents(t, "Read", got, c.want)
				if n := stat(t, svc, c.h.ID).EventCount; n != int64(len(got)) {
					t.Fatalf("Stat.EventCount = %d, full read returns %d events", n, len(got))
				}
				if e, _ := listed(t, svc, c.h.ID); e.Snapshot.EventCount != int64(len(got)) {
					t.Fatalf("List EventCount = %d, full read returns %d events", e.Snapshot.EventCount, len(got))
				}
			})
		}
	}
}

// handleSnapshot: a handle's Snapshot describes the log it reads, agreeing
// with Stat while nothing changes; a write handle's follows its own
// appends; a read handle's follows appends made elsewhere (freshness); a
// pending create is the empty session; a closed handle refuses.
func (s *suite) handleSnapshot(t *testing.T) {
	const id = "snapshot"
	all := script(s.v, 9)
	dir := t.TempDir()
	svc := s.service(t, dir)
	w := s.create(t, svc, id)
	snap, err := w.Snapshot(ctx)
	if err != nil || snap.Header.ID != id || snap.EventCount != 0 {
		t.Fatalf("pending create: Snapshot %+v, %v; want %q with 0 events", snap, err, id)
	}
	appendOK(t, w, all[:4])
	r := open(t, svc, id, seam.Read)
	same := func(what string, h seam.Handle, want int64) seam.Snapshot {
		t.Helper()
		got, err := h.Snapshot(ctx)
		if err != nil {
			t.Fatalf("%s: Snapshot: %v", what, err)
		}
		st := stat(t, svc, id)
		if got.EventCount != want || st.EventCount != want || got.Revision != st.Revision ||
			got.SizeBytes != st.SizeBytes || got.Header.ID != id || got.Header.Version != s.v ||
			got.Location.Path != st.Location.Path || got.Location.Backend != st.Location.Backend {
			t.Fatalf("%s: Snapshot %+v, Stat %+v; want both at %d events", what, got, st, want)
		}
		return got
	}
	before := same("read handle", r, 4)
	same("write handle", w, 4)
	appendOK(t, w, all[4:])
	after := same("write handle after Append", w, int64(len(all)))
	if after.Revision == before.Revision {
		t.Fatalf("revision %q did not change with an Append", after.Revision)
	}
	same("read handle after an Append elsewhere", r, int64(len(all)))
	if events, err := r.Read(ctx, 0, -1); err != nil || len(events) != len(all) {
		t.Fatalf("read after Snapshot: %d events, %v; want %d", len(events), err, len(all))
	}
	r.Close()
	if _, err := r.Snapshot(ctx); !errors.Is(err, seam.ErrHandleClosed) {
		t.Fatalf("Snapshot of a closed handle: %v, want ErrHandleClosed", err)
	}
}
