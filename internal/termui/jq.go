package termui

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/itchyny/gojq"
)

// MaxJQDocument bounds the JSON value a --jq expression is given: gojq
// holds a value whole, several times its size, so a larger one (cat -o
// json of a large log) is refused; -o jsonl gives the expression one
// line at a time.
const MaxJQDocument = 256 << 20

// JQ is a compiled --jq expression.
type JQ struct {
	expr string
	code *gojq.Code
	// maxDoc is MaxJQDocument (tests lower it).
	maxDoc int64
}

// JQError is an expression that does not parse or compile: a usage
// error of --jq.
type JQError struct {
	Expr string
	Err  error
}

func (e *JQError) Error() string { return fmt.Sprintf("--jq %q: %v", e.Expr, e.Err) }
func (e *JQError) Unwrap() error { return e.Err }

// CompileJQ compiles expr, with $ENV and env reading the environment as
// jq does; an expression that does not compile is a *JQError.
func CompileJQ(expr string) (*JQ, error) {
	q, err := gojq.Parse(expr)
	if err != nil {
		return nil, &JQError{expr, err}
	}
	code, err := gojq.Compile(q, gojq.WithEnvironLoader(os.Environ))
	if err != nil {
		return nil, &JQError{expr, err}
	}
	return &JQ{expr: expr, code: code, maxDoc: MaxJQDocument}, nil
}

// JQWriter runs a JQ on every JSON value written to it, as they come,
// and prints the results to its output as gh's --jq does: a string
// result raw, on its own line; any other value as JSON, indented for
// people (a terminal) and on one line for scripts. Close it to flush and
// learn how the evaluation ended.
type JQWriter struct {
	pw   *io.PipeWriter
	done chan error
}

// Writer starts filtering into w; pretty indents JSON results. The end
// of ctx stops an expression that does not end by itself.
func (q *JQ) Writer(ctx context.Context, w io.Writer, pretty bool) *JQWriter {
	pr, pw := io.Pipe()
	jw := &JQWriter{pw: pw, done: make(chan error, 1)}
	go func() {
		err := q.filter(ctx, pr, w, pretty)
		// A writer blocked on the pipe learns why it stopped (its Write
		// fails); reading on to the end would run a broken filter on
		// output nobody sees.
		pr.CloseWithError(cmpErr(err, io.ErrClosedPipe))
		jw.done <- err
	}()
	return jw
}

// cmpErr is err, or def when err is nil.
func cmpErr(err, def error) error {
	if err != nil {
		return err
	}
	return def
}

// Write passes p to the filter; it fails once the filter has stopped.
func (jw *JQWriter) Write(p []byte) (int, error) { return jw.pw.Write(p) }

// Close ends the input and waits for the filter: its error is the first
// the expression met (*JQRunError) or the output's, nil when every value
// was filtered and printed.
func (jw *JQWriter) Close() error {
	jw.pw.Close()
	return <-jw.done
}

// JQRunError is an error the expression raised on a value (a type
// mismatch, error/1, halt_error): the command's output was sound.
type JQRunError struct {
	Expr string
	Err  error
}

func (e *JQRunError) Error() string { return fmt.Sprintf("--jq %q: %v", e.Expr, e.Err) }
func (e *JQRunError) Unwrap() error { return e.Err }

// JQInputError is output --jq could not read as JSON: a value over
// MaxJQDocument, or text that is not JSON.
type JQInputError struct{ Err error }

func (e *JQInputError) Error() string { return "--jq: " + e.Err.Error() }
func (e *JQInputError) Unwrap() error { return e.Err }

// ErrJQDocumentTooLarge says a JSON value was over MaxJQDocument.
var ErrJQDocumentTooLarge = fmt.Errorf("a JSON document over %d MiB, too large to filter whole: -o jsonl filters one line at a time", MaxJQDocument>>20)

// filter decodes the JSON values of r one at a time and prints what the
// expression gives for each to w, flushing whenever it has no more input
// at hand, so that a followed log's events show as they come.
func (q *JQ) filter(ctx context.Context, r io.Reader, w io.Writer, pretty bool) error {
	cr := &boundedReader{r: r, max: q.maxDoc}
	dec := json.NewDecoder(cr)
	dec.UseNumber() // gojq keeps the digits of large integers
	cr.consumed = dec.InputOffset
	bw := bufio.NewWriter(w)
	defer bw.Flush() // what was filtered before an error
	for {
		var v any
		if err := dec.Decode(&v); err == io.EOF {
			break
		} else if err != nil {
			if errors.Is(err, ErrJQDocumentTooLarge) {
				return &JQInputError{err}
			}
			var syn *json.SyntaxError
			if errors.As(err, &syn) || errors.Is(err, io.ErrUnexpectedEOF) {
				return &JQInputError{fmt.Errorf("the output is not JSON: %w", err)}
			}
			return err
		}
		if err := q.run(ctx, v, bw, pretty); err == errHalt {
			// halt ends the program, as in jq: the rest of the output is
			// read and dropped, so the command ends as it would.
			_, err := io.Copy(io.Discard, r)
			return cmpErr(bw.Flush(), err)
		} else if err != nil {
			return err
		}
		if !moreAtHand(dec.Buffered()) {
			if err := bw.Flush(); err != nil {
				return err
			}
		}
	}
	return bw.Flush()
}

// moreAtHand reports whether the decoder's buffered input r holds more
// than white space: the start of another value to filter before the
// decoder waits for input.
func moreAtHand(r io.Reader) bool {
	br, ok := r.(io.ByteReader)
	if !ok {
		return false
	}
	for {
		c, err := br.ReadByte()
		switch {
		case err != nil:
			return false
		case c != ' ' && c != '\t' && c != '\n' && c != '\r':
			return true
		}
	}
}

// errHalt is the expression calling halt: stop quietly, as jq does.
var errHalt = errors.New("halt")

// run prints the results of the expression on v.
func (q *JQ) run(ctx context.Context, v any, w *bufio.Writer, pretty bool) error {
	iter := q.code.RunWithContext(ctx, v)
	for {
		r, ok := iter.Next()
		if !ok {
			return nil
		}
		if err, ok := r.(error); ok {
			var halt *gojq.HaltError
			if errors.As(err, &halt) && halt.Value() == nil {
				return errHalt
			}
			if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
				return err
			}
			return &JQRunError{q.expr, err}
		}
		if s, ok := r.(string); ok {
			w.WriteString(s)
		} else {
			b, err := gojq.Marshal(r)
			if err != nil {
				return &JQRunError{q.expr, err}
			}
			if pretty {
				var ib bytes.Buffer
				if json.Indent(&ib, b, "", "  ") == nil {
					b = ib.Bytes()
				}
			}
			w.Write(b)
		}
		if err := w.WriteByte('\n'); err != nil {
			return err
		}
	}
}

// boundedReader fails once the value being decoded is over
// MaxJQDocument: consumed is the decoder's offset, the end of the last
// value it returned.
type boundedReader struct {
	r        io.Reader
	n, max   int64
	consumed func() int64
}

func (b *boundedReader) Read(p []byte) (int, error) {
	if b.consumed != nil && b.n-b.consumed() > b.max {
		return 0, ErrJQDocumentTooLarge
	}
	n, err := b.r.Read(p)
	b.n += int64(n)
	return n, err
}
