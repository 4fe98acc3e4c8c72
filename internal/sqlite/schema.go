package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// The tables of both schemas, as dsh creates them.
const (
	ddlState = `CREATE TABLE persistence_state (
        singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
        store_id  TEXT NOT NULL
      ) STRICT`
	ddlSessions = `CREATE TABLE sessions (
        id               TEXT PRIMARY KEY,
        version          INTEGER NOT NULL,
        created_at       INTEGER NOT NULL,
        cwd              TEXT,
        parent_session   TEXT,
        seed_length      INTEGER,
        origin           TEXT,
        delegation_depth INTEGER,
        agent_preset    TEXT,
        incarnation      TEXT NOT NULL,
        revision         INTEGER NOT NULL
      ) STRICT`
	ddlEvents14 = `CREATE TABLE events (
        session_id        TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        seq               INTEGER NOT NULL,
        type              TEXT NOT NULL,
        time              INTEGER NOT NULL,
        data              TEXT NOT NULL,
        source_event_seqs TEXT,
        surface_op        TEXT,
        PRIMARY KEY (session_id, seq)
      ) STRICT`
	ddlEvents17 = `CREATE TABLE events (
        session_id        TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        seq               INTEGER NOT NULL,
        type              TEXT NOT NULL,
        time              INTEGER NOT NULL,
        data              ANY NOT NULL,
        source_event_seqs ANY,
        surface_op        TEXT,
        ignorable         INTEGER CHECK (ignorable IS NULL OR ignorable IN (0, 1)),
        PRIMARY KEY (session_id, seq)
      ) STRICT`
)

// column is what PRAGMA table_info says of a column that matters.
type column struct {
	name, typ string
	pk        int
}

// tables lists the columns each schema's tables must have, in order.
func tables(schema int) map[string][]column {
	events := []column{{"session_id", "TEXT", 1}, {"seq", "INTEGER", 2}, {"type", "TEXT", 0}, {"time", "INTEGER", 0}}
	if schema == Schema14 {
		events = append(events, column{"data", "TEXT", 0}, column{"source_event_seqs", "TEXT", 0}, column{"surface_op", "TEXT", 0})
	} else {
		events = append(events, column{"data", "ANY", 0}, column{"source_event_seqs", "ANY", 0}, column{"surface_op", "TEXT", 0},
			column{"ignorable", "INTEGER", 0})
	}
	return map[string][]column{
		"persistence_state": {{"singleton", "INTEGER", 1}, {"store_id", "TEXT", 0}},
		"sessions": {{"id", "TEXT", 1}, {"version", "INTEGER", 0}, {"created_at", "INTEGER", 0}, {"cwd", "TEXT", 0},
			{"parent_session", "TEXT", 0}, {"seed_length", "INTEGER", 0}, {"origin", "TEXT", 0},
			{"delegation_depth", "INTEGER", 0}, {"agent_preset", "TEXT", 0}, {"incarnation", "TEXT", 0}, {"revision", "INTEGER", 0}},
		"events": events,
	}
}

// createSchema makes the tables of s.opts.Schema in a new empty database,
// in one transaction; a racing creator that got there first wins.
func (s *Store) createSchema(ctx context.Context, conn *sql.Conn) error {
	fail := func(err error) error { return s.sqlErr("create store", "", err) }
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		return fail(err)
	}
	err := func() error {
		appID, version, empty, err := readIdentity(ctx, conn)
		if err != nil || appID != 0 || version != 0 || !empty {
			return err // another creator made it
		}
		storeID, err := newToken()
		if err != nil {
			return err
		}
		events := ddlEvents17
		if s.opts.Schema == Schema14 {
			events = ddlEvents14
		}
		for _, stmt := range []string{ddlState, ddlSessions, events,
			fmt.Sprintf("PRAGMA application_id = %d", ApplicationID),
			fmt.Sprintf("PRAGMA user_version = %d", s.opts.Schema)} {
			if _, err := conn.ExecContext(ctx, stmt); err != nil {
				return err
			}
		}
		_, err = conn.ExecContext(ctx, "INSERT INTO persistence_state (singleton, store_id) VALUES (1, ?)", storeID)
		return err
	}()
	if err != nil {
		conn.ExecContext(context.Background(), "ROLLBACK")
		return fail(err)
	}
	if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
		conn.ExecContext(context.Background(), "ROLLBACK")
		return fail(err)
	}
	return nil
}

