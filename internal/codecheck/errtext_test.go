package codecheck

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The rule: an error is classified by its type (errors.Is, errors.As),
// never by its message. Wording is for people: a message reworded in one
// package must not change what another decides (a verify code, a refusal,
// an exit code). TestNoErrorTextMatching reads every package the dshctl
// binary links and fails where the text of an error reaches a test of
// text.
//
// Error text is what err.Error() returns, what fmt.Sprint and its kin make
// of an error, and what is derived from either (concatenated, converted,
// sliced, changed by the strings and bytes packages), through local
// variables and through functions that return it, across packages. A test
// of text is strings' and bytes' searches and comparisons (Contains,
// HasPrefix, Index, Cut, TrimPrefix, EqualFold, ...), regexp's matches,
// slices.Contains and Index, ==, != and the other comparisons, a switch on
// it and a map looked up by it. A function whose parameter reaches such a
// test is itself one for that argument, so a helper does not hide it.
// Formatting error text for people (printing it, putting it on one line,
// splitting it into lines to wrap) is fine.

// module is the import path of dshctl's module.
const module = "github.com/dshctl/dshctl"

func TestNoErrorTextMatching(t *testing.T) {
	pkgs := goList(t, module+"/cmd/dshctl")
	c := newChecker(t, pkgs)
	var found []string
	checked := 0
	for _, p := range pkgs {
		if p.Standard || p.Module == nil || p.Module.Path != module {
			continue
		}
		fs, err := c.checkDir(p.ImportPath, p.Dir, p.GoFiles)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		found = append(found, fs...)
	}
	if checked < 10 {
		t.Fatalf("only %d packages of %s checked: the listing is wrong", checked, module)
	}
	for _, f := range found {
		t.Errorf("%s", f)
	}
	if len(found) > 0 {
		t.Log("classify errors with errors.Is or errors.As (a sentinel or a typed cause), not by their message")
	}
}

