package controller

import (
	"context"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	rbacv1ac "k8s.io/client-go/applyconfigurations/rbac/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The controller's own permissions. controller-gen turns these markers into
// config/rbac/role.yaml; docs/security.md says why each rule exists.
//
// +kubebuilder:rbac:groups=apps.deployconfig.io,resources=deploymentconfigs,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=apps.deployconfig.io,resources=deploymentconfigs/status,verbs=get;update
// +kubebuilder:rbac:groups=apps.deployconfig.io,resources=deploymentconfigs/finalizers,verbs=update
// +kubebuilder:rbac:groups=apps.deployconfig.io,resources=rolloutpolicies,verbs=get;list;watch
// +kubebuilder:rbac:groups=apps.deployconfig.io,resources=rolloutpolicies/status,verbs=get;update
// +kubebuilder:rbac:groups="",resources=replicationcontrollers,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups="",resources=replicationcontrollers/scale,verbs=get;update;patch
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups="",resources=pods/log,verbs=get
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups="",resources=serviceaccounts,verbs=get;create
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;create;patch
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups="",resources=services,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=gateway.networking.k8s.io,resources=httproutes;grpcroutes,verbs=get;update
// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions,verbs=get,resourceNames=httproutes.gateway.networking.k8s.io;grpcroutes.gateway.networking.k8s.io
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=roles,verbs=create
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=roles,verbs=patch,resourceNames=deployconfig-deployer
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=rolebindings,verbs=create
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=create,namespace=deployconfig-system
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;update,namespace=deployconfig-system,resourceNames=dc-controller.deployconfig.io

// DeployerRoleName names the Role and RoleBinding that give deployer pods
// their permissions in a namespace.
const DeployerRoleName = "deployconfig-deployer"

// DeployerRules are the permissions of deployer (and custom strategy) pods:
// read their deployment and its siblings, scale them, run and watch hook
// pods and read their logs, report events, read the image pull secrets
// of the deployment's pod template and service account, which tagImages
// hooks push with, point the BlueGreen strategy's Services and those of
// trafficRouting, and set the weights of trafficRouting's routes. The controller holds each of these itself, as RBAC
// requires of whoever grants them.
func DeployerRules() []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"replicationcontrollers"}, Verbs: []string{"get", "list", "watch", "update", "patch"}},
		{APIGroups: []string{""}, Resources: []string{"replicationcontrollers/scale"}, Verbs: []string{"get", "update", "patch"}},
		{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list", "watch", "create", "delete"}},
		{APIGroups: []string{""}, Resources: []string{"pods/log"}, Verbs: []string{"get"}},
		{APIGroups: []string{""}, Resources: []string{"events"}, Verbs: []string{"create", "patch"}},
		// get only: pull secrets are read by the names the template and its
		// service account give, never listed or watched.
		{APIGroups: []string{""}, Resources: []string{"secrets", "serviceaccounts"}, Verbs: []string{"get"}},
		// The BlueGreen strategy points its active and preview Services at
		// a deployment: it reads them and patches their selector, by name.
		{APIGroups: []string{""}, Resources: []string{"services"}, Verbs: []string{"get", "patch"}},
		// trafficRouting sets the weights and header rules of the Gateway
		// API routes it names: it reads and rewrites them, by name.
		{APIGroups: []string{"gateway.networking.k8s.io"}, Resources: []string{"httproutes", "grpcroutes"}, Verbs: []string{"get", "update"}},
	}
}

// deployerAccess creates the deployer ServiceAccount, Role and RoleBinding
// in a namespace the first time a DeploymentConfig there is synced. It
// remembers the namespaces it has done so that later syncs cost nothing.
type deployerAccess struct {
	client client.Client

	mu   sync.Mutex
	done map[string]bool
}

func newDeployerAccess(c client.Client) *deployerAccess {
	return &deployerAccess{client: c, done: map[string]bool{}}
}

// ensure makes sure the namespace has the deployer's account and role.
func (a *deployerAccess) ensure(ctx context.Context, namespace string) error {
	a.mu.Lock()
	done := a.done[namespace]
	a.mu.Unlock()
	if done {
		return nil
	}
	meta := func(name string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: map[string]string{"app.kubernetes.io/managed-by": "dc-controller"}}
	}
	// The Role is applied rather than created, so that a namespace set up by
	// an older controller gets the rules deployers need now. It goes first:
	// RBAC lets a binding to a Role be created only once the Role exists.
	role := rbacv1ac.Role(DeployerRoleName, namespace).
		WithLabels(map[string]string{"app.kubernetes.io/managed-by": "dc-controller"})
	for _, rule := range DeployerRules() {
		role.WithRules(rbacv1ac.PolicyRule().WithAPIGroups(rule.APIGroups...).WithResources(rule.Resources...).WithVerbs(rule.Verbs...))
	}
	if err := a.client.Apply(ctx, role, client.FieldOwner("dc-controller"), client.ForceOwnership); err != nil {
		return fmt.Errorf("apply deployer role %s/%s: %w", namespace, DeployerRoleName, err)
	}
	objects := []client.Object{
		&corev1.ServiceAccount{ObjectMeta: meta(DeployerServiceAccount)},
		&rbacv1.RoleBinding{
			ObjectMeta: meta(DeployerRoleName),
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: DeployerRoleName},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: DeployerServiceAccount, Namespace: namespace}},
		},
	}
	for _, obj := range objects {
		if err := a.client.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create deployer %T %s/%s: %w", obj, namespace, obj.GetName(), err)
		}
	}
	a.mu.Lock()
	a.done[namespace] = true
	a.mu.Unlock()
	return nil
}

// forget makes the next ensure for the namespace check again, e.g. after a
// deployer pod could not be created for lack of its service account.
func (a *deployerAccess) forget(namespace string) {
	a.mu.Lock()
	delete(a.done, namespace)
	a.mu.Unlock()
}
