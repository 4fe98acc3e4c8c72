package jsonl

// verifyMaxRecord, when positive, replaces the record limit of verify's
// reads, for tests; verify otherwise skips (and reports) a record longer
// than the store's record limit (Options.MaxRecordBytes), as every read
// does.
var verifyMaxRecord int64
