// Package commitrule holds the places that decide which records of a log
// are committed to one answer. store.md's rule is decided three times:
// verify's LogCheck (fed by each backend's LogVerifier), the JSONL reader
// (a bad record starts an uncommitted tail unless a turn/end follows it)
// and the SQLite reader (only a session's final packed row can be torn).
// They are kept apart on purpose (verify judges records from any backend;
// each reader streams its own storage and backends never import each
// other), so this package's test, which may import all of them, runs every
// damaged case through every decider and fails where two disagree. It has
// no code of its own.
package commitrule
