package replay

import (
	"fmt"
	"html/template"
	"io"
	"strings"

	"github.com/dshctl/dshctl/internal/reconcile"
)

// invariantWords says each invariant for people (replay.md).
var invariantWords = map[int]string{
	1: "Every message the user sent or that was queued, and not cancelled, stays visible: as a live row, as a stored user row, or inside a stored tool result. A failed send stays visible with its error. What a running turn streamed stays visible.",
	2: "Nothing shows twice: a message stored in the fetched rows has no live row left, and no live row carries a turn that is sealed and reconciled.",
	3: "Reconciling an older turn never removes the rows of a newer turn that is still running, and keeps the live turn and the streaming row pointing at it.",
	4: "Running the same reconcile again changes nothing, and the user ends up seeing the same thing whether or not they scrolled up (which defers reconciles).",
}

// htmlTrace is a failing result as the page shows it.
type htmlTrace struct {
	reconcile.Result
	ID        string
	Violation *reconcile.Violation
	Words     string
	At        string
	Reproduce string
	Before    reconcile.ClientView
	After     reconcile.ClientView
	Records   []htmlRecord
}

type htmlRecord struct {
	Index   int
	Where   string
	Kind    string
	Summary string
	JSON    string
	Bad     bool
}

// WriteHTML writes one self-contained page (no script, style sheet, font or
// image from anywhere else) showing each failing trace of rep: the records
// up to the violation as a timeline, what the user saw before and after
// the violating record side by side, the message and its fate, the
// invariant in words and the command that reproduces it.
func WriteHTML(w io.Writer, rep *Report, failing []reconcile.Result, o Options) error {
	data := struct {
		Rep    *Report
		Traces []htmlTrace
	}{Rep: rep}
	for k, r := range failing {
		h := htmlTrace{Result: r, ID: fmt.Sprintf("t%d", k+1), Reproduce: reproduce(r, o)}
		if v := r.First(); v != nil {
			h.Violation, h.Words, h.At = v, invariantWords[v.Invariant], At(*v)
			h.Before, h.After = v.Before.View(), v.After.View()
		}
		for _, tr := range r.Timeline {
			hr := htmlRecord{Index: tr.Index, Where: tr.Origin, Kind: tr.Record.Kind, Summary: summary(tr.Record), JSON: string(tr.Record.JSON())}
			if hr.Where == "" && tr.Line > 0 {
				hr.Where = fmt.Sprintf("line %d", tr.Line)
			}
			hr.Bad = h.Violation != nil && h.Violation.Record != nil && tr.Index == h.Violation.Index
			h.Records = append(h.Records, hr)
		}
		data.Traces = append(data.Traces, h)
	}
	if err := page.Execute(w, data); err != nil {
		return fmt.Errorf("write page: %w", err)
	}
	return nil
}