// TestErrorTextRule pins what the rule finds and what it lets be, on small
// sources.
func TestErrorTextRule(t *testing.T) {
	pkgs := goList(t, "errors", "fmt", "strings", "bytes", "regexp", "slices", "io/fs")
	c := newChecker(t, pkgs)
	for _, tc := range []struct {
		name string
		src  string
		want int // findings
	}{
		{"contains", `func f(err error) bool { return strings.Contains(err.Error(), "x") }`, 1},
		{"prefix of bytes", `func f(err error) bool { return bytes.HasPrefix([]byte(err.Error()), []byte("x")) }`, 1},
		{"equal", `func f(err error) bool { return err.Error() == "x" }`, 1},
		{"not equal reversed", `func f(err error) bool { return "x" != err.Error() }`, 1},
		{"through a variable", "func f(err error) bool {\n msg := err.Error()\n return strings.HasSuffix(msg, \"x\")\n}", 1},
		{"through a later assignment", "func f(err error) bool {\n var msg string\n msg = \"a\" + err.Error()\n return strings.HasSuffix(msg, \"x\")\n}", 1},
		{"sprint", `func f(err error) bool { return strings.Contains(fmt.Sprint(err), "x") }`, 1},
		{"sprintf", `func f(err error) bool { return strings.Contains(fmt.Sprintf("%v", err), "x") }`, 1},
		{"a function that returns it", "func text(err error) string { return err.Error() }\nfunc f(err error) bool { return strings.Contains(text(err), \"x\") }", 1},
		{"a helper that tests its argument", "func has(s string) bool { return strings.Contains(s, \"x\") }\nfunc f(err error) bool { return has(err.Error()) }", 1},
		{"a helper of a helper", "func has(s string) bool { return strings.Contains(s, \"x\") }\nfunc has2(s string) bool { return has(s) }\nfunc f(err error) bool { return has2(err.Error()) }", 1},
		{"cut", `func f(err error) string { h, _, _ := strings.Cut(err.Error(), ","); return h }`, 1},
		{"trim prefix", `func f(err error) string { return strings.TrimPrefix(err.Error(), "x: ") }`, 1},
		{"switch", "func f(err error) int {\n switch err.Error() {\n case \"x\":\n  return 1\n }\n return 0\n}", 1},
		{"map key", `var m = map[string]int{}; func f(err error) int { return m[err.Error()] }`, 1},
		{"regexp", `var re = regexp.MustCompile("x"); func f(err error) bool { return re.MatchString(err.Error()) }`, 1},
		{"slices", `func f(err error) bool { return slices.Contains([]string{"x"}, err.Error()) }`, 1},
		{"lower case", `func f(err error) bool { return strings.Contains(strings.ToLower(err.Error()), "x") }`, 1},
		{"a field's error", `func f(pe *fs.PathError) bool { return strings.Contains(pe.Err.Error(), "x") }`, 1},
		{"in a closure", "func f(errs []error) int {\n n := 0\n for _, err := range errs {\n  func() {\n   if strings.Contains(err.Error(), \"x\") {\n    n++\n   }\n  }()\n }\n return n\n}", 1},

		{"errors.Is", `var errX = errors.New("x"); func f(err error) bool { return errors.Is(err, errX) }`, 0},
		{"comparing errors", `var errX = errors.New("x"); func f(err error) bool { return err == errX }`, 0},
		{"printing", "func f(w io.Writer, err error) { fmt.Fprintf(w, \"error: %v\\n\", err) }", 0},
		{"one line", `func f(err error) string { return strings.ReplaceAll(err.Error(), "\n", " ") }`, 0},
		{"wrapping lines", `func f(err error) []string { return strings.Split(err.Error(), "\n") }`, 0},
		{"length", `func f(err error) bool { return len(err.Error()) > 80 }`, 0},
		{"a parameter tested, passed other text", "func has(s string) bool { return strings.Contains(s, \"x\") }\nfunc f(name string) bool { return has(name) }", 0},
		{"other strings", `func f(s string) bool { return strings.Contains(s, "x") || s == "y" }`, 0},
		{"an Error method", "type e struct{ err error }\nfunc (x e) Error() string { return \"e: \" + x.err.Error() }", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "package p\nimport (\n\"bytes\"\n\"errors\"\n\"fmt\"\n\"io\"\n\"io/fs\"\n\"regexp\"\n\"slices\"\n\"strings\"\n)\n" +
				"var _, _, _, _, _, _, _, _ = bytes.Equal, errors.New, fmt.Sprint, io.EOF, fs.ErrExist, regexp.Compile, slices.Sort[[]int], strings.Cut\n" + tc.src + "\n"
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "p.go"), []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
			found, err := c.checkDir("example.com/p/"+strings.ReplaceAll(tc.name, " ", "_"), dir, []string{"p.go"})
			if err != nil {
				t.Fatal(err)
			}
			if len(found) != tc.want {
				t.Errorf("%d findings, want %d:\n%s\n%s", len(found), tc.want, strings.Join(found, "\n"), tc.src)
			}
		})
	}
}

// goPackage is what `go list -json` says of a package.
type goPackage struct {
	ImportPath string
	Dir        string
	GoFiles    []string
	Export     string
	Standard   bool
	Module     *struct{ Path string }
}

