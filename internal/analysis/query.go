package analysis

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"text/template/parse"
)

// MaxQueryBytes bounds a rendered query. A query is at most 8192
// characters (the CRD's limit), so only a query full of fields can come
// near it; the cap makes the bound explicit for whoever renders.
const MaxQueryBytes = 64 << 10

// allowedFields names what a query may use, for error messages.
const allowedFields = "a query may use only the fields {{.Namespace}}, {{.DeploymentConfig}}, {{.Deployment}}, {{.Version}}, {{.StableService}} and {{.CanaryService}} (with or without trim markers), and no other actions, functions or pipelines"

// limitText is MaxQueryBytes as errors name it.
const limitText = "64 KiB"

// longestField is the longest value the named field of Vars can have, and
// whether Vars has it: a namespace is a DNS label, a DeploymentConfig and
// an RC a DNS subdomain, a version an int64. The bound on a query's output
// uses them, so that a query accepted by validation renders within
// MaxQueryBytes for any names.
func longestField(name string) (int, bool) {
	switch name {
	case "Namespace":
		return 63, true
	case "DeploymentConfig", "Deployment":
		return 253, true
	case "Version":
		return len("-9223372036854775808"), true
	case "StableService", "CanaryService":
		return 63, true
	}
	return 0, false
}

// queryName names the parse tree of a query; a define of the same name is
// refused like any other.
const queryName = "query"

// queryPart is a piece of a checked query: text, or the name of a field.
type queryPart struct {
	text  string
	field string
}

// queryTemplate is a query checked to hold only text and fields of Vars.
// Rendering it is substitution: no template is ever executed, so what a
// DeploymentConfig's author writes costs its length to check and its
// bounded output to render.
type queryTemplate []queryPart

// parseQuery parses a query as a Go template and checks that it holds
// only text and the fields of Vars, and that its output cannot pass
// MaxQueryBytes whatever the names.
func parseQuery(query string) (queryTemplate, error) {
	if strings.TrimSpace(query) == "" {
		return nil, errors.New("must not be empty")
	}
	tree := parse.New(queryName)
	// Functions are refused below, by name, rather than by the parser as
	// undefined.
	tree.Mode = parse.SkipFuncCheck
	trees := map[string]*parse.Tree{}
	if _, err := tree.Parse(query, "", "", trees); err != nil {
		return nil, fmt.Errorf("does not parse as a Go template: %w", err)
	}
	parts, err := checkNodes(tree.Root)
	if err != nil {
		return nil, err
	}
	for _, name := range slices.Sorted(maps.Keys(trees)) {
		if trees[name] != tree {
			return nil, refused(fmt.Sprintf("{{define %q}}", name), "a define or block")
		}
	}
	if parts.blank() {
		return nil, errors.New("must not be empty")
	}
	if n := parts.longestOutput(); n > MaxQueryBytes {
		return nil, fmt.Errorf("does not render: with the longest names Kubernetes allows its output is %d bytes, over the limit of %s", n, limitText)
	}
	return parts, nil
}

// checkNodes turns the top-level nodes of a parse tree into parts,
// refusing every node but text and a lone field of Vars.
func checkNodes(root *parse.ListNode) (queryTemplate, error) {
	var parts queryTemplate
	if root == nil {
		return parts, nil
	}
	for _, n := range root.Nodes {
		switch n := n.(type) {
		case *parse.TextNode:
			parts = append(parts, queryPart{text: string(n.Text)})
		case *parse.CommentNode:
		case *parse.ActionNode:
			f, err := checkAction(n)
			if err != nil {
				return nil, err
			}
			parts = append(parts, queryPart{field: f})
		case *parse.RangeNode:
			return nil, refused("{{range "+n.Pipe.String()+"}}", "a range action")
		case *parse.IfNode:
			return nil, refused("{{if "+n.Pipe.String()+"}}", "an if action")
		case *parse.WithNode:
			return nil, refused("{{with "+n.Pipe.String()+"}}", "a with action")
		case *parse.TemplateNode:
			return nil, refused(n.String(), "a template or block call")
		default:
			return nil, refused(n.String(), "an action")
		}
	}
	return parts, nil
}

// checkAction returns the field an action prints, or why it is refused.
func checkAction(a *parse.ActionNode) (string, error) {
	p := a.Pipe
	switch {
	case len(p.Decl) > 0 || p.IsAssign:
		return "", refused(a.String(), "a variable")
	case len(p.Cmds) != 1:
		return "", refused(a.String(), "a pipeline")
	case len(p.Cmds[0].Args) != 1:
		return "", refused(a.String(), "a function call "+p.Cmds[0].Args[0].String())
	}
	switch arg := p.Cmds[0].Args[0].(type) {
	case *parse.FieldNode:
		if len(arg.Ident) == 1 {
			if _, ok := longestField(arg.Ident[0]); ok {
				return arg.Ident[0], nil
			}
		}
		return "", refused(a.String(), "an unknown field")
	case *parse.IdentifierNode:
		return "", refused(a.String(), "a function call "+arg.Ident)
	case *parse.VariableNode:
		return "", refused(a.String(), "a variable")
	}
	return "", refused(a.String(), "an action other than a field")
}

// refused is the error for a node a query may not hold; found is cut so
// that a long body does not fill the message.
func refused(found, what string) error {
	const maxFound = 80
	if len(found) > maxFound {
		found = found[:maxFound] + "..."
	}
	return fmt.Errorf("does not render: found %s (%s); %s", found, what, allowedFields)
}

// longestOutput is the size of the output with the longest names.
func (q queryTemplate) longestOutput() int {
	n := 0
	for _, p := range q {
		l, _ := longestField(p.field)
		n += len(p.text) + l
	}
	return n
}

// blank reports whether the query renders to white space whatever the
// names: a query of comments only.
func (q queryTemplate) blank() bool {
	for _, p := range q {
		if p.field != "" || strings.TrimSpace(p.text) != "" {
			return false
		}
	}
	return true
}

// render substitutes vars into the query, refusing output over
// MaxQueryBytes.
func (q queryTemplate) render(vars Vars) (string, error) {
	var b strings.Builder
	for _, p := range q {
		b.WriteString(p.text)
		b.WriteString(vars.field(p.field))
		if b.Len() > MaxQueryBytes {
			return "", fmt.Errorf("does not render: its output passes the limit of %s", limitText)
		}
	}
	return b.String(), nil
}

// field is the value of the named field of Vars; "" for none.
func (v Vars) field(name string) string {
	switch name {
	case "Namespace":
		return v.Namespace
	case "DeploymentConfig":
		return v.DeploymentConfig
	case "Deployment":
		return v.Deployment
	case "Version":
		return strconv.FormatInt(v.Version, 10)
	case "StableService":
		return v.StableService
	case "CanaryService":
		return v.CanaryService
	}
	return ""
}

// RenderQuery renders a query with vars: it checks the query (see
// CheckQuery) and substitutes the fields. A misspelt {{.Deploymnet}} is an
// error rather than an empty string.
func RenderQuery(query string, vars Vars) (string, error) {
	q, err := parseQuery(query)
	if err != nil {
		return "", err
	}
	return q.render(vars)
}

// CheckQuery checks a query without rendering it: it must parse as a Go
// template holding only text and {{.Namespace}}, {{.DeploymentConfig}},
// {{.Deployment}}, {{.Version}}, {{.StableService}}, {{.CanaryService}}, and render within MaxQueryBytes for
// any names. Its cost is linear in the query's length.
func CheckQuery(query string) error {
	_, err := parseQuery(query)
	return err
}
