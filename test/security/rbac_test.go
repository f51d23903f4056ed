package security

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/deployconfig/deployconfig/internal/controller"
	"github.com/deployconfig/deployconfig/test/clusterenv"
)

// rule is one RBAC rule and where it comes from.
type rule struct {
	where string
	rbacv1.PolicyRule
}

// The controller's roles (config/rbac/role.yaml, generated from the
// markers) and the deployer's Role grant no wildcard, and touch secrets
// only to read them one at a time by name (and, the controller, to create
// and own configuration snapshots).
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
		if slices.Contains(r.Resources, "secrets") && !slices.Equal(r.Verbs, secretVerbs(r.where)) {
			t.Errorf("%s: secrets with verbs %v, want only %v", r.where, r.Verbs, secretVerbs(r.where))
		}
	}
}

// secretVerbs are the verbs a role may have on secrets: get, one at a time
// by name; the controller's ClusterRole also creates configuration
// snapshots and patches their owner references (docs/config-snapshots.md),
// and never lists or watches a Secret.
func secretVerbs(where string) []string {
	if where == "ClusterRole dc-controller" {
		return []string{"create", "get", "patch"}
	}
	return []string{"get"}
}

// Rules on objects the controller knows by name are limited to those names:
// it patches (server-side applies) only the deployer Role, reads and
// renews only its leader-election Lease, and reads only the Gateway API's
// route CRDs. Creates cannot be limited (RBAC
// does not know a created object's name), so they are rules of their own.
func TestNamedObjectsOnlyByName(t *testing.T) {
	named := map[string][]string{
		"roles":                     {controller.DeployerRoleName},
		"leases":                    {controller.LeaderElectionID},
		"customresourcedefinitions": {"grpcroutes.gateway.networking.k8s.io", "httproutes.gateway.networking.k8s.io"},
	}
	for _, r := range controllerRules(t) {
		for _, resource := range r.Resources {
			want, ok := named[resource]
			if !ok {
				continue
			}
			for _, verb := range r.Verbs {
				if verb != "create" && !slices.Equal(r.ResourceNames, want) {
					t.Errorf("%s: %s on %s for names %v, want only %v", r.where, verb, resource, r.ResourceNames, want)
				}
			}
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

// checkDeployerRoleNamespaced checks the deployer's access in a namespace
// where a DeploymentConfig rolled out: a Role and a RoleBinding of that
// namespace, for its deployer ServiceAccount only, and nothing cluster-wide,
// so that the account may act in its own namespace and in no other.
func checkDeployerRoleNamespaced(t *testing.T, ns string) {
	t.Helper()
	ctx := t.Context()
	rbac := suite.Clientset().RbacV1()
	role, err := rbac.Roles(ns).Get(ctx, controller.DeployerRoleName, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the deployer's Role: %v", err)
	}
	if !equality.Semantic.DeepEqual(role.Rules, controller.DeployerRules()) {
		t.Errorf("Role %s/%s has rules %+v, want %+v", ns, role.Name, role.Rules, controller.DeployerRules())
	}
	binding, err := rbac.RoleBindings(ns).Get(ctx, controller.DeployerRoleName, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the deployer's RoleBinding: %v", err)
	}
	wantSubjects := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: controller.DeployerServiceAccount, Namespace: ns}}
	if binding.RoleRef.Kind != "Role" || binding.RoleRef.Name != controller.DeployerRoleName || !equality.Semantic.DeepEqual(binding.Subjects, wantSubjects) {
		t.Errorf("RoleBinding %s/%s binds %+v to %+v, want Role %s to the deployer ServiceAccount", ns, binding.Name, binding.Subjects, binding.RoleRef, controller.DeployerRoleName)
	}
	account := "system:serviceaccount:" + ns + ":" + controller.DeployerServiceAccount
	clusterBindings, err := rbac.ClusterRoleBindings().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range clusterBindings.Items {
		for _, s := range b.Subjects {
			if s.Kind == rbacv1.ServiceAccountKind && s.Name == controller.DeployerServiceAccount && s.Namespace == ns {
				t.Errorf("ClusterRoleBinding %s binds %s cluster-wide", b.Name, account)
			}
		}
	}
	for _, tt := range []struct {
		namespace string
		want      bool
	}{{ns, true}, {"default", false}, {clusterenv.ControllerNamespace, false}} {
		allowed := canUpdateRCs(t, account, ns, tt.namespace)
		if allowed != tt.want {
			t.Errorf("%s may update replicationcontrollers in namespace %s: %t, want %t", account, tt.namespace, allowed, tt.want)
		}
	}
}

// canUpdateRCs asks the API server whether a ServiceAccount of namespace
// saNamespace may update ReplicationControllers in namespace.
func canUpdateRCs(t *testing.T, user, saNamespace, namespace string) bool {
	t.Helper()
	review := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User:   user,
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + saNamespace, "system:authenticated"},
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Namespace: namespace, Verb: "update", Resource: "replicationcontrollers",
		},
	}}
	got, err := suite.Clientset().AuthorizationV1().SubjectAccessReviews().Create(t.Context(), review, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("asking whether %s may update RCs in %s: %v", user, namespace, err)
	}
	return got.Status.Allowed
}