// goList lists the packages patterns name and all they import, with the
// compiler's export data of each (built as go build would, from its cache).
func goList(t *testing.T, patterns ...string) []goPackage {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		goTool = filepath.Join(os.Getenv("GOROOT"), "bin", "go")
	}
	args := append([]string{"list", "-deps", "-export", "-json=ImportPath,Dir,GoFiles,Export,Standard,Module"}, patterns...)
	cmd := exec.Command(goTool, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	var pkgs []goPackage
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p goPackage
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

// checker finds error text reaching a test of text, package by package in
// dependency order, keeping what it learnt of each function for the
// packages that call it.
type checker struct {
	fset *token.FileSet
	imp  types.Importer
	// returns maps a function (its FullName) to what its string results
	// carry: bit 0 error text, bit i+1 the text of its parameter i.
	returns map[string]uint64
	// sinks maps a function to the parameters that reach a test of text
	// (bit i+1 for parameter i).
	sinks map[string]uint64
}

func newChecker(t *testing.T, pkgs []goPackage) *checker {
	exports := map[string]string{}
	for _, p := range pkgs {
		if p.Export != "" {
			exports[p.ImportPath] = p.Export
		}
	}
	fset := token.NewFileSet()
	lookup := func(path string) (io.ReadCloser, error) {
		f, ok := exports[path]
		if !ok {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(f)
	}
	return &checker{fset: fset, imp: importer.ForCompiler(fset, "gc", lookup),
		returns: map[string]uint64{}, sinks: map[string]uint64{}}
}

const errText = 1 // the taint bit of error text

// checkDir type-checks the files of package path in dir and returns where
// error text reaches a test of text.
func (c *checker) checkDir(path, dir string, names []string) ([]string, error) {
	var files []*ast.File
	for _, n := range names {
		f, err := parser.ParseFile(c.fset, filepath.Join(dir, n), nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	info := &types.Info{
		Types:      map[ast.Expr]types.TypeAndValue{},
		Defs:       map[*ast.Ident]types.Object{},
		Uses:       map[*ast.Ident]types.Object{},
		Selections: map[*ast.SelectorExpr]*types.Selection{},
	}
	conf := types.Config{Importer: c.imp}
	if _, err := conf.Check(path, c.fset, files, info); err != nil {
		return nil, fmt.Errorf("type-checking %s: %v", path, err)
	}
	var funcs []*ast.FuncDecl
	for _, f := range files {
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Body != nil {
				funcs = append(funcs, fd)
			}
		}
	}
	// What each function returns and which of its parameters reach a
	// test depend on the functions it calls: learn until nothing changes.
	for changed := true; changed; {
		changed = false
		for _, fd := range funcs {
			fn := info.Defs[fd.Name].(*types.Func)
			a := c.analyse(info, fd, nil)
			name := fn.FullName()
			if a.returns|c.returns[name] != c.returns[name] || a.sinks|c.sinks[name] != c.sinks[name] {
				c.returns[name] |= a.returns
				c.sinks[name] |= a.sinks
				changed = true
			}
		}
	}
	var found []string
	for _, fd := range funcs {
		c.analyse(info, fd, func(pos token.Pos, what string) {
			found = append(found, fmt.Sprintf("%s: %s", c.fset.Position(pos), what))
		})
	}
	return found, nil
}

// analysis is what one function does with text.
type analysis struct {
	c       *checker
	info    *types.Info
	taint   map[*types.Var]uint64
	returns uint64 // what its string results carry
	sinks   uint64 // its parameters that reach a test
	report  func(token.Pos, string)
}

func (c *checker) analyse(info *types.Info, fd *ast.FuncDecl, report func(token.Pos, string)) *analysis {
	a := &analysis{c: c, info: info, taint: map[*types.Var]uint64{}, report: report}
	sig := info.Defs[fd.Name].(*types.Func).Type().(*types.Signature)
	for i := 0; i < sig.Params().Len() && i < 63; i++ {
		if isText(sig.Params().At(i).Type()) {
			a.taint[sig.Params().At(i)] = 1 << (i + 1)
		}
	}
	// Taint flows through assignments in any order (a loop carries it
	// back): repeat until the variables' taint is stable.
	for changed := true; changed; {
		changed = false
		ast.Inspect(fd.Body, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.AssignStmt:
				changed = a.assign(n.Lhs, n.Rhs) || changed
			case *ast.ValueSpec:
				lhs := make([]ast.Expr, len(n.Names))
				for i, id := range n.Names {
					lhs[i] = id
				}
				changed = a.assign(lhs, n.Values) || changed
			case *ast.RangeStmt:
				if n.Value != nil {
					changed = a.assign([]ast.Expr{n.Value}, []ast.Expr{n.X}) || changed
				}
			}
			return true
		})
	}
	results := sig.Results()
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			// Its returns are its own; its tests are still checked.
			ast.Inspect(n.Body, func(m ast.Node) bool { a.sink(m); return true })
			return false
		case *ast.ReturnStmt:
			switch {
			case len(n.Results) == results.Len():
				for i, r := range n.Results {
					if isText(results.At(i).Type()) {
						a.returns |= a.mask(r)
					}
				}
			case len(n.Results) == 1:
				a.returns |= a.mask(n.Results[0])
			case len(n.Results) == 0:
				for i := 0; i < results.Len(); i++ {
					a.returns |= a.taint[results.At(i)]
				}
			}
		}
		a.sink(n)
		return true
	})
	return a
}

