// Package codecheck holds tests over the source of dshctl's other packages:
// rules of the house that the compiler and go vet do not check, such as
// "classify errors by type, never by message text". It has no code of its
// own; `go test ./internal/codecheck` (part of `make test`) runs the rules.
package codecheck
