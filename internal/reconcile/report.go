package reconcile

import (
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"
)

// WriteText writes a human report of one result: PASS, FAIL with the first
// violation and the states around it, or INCONCLUSIVE with the warnings.
func WriteText(w io.Writer, r Result) error {
	var sb strings.Builder
	if r.Verdict == Error {
		fmt.Fprintf(&sb, "ERROR %s (%spolicy %s)\n  %s\n", printable(r.Name), where(r), r.Policy, printable(r.Error))
		_, err := io.WriteString(w, sb.String())
		return err
	}
	fmt.Fprintf(&sb, "%s %s (%spolicy %s, %s, %s)\n", strings.ToUpper(string(r.Verdict)), printable(r.Name), where(r), r.Policy,
		plural(r.Events, "event"), plural(r.Reconciles, "reconcile"))
	if v := r.First(); v != nil {
		fmt.Fprintf(&sb, "  invariant %d (%s): %s\n", v.Invariant, v.Name, v.Detail)
		where := fmt.Sprintf("record %d", v.Index)
		switch {
		case v.Origin != "":
			where = printable(v.Origin) // a capture's record: no index or line of its own
		case v.Line > 0:
			where += fmt.Sprintf(" (line %d)", v.Line)
		}
		fmt.Fprintf(&sb, "  at %s: %s\n", where, v.Event)
		if v.Message != "" {
			fmt.Fprintf(&sb, "  message %s (%q): %s\n", printable(v.Message), v.Text, v.Fate)
		}
		for _, o := range r.Violations[1:] {
			fmt.Fprintf(&sb, "  also invariant %d (%s): %s\n", o.Invariant, o.Name, o.Detail)
		}
		fmt.Fprintf(&sb, "  before: %s\n  after:  %s\n", v.Before.brief(), v.After.brief())
	}
	for _, wn := range r.Warnings {
		fmt.Fprintf(&sb, "  warning: %s\n", printable(wn))
	}
	for _, n := range r.Notes {
		fmt.Fprintf(&sb, "  note: %s\n", printable(n))
	}
	_, err := io.WriteString(w, sb.String())
	return err
}

// where names the result's source and tab for the report header.
func where(r Result) string {
	var parts []string
	if r.Source != "" {
		parts = append(parts, printable(r.Source))
	}
	if r.Tab != "" {
		parts = append(parts, "tab "+printable(r.Tab))
	}
	if len(parts) == 0 {
		return ""
	}
	return strings.Join(parts, ", ") + "; "
}

// printable returns s, quoted when it holds a control character: a trace
// name comes from the file and must not drive the terminal.
func printable(s string) string {
	if strings.IndexFunc(s, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0 {
		return strconv.Quote(s)
	}
	return s
}

// brief renders a snapshot on one line: C as seq:turn:role, L as
// id[turn], Q as ids, then LT and CA.
func (s *Snapshot) brief() string {
	if s == nil {
		return "-"
	}
	var c, l, q []string
	for _, x := range s.C {
		c = append(c, fmt.Sprintf("%d:%s:%s", x.Seq, x.TurnID, x.Role))
	}
	for _, x := range s.L {
		e := x.ID
		if x.TurnID != "" {
			e += "[" + x.TurnID + "]"
		}
		l = append(l, e)
	}
	for _, x := range s.Q {
		q = append(q, x.ID)
	}
	return fmt.Sprintf("C=[%s] L=[%s] Q=[%s] LT=%q CA=%q", strings.Join(c, " "), strings.Join(l, " "), strings.Join(q, " "), s.LT, s.CA)
}

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Errors   int         `xml:"errors,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name       string          `xml:"name,attr"`
	Classname  string          `xml:"classname,attr"`
	File       string          `xml:"file,attr,omitempty"`
	Properties []junitProperty `xml:"properties>property,omitempty"`
	Failure    *junitMessage   `xml:"failure,omitempty"`
	Error      *junitMessage   `xml:"error,omitempty"`
	Skipped    *junitMessage   `xml:"skipped,omitempty"`
	SystemOut  string          `xml:"system-out,omitempty"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitMessage struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Body    string `xml:",chardata"`
}

// WriteJUnit writes results as a JUnit XML report: one test case per trace,
// named by the trace, its class the file (or generator seed) it came from,
// with the tab and policy as properties; a failure for a violation, skipped
// for an inconclusive trace. A report of one shard stands alone: JUnit
// tools merge the shards' files.
func WriteJUnit(w io.Writer, suite string, results []Result) error {
	s := junitSuite{Name: suite, Tests: len(results)}
	for _, r := range results {
		c := junitCase{Name: r.Name, Classname: r.Source, Properties: []junitProperty{{"policy", r.Policy}}}
		if c.Classname == "" {
			c.Classname = "replay"
		}
		if !strings.HasPrefix(r.Source, generatedPrefix) {
			c.File = r.Source
		}
		if r.Tab != "" {
			c.Properties = append(c.Properties, junitProperty{"tab", r.Tab})
		}
		var body strings.Builder
		if err := WriteText(&body, r); err != nil {
			return err
		}
		switch r.Verdict {
		case Fail:
			v := r.First()
			s.Failures++
			c.Failure = &junitMessage{Message: fmt.Sprintf("invariant %d (%s): %s", v.Invariant, v.Name, v.Detail), Type: fmt.Sprintf("invariant%d", v.Invariant), Body: body.String()}
		case Error:
			s.Errors++
			c.Error = &junitMessage{Message: r.Error, Type: "unreadable", Body: body.String()}
		case Inconclusive:
			s.Skipped++
			c.Skipped = &junitMessage{Message: "inconclusive: records skipped", Body: body.String()}
		default:
			c.SystemOut = body.String()
		}
		s.Cases = append(s.Cases, c)
	}
	doc := junitSuites{Tests: s.Tests, Failures: s.Failures, Errors: s.Errors, Skipped: s.Skipped, Suites: []junitSuite{s}}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return fmt.Errorf("write junit: %w", err)
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("encode junit: %w", err)
	}
	if _, err := io.WriteString(w, "\n"); err != nil {
		return fmt.Errorf("write junit: %w", err)
	}
	return nil
}