// schemaProblems compares the database with those of schema: its text
// encoding is UTF-8, each table exists as a STRICT table with the expected
// columns, and no trigger or view hides behind them.
func schemaProblems(ctx context.Context, conn *sql.Conn, schema int) ([]string, error) {
	var problems []string
	// Rows are read as the bytes stored: JSON in UTF-8, as dsh writes it.
	var enc string
	if err := conn.QueryRowContext(ctx, "PRAGMA encoding").Scan(&enc); err != nil {
		return nil, err
	}
	if enc != "UTF-8" {
		problems = append(problems, fmt.Sprintf("the database's text encoding is %s, not UTF-8 (dsh writes UTF-8)", enc))
	}
	for name, want := range tables(schema) {
		var typ string
		var strict bool
		err := conn.QueryRowContext(ctx, "SELECT type, strict FROM pragma_table_list WHERE schema = 'main' AND name = ?", name).Scan(&typ, &strict)
		if err == sql.ErrNoRows {
			problems = append(problems, fmt.Sprintf("table %s is missing", name))
			continue
		}
		if err != nil {
			return nil, err
		}
		if typ != "table" || !strict {
			problems = append(problems, fmt.Sprintf("%s is a %s, not a STRICT table", name, map[bool]string{true: "STRICT " + typ, false: typ}[strict]))
			continue
		}
		rows, err := conn.QueryContext(ctx, "SELECT name, type, pk FROM pragma_table_info(?) ORDER BY cid", name)
		if err != nil {
			return nil, err
		}
		var got []column
		for rows.Next() {
			var c column
			if err := rows.Scan(&c.name, &c.typ, &c.pk); err != nil {
				rows.Close()
				return nil, err
			}
			c.typ = strings.ToUpper(c.typ)
			got = append(got, c)
		}
		if err := rows.Close(); err != nil {
			return nil, err
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			problems = append(problems, fmt.Sprintf("table %s has columns %v, want %v", name, names(got), names(want)))
		}
	}
	rows, err := conn.QueryContext(ctx, "SELECT type, name FROM sqlite_schema WHERE type IN ('trigger', 'view') ORDER BY name")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var typ, name string
		if err := rows.Scan(&typ, &name); err != nil {
			return nil, err
		}
		problems = append(problems, fmt.Sprintf("unexpected %s %q (dsh creates none)", typ, name))
	}
	return problems, rows.Err()
}

func names(cols []column) string {
	var b strings.Builder
	for i, c := range cols {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %s", c.name, c.typ)
	}
	return b.String()
}

// SchemaProblems lists what differs between the database's schema objects
// and those of its schema version: missing or changed tables, and triggers
// or views dsh never creates. It is for verify; Open refuses a database
// with any.
func (s *Store) SchemaProblems(ctx context.Context) ([]string, error) {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return nil, s.sqlErr("verify", "", err)
	}
	defer conn.Close()
	p, err := schemaProblems(ctx, conn, s.schema)
	return p, s.sqlErr("verify", "", err)
}

// IntegrityCheck runs PRAGMA integrity_check and returns its findings (at
// most 100, SQLite's default); nil means the database file is sound.
func (s *Store) IntegrityCheck(ctx context.Context) ([]string, error) {
	return s.integrityCheck(ctx, 100)
}

// integrityCheck is IntegrityCheck reporting at most max problems.
func (s *Store) integrityCheck(ctx context.Context, max int) ([]string, error) {
	return s.checkPragma(ctx, "integrity_check", max)
}

// quickCheck is integrityCheck's PRAGMA quick_check, which leaves out the
// indexes' agreement with their tables (O(N) rather than O(N log N)), up
// to its first problem.
func (s *Store) quickCheck(ctx context.Context) ([]string, error) {
	return s.checkPragma(ctx, "quick_check", 1)
}

// checkPragma runs PRAGMA pragma(max), integrity_check or quick_check.
func (s *Store) checkPragma(ctx context.Context, pragma string, max int) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, fmt.Sprintf("PRAGMA %s(%d)", pragma, max))
	if err != nil {
		return nil, s.sqlErr("verify", "", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var text string
		if err := rows.Scan(&text); err != nil {
			return nil, s.sqlErr("verify", "", err)
		}
		// A result may hold several lines, after a "*** in database
		// main ***" heading: one problem per line.
		for _, line := range strings.Split(text, "\n") {
			line = strings.TrimSpace(line)
			if line != "ok" && line != "" && !(strings.HasPrefix(line, "*** in database ") && strings.HasSuffix(line, " ***")) {
				out = append(out, line)
			}
		}
	}
	return out, s.sqlErr("verify", "", rows.Err())
}
