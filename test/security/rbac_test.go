package security

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/deployconfig/deployconfig/internal/controller"
)

// rule is one RBAC rule and where it comes from.
type rule struct {
	where string
	rbacv1.PolicyRule
}

// The controller's roles (config/rbac/role.yaml, generated from the
// markers) and the deployer's Role grant no wildcard, and touch secrets
// only to read them one at a time by name.
func TestRolesHaveNoWildcardAndOnlyReadSecrets(t *testing.T) {
	rules := append(controllerRules(t), deployerRules()...)
	if len(rules) == 0 {
		t.Fatal("no rules found")
	}
	for _, r := range rules {
		for _, list := range [][]string{r.APIGroups, r.Resources, r.Verbs, r.ResourceNames, r.NonResourceURLs} {
			if slices.ContainsFunc(list, func(s string) bool { return strings.Contains(s, "*") }) {
				t.Errorf("%s: wildcard in %+v", r.where, r.PolicyRule)
			}
		}
		if len(r.NonResourceURLs) > 0 {
			t.Errorf("%s: grants non-resource URLs %v", r.where, r.NonResourceURLs)
		}
		if slices.Contains(r.Resources, "secrets") && !slices.Equal(r.Verbs, []string{"get"}) {
			t.Errorf("%s: secrets with verbs %v, want only get", r.where, r.Verbs)
		}
	}
}

// docs/security.md explains every resource the controller's roles name.
func TestSecurityDocNamesEveryResource(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(suite.Root, "docs", "security.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range controllerRules(t) {
		for _, resource := range r.Resources {
			if !strings.Contains(string(doc), resource) {
				t.Errorf("docs/security.md does not mention %s, which %s grants %v on", resource, r.where, r.Verbs)
			}
		}
	}
}

// controllerRules reads the rules of every role in config/rbac/role.yaml.
func controllerRules(t *testing.T) []rule {
	t.Helper()
	path := filepath.Join(suite.Root, "config", "rbac", "role.yaml")
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dec := utilyaml.NewYAMLOrJSONDecoder(f, 4096)
	var rules []rule
	for {
		var role struct {
			Kind     string                `json:"kind"`
			Metadata struct{ Name string } `json:"metadata"`
			Rules    []rbacv1.PolicyRule   `json:"rules"`
		}
		if err := dec.Decode(&role); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			t.Fatalf("reading %s: %v", path, err)
		}
		for _, r := range role.Rules {
			rules = append(rules, rule{where: role.Kind + " " + role.Metadata.Name, PolicyRule: r})
		}
	}
	return rules
}

// deployerRules are the rules of the deployer's Role.
func deployerRules() []rule {
	var rules []rule
	for _, r := range controller.DeployerRules() {
		rules = append(rules, rule{where: "Role " + controller.DeployerRoleName, PolicyRule: r})
	}
	return rules
}
