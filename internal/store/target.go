package store

import (
	"context"
)

// OpenTarget opens the session to append to that arg names (see
// OpenSession), or, with create, the store r asks for (o.Create makes a
// missing one) with arg as the exact id of the session Append creates when
// it does not exist.
func OpenTarget(ctx context.Context, r Request, arg string, create bool, o Options) (*Session, error) {
	if !create {
		return OpenSession(ctx, r, arg, o)
	}
	svc, err := r.Open(o)
	if err != nil {
		return nil, err
	}
	return &Session{svc, arg}, nil
}
