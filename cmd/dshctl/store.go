package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/dshctl/dshctl/internal/seam"
	"github.com/dshctl/dshctl/internal/sessionview"
	"github.com/dshctl/dshctl/internal/store"
	"github.com/dshctl/dshctl/internal/termui"
)

// request is what the store package finds the store with.
func (g *globals) request(e *env) store.Request {
	return store.Request{Flag: g.store, Getenv: e.getenv, Note: func(msg string) { fmt.Fprintf(e.stderr, "dshctl: %s\n", msg) },
		MaxRecordBytes: g.maxRecord, MaxFrameBytes: g.maxFrame}
}

// openStore opens the store the user asked for.
func (g *globals) openStore(e *env, o store.Options) (seam.Service, error) {
	svc, err := g.request(e).Open(o)
	return svc, sessionview.Explain(err)
}

// openSession opens the session an argument names and its store.
func (g *globals) openSession(ctx context.Context, e *env, arg string, o store.Options) (*store.Session, error) {
	s, err := store.OpenSession(ctx, g.request(e), arg, o)
	return s, notFound(err)
}

// openSessions opens the sessions several arguments name, each store once
// (store.OpenSessions); close them even when it fails.
func (g *globals) openSessions(ctx context.Context, e *env, args []string, o store.Options) (*store.Sessions, error) {
	ss, err := store.OpenSessions(ctx, g.request(e), args, o)
	return ss, notFound(err)
}

// notFound words a failure to find a named session, with the way to see
// which there are.
func notFound(err error) error {
	if errors.Is(err, seam.ErrNotFound) && termui.Hint(sessionview.Explain(err)) == "" {
		return termui.WithHint(sessionview.Explain(err), "run 'dshctl list --all' to see the sessions of the store")
	}
	return sessionview.Explain(err)
}
