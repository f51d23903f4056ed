package analysis

import (
	"strings"
	"testing"
)

// TestRenderQuery: a query is text and the four fields of Vars, with or
// without trim markers, substituted as they are.
func TestRenderQuery(t *testing.T) {
	vars := Vars{Namespace: "ns", DeploymentConfig: "web", Deployment: "web-12", Version: 12}
	tests := []struct {
		name, query, want string
	}{
		{name: "text only", query: "up", want: "up"},
		{name: "every field", query: `x{ns="{{.Namespace}}",dc="{{.DeploymentConfig}}",rc="{{.Deployment}}",v="{{.Version}}"}`,
			want: `x{ns="ns",dc="web",rc="web-12",v="12"}`},
		{name: "spaces inside the action", query: `{{ .Deployment }}`, want: "web-12"},
		{name: "trim markers", query: "a  {{- .Version -}}  b", want: "a12b"},
		{name: "left trim only", query: "a \n{{- .Version }} b", want: "a12 b"},
		{name: "a field twice", query: "{{.Version}}{{.Version}}", want: "1212"},
		{name: "a comment is dropped", query: "up{{/* why */}}", want: "up"},
		{name: "delimiters inside text stay", query: `label_replace(up, "a", "}}", "b", "x")`, want: `label_replace(up, "a", "}}", "b", "x")`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := RenderQuery(tc.query, vars)
			if err != nil {
				t.Fatalf("RenderQuery(%q): %v", tc.query, err)
			}
			if got != tc.want {
				t.Fatalf("RenderQuery(%q) = %q, want %q", tc.query, got, tc.want)
			}
		})
	}
}

// TestRenderQueryRefuses: anything of Go templates beyond the four fields
// is refused before anything is executed, naming what was found and the
// fields a query may use; so is a query whose output would pass the cap.
func TestRenderQueryRefuses(t *testing.T) {
	tests := []struct {
		name, query string
		found       string
	}{
		{name: "nested range of the issue", query: `{{range 100000}}{{range 100000}}x{{end}}{{end}}`, found: "{{range 100000}}"},
		{name: "printf of a huge width", query: `{{range 200}}{{printf "%01000000d" 0}}{{end}}`, found: "range"},
		{name: "printf alone", query: `{{printf "%01000000d" 0}}`, found: "printf"},
		{name: "a function of a field", query: `{{len .Deployment}}`, found: "len"},
		{name: "a pipeline", query: `{{.Version | printf "%d"}}`, found: "pipeline"},
		{name: "define", query: `{{define "x"}}{{.Version}}{{end}}up`, found: "define"},
		{name: "define of the query itself", query: `{{define "query"}}{{.Version}}{{end}}`, found: "define"},
		{name: "template", query: `{{template "x" .}}`, found: "template"},
		{name: "block", query: `{{block "x" .}}{{.Version}}{{end}}`, found: "block"},
		{name: "if", query: `{{if .Version}}up{{end}}`, found: "if"},
		{name: "with", query: `{{with .Deployment}}up{{end}}`, found: "with"},
		{name: "a variable", query: `{{$v := .Version}}{{$v}}`, found: "variable"},
		{name: "the dot", query: `{{.}}`, found: "{{.}}"},
		{name: "a constant", query: `{{"up"}}`, found: `{{"up"}}`},
		{name: "a field of a field", query: `{{.Deployment.Len}}`, found: "{{.Deployment.Len}}"},
		{name: "an unknown field", query: `up{x="{{.Deploymnet}}"}`, found: "{{.Deploymnet}}"},
		{name: "a method of Vars", query: `{{.String}}`, found: "{{.String}}"},
		{name: "parenthesised", query: `{{(.Version)}}`, found: "(.Version)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := RenderQuery(tc.query, SampleVars())
			if err == nil {
				t.Fatalf("RenderQuery(%q) accepted it", tc.query)
			}
			msg := err.Error()
			for _, want := range []string{tc.found, "{{.Namespace}}, {{.DeploymentConfig}}, {{.Deployment}}, {{.Version}}, {{.StableService}} and {{.CanaryService}}"} {
				if !strings.Contains(msg, want) {
					t.Errorf("error %q does not contain %q", msg, want)
				}
			}
		})
	}
}

// TestQueryOutputCap: a query whose output could pass MaxQueryBytes with
// the longest names Kubernetes allows is refused, naming the limit, even
// if short names would fit; rendering checks the cap as well.
func TestQueryOutputCap(t *testing.T) {
	long := Vars{Namespace: strings.Repeat("n", 63), DeploymentConfig: strings.Repeat("d", 253), Deployment: strings.Repeat("r", 253), Version: 1}
	tests := []struct {
		name    string
		query   string
		vars    Vars
		refused bool
	}{
		{name: "text up to the cap", query: strings.Repeat("x", 8192), vars: long},
		{name: "fields that fit", query: strings.Repeat("{{.Deployment}}", 200), vars: long},
		{name: "fields that could pass the cap", query: strings.Repeat("{{.Deployment}}", 300), vars: SampleVars(), refused: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := RenderQuery(tc.query, tc.vars)
			if tc.refused {
				if err == nil || !strings.Contains(err.Error(), "64 KiB") {
					t.Fatalf("RenderQuery gave %d bytes and error %v, want an error naming the limit of 64 KiB", len(out), err)
				}
				return
			}
			if err != nil {
				t.Fatalf("RenderQuery: %v", err)
			}
			if len(out) > MaxQueryBytes {
				t.Fatalf("rendered %d bytes, over the cap of %d", len(out), MaxQueryBytes)
			}
		})
	}
}
