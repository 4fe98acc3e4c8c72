// Package rawjson reads and writes JSON as bytes, for the readers of logs
// and traces that look at millions of records: one scanner (Scan, Valid,
// ScanObject) that validates a value exactly as encoding/json does and, in
// the same pass, tells whether it is compact and where an object's members
// are; walkers of JSON known to be valid that alias it instead of copying
// (Lookup, LookupAll, Members, Items, Elements, ValueEnd); and strings and
// numbers as JSON.parse and encoding/json read them (Unquote,
// AppendUnquoted, DecodeRune, SafeInt) and JSON.stringify writes them
// (AppendString). It imports nothing of dshctl's.
//
// encoding/json decodes into values, which costs a reflection walk and an
// allocation per member where a reader wants a few members of a record or
// only to know it is valid. encoding/json/jsontext, the tokenizer of JSON
// v2, would be the library to build on, but Go 1.26 has it only with
// GOEXPERIMENT=jsonv2 (go-json-experiment/json is the same code as a
// module): its validation of the fixtures' records runs at about half the
// speed of Scan (290 against 600 MB/s, BenchmarkScanJSONText, with
// GOEXPERIMENT=jsonv2), and it has no compactness or member spans to give
// from the pass that validates, so a record would be walked twice.
package rawjson