// assign taints the variables of lhs with what rhs carries; it reports
// whether any taint grew.
func (a *analysis) assign(lhs, rhs []ast.Expr) bool {
	changed := false
	for i, l := range lhs {
		var m uint64
		switch {
		case len(rhs) == len(lhs):
			m = a.mask(rhs[i])
		case len(rhs) == 1:
			m = a.mask(rhs[0]) // a call of several results
		}
		id, ok := ast.Unparen(l).(*ast.Ident)
		if !ok || m == 0 {
			continue
		}
		v, ok := a.obj(id).(*types.Var)
		if !ok {
			continue
		}
		if a.taint[v]|m != a.taint[v] {
			a.taint[v] |= m
			changed = true
		}
	}
	return changed
}

func (a *analysis) obj(id *ast.Ident) types.Object {
	if o := a.info.Defs[id]; o != nil {
		return o
	}
	return a.info.Uses[id]
}

// mask is what the value of e carries: bit 0 error text, bit i+1 the
// text of the function's parameter i.
func (a *analysis) mask(e ast.Expr) uint64 {
	switch e := ast.Unparen(e).(type) {
	case *ast.Ident:
		if v, ok := a.obj(e).(*types.Var); ok {
			return a.taint[v]
		}
	case *ast.BinaryExpr:
		if e.Op == token.ADD {
			return a.mask(e.X) | a.mask(e.Y)
		}
	case *ast.SliceExpr:
		return a.mask(e.X)
	case *ast.IndexExpr:
		if _, ok := a.info.TypeOf(e.X).Underlying().(*types.Map); !ok {
			return a.mask(e.X)
		}
	case *ast.CallExpr:
		return a.call(e)
	}
	return 0
}

// call is what the result of call e carries.
func (a *analysis) call(e *ast.CallExpr) uint64 {
	if tv, ok := a.info.Types[e.Fun]; ok && tv.IsType() {
		if len(e.Args) == 1 {
			return a.mask(e.Args[0]) // a conversion
		}
		return 0
	}
	fn := callee(a.info, e)
	if fn == nil {
		return 0
	}
	if isErrorMethod(fn) {
		return errText
	}
	var args uint64
	for _, arg := range e.Args {
		args |= a.mask(arg)
	}
	switch pkg := pkgPath(fn); {
	case pkg == "fmt" && strings.HasPrefix(fn.Name(), "Sprint"):
		for _, arg := range e.Args {
			if t := a.info.TypeOf(arg); t != nil && !isNil(a.info, arg) && types.Implements(t, errorType) {
				args |= errText
			}
		}
		return args
	case pkg == "strings" || pkg == "bytes":
		return args
	}
	r := a.c.returns[fn.FullName()]
	m := r & errText
	for i, arg := range e.Args {
		if i < 63 && r&(1<<(i+1)) != 0 {
			m |= a.mask(arg)
		}
	}
	return m
}