// reproduce is the command that replays r again.
func reproduce(r reconcile.Result, o Options) string {
	for _, n := range r.Notes {
		if p, ok := strings.CutPrefix(n, "saved as "); ok {
			return "dshctl replay --policy " + r.Policy + " " + shellQuote(p)
		}
	}
	if strings.HasPrefix(r.Source, "generated: ") {
		cmd := fmt.Sprintf("dshctl replay --policy %s --generate %d --seed %d", r.Policy, o.Generate, o.Seed)
		if o.Shard.N > 0 {
			cmd += " --shard " + o.Shard.String()
		}
		return cmd + " --save failures/"
	}
	cmd := "dshctl replay --policy " + r.Policy
	if o.NoBackend {
		cmd += " --no-backend"
	}
	return cmd + " " + shellQuote(r.Source)
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(c rune) bool {
		return !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("-_./:=@+,", c))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// summary says what a record is in a few words.
func summary(rec reconcile.Record) string {
	switch rec.Kind {
	case reconcile.KindWS:
		if rec.Ev == nil {
			return "frame"
		}
		s := rec.Ev.Type
		switch {
		case rec.Ev.TurnID != "":
			s += " " + rec.Ev.TurnID
		case rec.Ev.MessageID != "":
			s += " " + rec.Ev.MessageID
		case len(rec.Ev.MessageIDs) > 0:
			s += " " + strings.Join(rec.Ev.MessageIDs, ",")
		case rec.Ev.Status != "":
			s += " " + rec.Ev.Status
		case rec.Ev.Delta != "":
			s += " " + clip(rec.Ev.Delta)
		}
		if rec.Ev.Reason != "" {
			s += " (" + rec.Ev.Reason + ")"
		}
		return s
	case reconcile.KindSend:
		return "send " + rec.ID + " " + clip(rec.Text)
	case reconcile.KindHTTP:
		s := "POST answer " + rec.ID + ": " + rec.Status
		if rec.MessageID != "" {
			s += " as " + rec.MessageID
		}
		return s
	case reconcile.KindCancel:
		return "cancel " + rec.ID
	case reconcile.KindScroll:
		if rec.Up {
			return "scroll up"
		}
		return "scroll down"
	case reconcile.KindFetch:
		switch {
		case rec.FetchErr:
			return fmt.Sprintf("chunk answer %d: error", rec.Req)
		case rec.HasRows:
			return fmt.Sprintf("chunk answer %d: %d rows", rec.Req, len(rec.Rows))
		}
		return fmt.Sprintf("chunk answer %d (from the backend model)", rec.Req)
	}
	return rec.Kind
}

func clip(s string) string {
	if r := []rune(s); len(r) > 40 {
		return fmt.Sprintf("%q…", string(r[:40]))
	}
	return fmt.Sprintf("%q", s)
}

var page = template.Must(template.New("page").Funcs(template.FuncMap{
	"upper": strings.ToUpper,
	"orNone": func(p *string) string {
		if p == nil {
			return "none"
		}
		return *p
	},
	"join": strings.Join,
}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>dshctl replay: {{.Rep.Failed}} failed, {{.Rep.Errors}} unreadable of {{.Rep.Traces}} (policy {{.Rep.Policy}})</title>
<style>
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #1b1b1b; background: #fff; }
h1 { font-size: 1.4em; } h2 { font-size: 1.2em; margin-top: 2em; border-top: 2px solid #ccc; padding-top: .8em; }
code, pre, .mono { font-family: ui-monospace, monospace; font-size: 12.5px; }
.invariant { background: #fdecea; border-left: 4px solid #c62828; padding: .5em 1em; }
.fate { background: #fff8e1; border-left: 4px solid #f9a825; padding: .5em 1em; }
.cmd { background: #f3f3f3; padding: .4em .8em; display: inline-block; }
.states { display: flex; gap: 1.5em; flex-wrap: wrap; }
.state { flex: 1; min-width: 22em; border: 1px solid #ccc; padding: .5em 1em; }
.state ol { padding-left: 1.5em; } .state li { white-space: pre-wrap; margin: .2em 0; }
.changed { background: #fdecea; }
table.timeline { border-collapse: collapse; width: 100%; }
.timeline td, .timeline th { border-bottom: 1px solid #e4e4e4; padding: .2em .5em; text-align: left; vertical-align: top; }
.timeline tr.bad { background: #fdecea; font-weight: bold; }
.timeline details summary { cursor: pointer; }
.error { background: #fdecea; padding: .5em 1em; }
</style>
</head>
<body>
<h1>dshctl replay: policy {{.Rep.Policy}}{{if .Rep.Shard}}, shard {{.Rep.Shard}}{{end}}</h1>
<p id="summary">{{.Rep.Traces}} traces: {{.Rep.Passed}} passed, {{.Rep.Failed}} failed, {{.Rep.Inconclusive}} inconclusive{{if .Rep.Errors}}, {{.Rep.Errors}} could not be read{{end}}.</p>
{{if not .Traces}}<p>Every trace passed.</p>{{else}}<ul>{{range .Traces}}<li><a href="#{{.ID}}">{{.Name}}</a> ({{.Verdict}})</li>{{end}}</ul>{{end}}
{{range $t := .Traces}}
<section class="trace" id="{{.ID}}">
<h2>{{upper (print .Verdict)}} {{.Name}}</h2>
<p>Source: <code>{{.Source}}</code>{{if .Tab}}, tab <code>{{.Tab}}</code>{{end}}; policy {{.Policy}}; {{.Events}} records, {{.Reconciles}} reconciles checked.</p>
{{if .Error}}<p class="error">This file could not be read: {{.Error}}</p>{{end}}
{{with .Violation}}
<div class="invariant" id="{{$t.ID}}-invariant"><strong>Invariant {{.Invariant}} ({{.Name}})</strong> fails at {{$t.At}}: {{.Detail}}.<br>{{$t.Words}}</div>
{{if .Message}}<p class="fate">Message <code>{{.Message}}</code> (“{{.Text}}”): {{.Fate}}.</p>{{end}}
<div class="states">
<div class="state before"><h3>What the user saw before</h3>{{template "view" $t.Before}}</div>
<div class="state after"><h3>What the user saw after</h3>{{template "view" $t.After}}</div>
</div>
{{end}}
<p>Reproduce: <code class="cmd">{{.Reproduce}}</code></p>
{{if .Records}}
<h3>Timeline</h3>
{{if .Skipped}}<p>{{.Skipped}} earlier records are not shown.</p>{{end}}
<table class="timeline" id="{{.ID}}-timeline">
<tr><th>#</th><th>where</th><th>record</th></tr>
{{range .Records}}<tr class="{{if .Bad}}bad{{end}}"><td>{{.Index}}</td><td>{{.Where}}</td><td><details><summary>{{.Summary}}</summary><pre>{{.JSON}}</pre></details></td></tr>
{{end}}{{with $t.Violation}}{{if not .Record}}<tr class="bad"><td></td><td></td><td>{{.Event}}</td></tr>{{end}}{{end}}
</table>
{{end}}
</section>
{{end}}
</body>
</html>
{{define "view"}}<p class="mono">status {{.Status}}; live turn {{orNone .LT}}; streaming row {{if .CA}}yes{{else}}none{{end}}; queued [{{join .Q ", "}}]</p>
<ol>{{range .Render}}<li>{{.}}</li>{{else}}<li><em>nothing</em></li>{{end}}</ol>{{end}}
`))
