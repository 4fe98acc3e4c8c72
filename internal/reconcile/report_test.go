package reconcile

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"path/filepath"
	"strings"
	"testing"
)

// scenarioResults replays the scenarios S1–S8 under pol.
func scenarioResults(t *testing.T, pol Policy) []Result {
	var rs []Result
	for _, path := range traceFiles(t) {
		if isScenario(path) {
			rs = append(rs, Run(loadTrace(t, path), Options{Policy: pol}))
		}
	}
	return rs
}

// TestJUnit: the report is XML, names each trace as a test case and marks
// failures.
func TestJUnit(t *testing.T) {
	rs := scenarioResults(t, BugD)
	var buf bytes.Buffer
	if err := WriteJUnit(&buf, "replay", rs); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Suites []struct {
			Cases []struct {
				Name    string `xml:"name,attr"`
				Failure *struct {
					Message string `xml:"message,attr"`
				} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("not XML: %v\n%s", err, buf.String())
	}
	if len(doc.Suites) != 1 || len(doc.Suites[0].Cases) != len(rs) {
		t.Fatalf("want one suite of %d cases: %s", len(rs), buf.String())
	}
	failed := 0
	for i, c := range doc.Suites[0].Cases {
		if c.Name != rs[i].Name {
			t.Errorf("case %d named %q, want %q", i, c.Name, rs[i].Name)
		}
		if c.Failure != nil {
			failed++
			if !strings.Contains(c.Failure.Message, "invariant 2") {
				t.Errorf("failure message %q", c.Failure.Message)
			}
		}
	}
	if failed != 1 {
		t.Errorf("%d failures under bug-d, want 1 (S5)", failed)
	}
}

func TestTextAndJSONReports(t *testing.T) {
	res := Run(loadTrace(t, filepath.Join(tracesDir, "s8-deferred-seal-keeps-newer-turn.jsonl")), Options{Policy: BugA})
	var buf bytes.Buffer
	if err := WriteText(&buf, res); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"FAIL ", "invariant 3", "line 12", "before: C=[]", `after:  C=[0:a:user 1:a:assistant] L=[] Q=[] LT="" CA=""`} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("text report lacks %q:\n%s", want, buf.String())
		}
	}
	// Results round-trip through JSON (replay -o json writes its own shape,
	// replay.ResultJSON, from them).
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var back Result
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if v := back.First(); v == nil || v.Invariant != 3 || v.After.LT != "" || v.Before.LT != "b" {
		t.Fatalf("JSON result: %+v", back)
	}
}