// sink reports (or, for parameters, records) text reaching a test at n.
func (a *analysis) sink(n ast.Node) {
	hit := func(m uint64, pos token.Pos, what string) {
		a.sinks |= m &^ errText
		if m&errText != 0 && a.report != nil {
			a.report(pos, what+" tests the text of an error")
		}
	}
	switch n := n.(type) {
	case *ast.BinaryExpr:
		switch n.Op {
		case token.EQL, token.NEQ, token.LSS, token.LEQ, token.GTR, token.GEQ:
			if isText(a.info.TypeOf(n.X)) {
				hit(a.mask(n.X)|a.mask(n.Y), n.OpPos, n.Op.String())
			}
		}
	case *ast.SwitchStmt:
		if n.Tag != nil {
			hit(a.mask(n.Tag), n.Tag.Pos(), "a switch")
		}
	case *ast.IndexExpr:
		if _, ok := a.info.TypeOf(n.X).Underlying().(*types.Map); ok {
			hit(a.mask(n.Index), n.Index.Pos(), "a map lookup")
		}
	case *ast.CallExpr:
		fn := callee(a.info, n)
		if fn == nil {
			return
		}
		var m uint64
		name := pkgPath(fn) + "." + fn.Name()
		if testsText(fn) {
			for _, arg := range n.Args {
				m |= a.mask(arg)
			}
		} else if s := a.c.sinks[fn.FullName()]; s != 0 {
			for i, arg := range n.Args {
				if i < 63 && s&(1<<(i+1)) != 0 {
					m |= a.mask(arg)
				}
			}
			name = fn.Name()
		}
		if m != 0 {
			hit(m, n.Lparen, name)
		}
	}
}

var errorType = types.Universe.Lookup("error").Type().Underlying().(*types.Interface)

// textTests are the functions of strings and bytes that test or cut text
// by its content (splitting into lines or fields to print is not one).
var textTests = map[string]bool{
	"Contains": true, "ContainsAny": true, "ContainsRune": true, "ContainsFunc": true,
	"HasPrefix": true, "HasSuffix": true, "Index": true, "IndexAny": true, "IndexByte": true,
	"IndexRune": true, "IndexFunc": true, "LastIndex": true, "LastIndexAny": true,
	"LastIndexByte": true, "LastIndexFunc": true, "Cut": true, "CutPrefix": true,
	"CutSuffix": true, "TrimPrefix": true, "TrimSuffix": true, "EqualFold": true,
	"Compare": true, "Count": true, "Equal": true,
}

// testsText reports whether fn tests its arguments' text.
func testsText(fn *types.Func) bool {
	switch pkgPath(fn) {
	case "strings", "bytes":
		return textTests[fn.Name()] && fn.Type().(*types.Signature).Recv() == nil
	case "regexp":
		return strings.HasPrefix(fn.Name(), "Match") || strings.HasPrefix(fn.Name(), "Find")
	case "slices":
		return slices.Contains([]string{"Contains", "Index", "Equal"}, fn.Name())
	}
	return false
}

// callee is the function or method call e calls, or nil (a function
// value, a built-in).
func callee(info *types.Info, e *ast.CallExpr) *types.Func {
	var id *ast.Ident
	switch f := ast.Unparen(e.Fun).(type) {
	case *ast.Ident:
		id = f
	case *ast.SelectorExpr:
		id = f.Sel
	case *ast.IndexExpr: // an instantiated generic function
		switch g := f.X.(type) {
		case *ast.Ident:
			id = g
		case *ast.SelectorExpr:
			id = g.Sel
		}
	}
	if id == nil {
		return nil
	}
	fn, _ := info.Uses[id].(*types.Func)
	if fn != nil {
		fn = fn.Origin()
	}
	return fn
}

func pkgPath(fn *types.Func) string {
	if fn.Pkg() == nil {
		return ""
	}
	return fn.Pkg().Path()
}

// isErrorMethod reports whether fn is an Error() string method.
func isErrorMethod(fn *types.Func) bool {
	sig := fn.Type().(*types.Signature)
	return fn.Name() == "Error" && sig.Recv() != nil && sig.Params().Len() == 0 &&
		sig.Results().Len() == 1 && types.Identical(sig.Results().At(0).Type(), types.Typ[types.String])
}

// isText reports whether t holds text: a string or a byte slice.
func isText(t types.Type) bool {
	if t == nil {
		return false
	}
	switch u := t.Underlying().(type) {
	case *types.Basic:
		return u.Info()&types.IsString != 0
	case *types.Slice:
		b, ok := u.Elem().Underlying().(*types.Basic)
		return ok && (b.Kind() == types.Byte || u.Elem().Underlying().(*types.Basic).Info()&types.IsString != 0)
	}
	return false
}

func isNil(info *types.Info, e ast.Expr) bool {
	tv, ok := info.Types[e]
	return ok && tv.IsNil()
}
