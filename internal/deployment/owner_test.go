package deployment

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
)

// progressKeys are the constants of api/v1 that name where a rollout's
// progress is kept. Only this package reads or writes them.
var progressKeys = map[string]string{
	"RolloutProgressAnnotation": dcv1.RolloutProgressAnnotation,
	"PromoteRequestAnnotation":  dcv1.PromoteRequestAnnotation,
	"DeploymentLogAnnotation":   dcv1.DeploymentLogAnnotation,
	"AnalysisAnnotationPrefix":  dcv1.AnalysisAnnotationPrefix,
}

// TestOnlyThisPackageIndexesProgress fails when product code outside
// internal/deployment names a key of the progress record, a request or
// the log, by constant or by its string, or one of the keys progress was
// kept in before the record: two packages that read such keys each their
// own way is how "is this rollout paused?" came to have two answers.
func TestOnlyThisPackageIndexesProgress(t *testing.T) {
	root := filepath.Join("..", "..")
	forbidden := map[string]bool{}
	for _, v := range progressKeys {
		forbidden[v] = true
	}
	for _, k := range legacyKeys {
		forbidden[k] = true
	}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			switch rel {
			case filepath.Join("internal", "deployment"), filepath.Join("api", "v1"), "bin", ".git", "hack":
				return filepath.SkipDir
			}
			if d.Name() == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		for _, use := range progressUses(t, path, forbidden) {
			t.Errorf("%s: %s: read and write the rollout's progress through internal/deployment", rel, use)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// progressUses lists where a Go file names a progress key.
func progressUses(t *testing.T, path string, forbidden map[string]bool) []string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatalf("parse %s: %v", path, err)
	}
	apiNames := map[string]bool{}
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p == "github.com/deployconfig/deployconfig/api/v1" {
			name := "v1"
			if imp.Name != nil {
				name = imp.Name.Name
			}
			apiNames[name] = true
		}
	}
	var uses []string
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			if x, ok := n.X.(*ast.Ident); ok && apiNames[x.Name] {
				if _, ok := progressKeys[n.Sel.Name]; ok {
					uses = append(uses, fset.Position(n.Pos()).String()+": "+x.Name+"."+n.Sel.Name)
				}
			}
		case *ast.BasicLit:
			if s, err := strconv.Unquote(n.Value); err == nil && n.Kind == token.STRING && forbidden[s] {
				uses = append(uses, fset.Position(n.Pos()).String()+": "+n.Value)
			}
		}
		return true
	})
	return uses
}
