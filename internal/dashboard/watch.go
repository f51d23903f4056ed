package dashboard

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
)

// syncTimeout bounds the first list of every watch: a dashboard that cannot
// read its cluster says so instead of serving empty pages.
const syncTimeout = time.Minute

// store holds what the pages show, kept current by watches (informers) made
// as the user: DeploymentConfigs, their ReplicationControllers, pods and
// events, and the RolloutPolicies that govern them. It watches every
// namespace at once when the user may list DeploymentConfigs in all of
// them; else each namespace where the user may (when the user may list
// namespaces), else the kubeconfig's namespace. A kind the user may not
// list is left out, and the pages say so.
type store struct {
	// all is true when one set of watches covers every namespace, kept
	// under the key "".
	all bool
	// scopes are the watches by namespace.
	scopes map[string]*scope
	// missing says what the user may not list, for the pages.
	missing []string
	hub     *hub
}

// scope is the watches of one namespace, or of all. Each watch asks the
// API server only for what a page shows, by label or field, so that the
// dashboard's memory and wake-ups follow the DeploymentConfigs rather
// than the cluster: the RCs of DeploymentConfigs; their pods (pods) and
// their deployer and hook pods (deployerPods); the events about
// DeploymentConfigs (events) and about RCs (rcEvents); the RolloutPolicies
// (policies; nil where the user may not list them or the cluster has no
// RolloutPolicy API).
type scope struct {
	dcs, rcs, pods, deployerPods, events, rcEvents, policies cache.SharedIndexInformer
}

// The selections of the watches.
const (
	rcSelector          = dcv1.DeploymentConfigLabel
	podSelector         = dcv1.DeploymentSelectorLabel
	deployerPodSelector = dcv1.DeployerPodForDeploymentLabel
	dcEventSelector     = "involvedObject.kind=DeploymentConfig"
	rcEventSelector     = "involvedObject.kind=ReplicationController"
)

// newStore finds what the user may list and starts the watches; it returns
// when their first lists are in.
func newStore(ctx context.Context, kube kubernetes.Interface, dcs client.WithWatch, namespace string, log logr.Logger) (*store, error) {
	s := &store{hub: newHub(), scopes: map[string]*scope{}}
	namespaces, all, err := dcNamespaces(ctx, kube, dcs, namespace)
	if err != nil {
		return nil, err
	}
	s.all = all
	var running []cache.SharedIndexInformer
	for _, ns := range namespaces {
		sc, started, err := s.watch(ctx, kube, dcs, ns, log)
		if err != nil {
			return nil, err
		}
		s.scopes[ns] = sc
		running = append(running, started...)
	}
	syncCtx, cancel := context.WithTimeout(ctx, syncTimeout)
	defer cancel()
	for _, inf := range running {
		if !cache.WaitForCacheSync(syncCtx.Done(), inf.HasSynced) {
			return nil, fmt.Errorf("read the cluster's DeploymentConfigs, deployments, pods and events: no answer within %s", syncTimeout)
		}
	}
	return s, nil
}

// watch starts the watches of one namespace ("" for all) and returns them.
func (s *store) watch(ctx context.Context, kube kubernetes.Interface, dcs client.WithWatch, namespace string, log logr.Logger) (*scope, []cache.SharedIndexInformer, error) {
	byNS := cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}
	sc := &scope{dcs: cache.NewSharedIndexInformer(listWatch(dcs, namespace, &dcv1.DeploymentConfigList{}), &dcv1.DeploymentConfig{}, 0, byNS)}
	selected := func(labels, fields string) informers.SharedInformerFactory {
		return informers.NewSharedInformerFactoryWithOptions(kube, 0, informers.WithNamespace(namespace),
			informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector, o.FieldSelector = labels, fields }))
	}
	optional := []struct {
		kind     string
		into     *cache.SharedIndexInformer
		informer func() cache.SharedIndexInformer
	}{
		{"replicationcontrollers", &sc.rcs, selected(rcSelector, "").Core().V1().ReplicationControllers().Informer},
		{"pods", &sc.pods, selected(podSelector, "").Core().V1().Pods().Informer},
		{"pods", &sc.deployerPods, selected(deployerPodSelector, "").Core().V1().Pods().Informer},
		{"events", &sc.events, selected("", dcEventSelector).Core().V1().Events().Informer},
		{"events", &sc.rcEvents, selected("", rcEventSelector).Core().V1().Events().Informer},
	}
	started := []cache.SharedIndexInformer{sc.dcs}
	policies, err := s.mayListPolicies(ctx, dcs, namespace, log)
	if err != nil {
		return nil, nil, err
	}
	if policies {
		sc.policies = cache.NewSharedIndexInformer(listWatch(dcs, namespace, &dcv1.RolloutPolicyList{}), &dcv1.RolloutPolicy{}, 0, byNS)
		started = append(started, sc.policies)
	}
	allowed := map[string]bool{}
	for _, o := range optional {
		ok, checked := allowed[o.kind]
		if !checked {
			var err error
			if ok, err = mayListKind(ctx, kube, o.kind, namespace); err != nil {
				return nil, nil, err
			}
			allowed[o.kind] = ok
			if !ok {
				s.leaveOut(o.kind, namespace, log)
			}
		}
		if ok {
			*o.into = o.informer()
			started = append(started, *o.into)
		}
	}
	for _, inf := range started {
		if err := inf.SetTransform(stripManagedFields); err != nil {
			return nil, nil, fmt.Errorf("watch for changes: %w", err)
		}
		if _, err := inf.AddEventHandler(s.hub.handler()); err != nil {
			return nil, nil, fmt.Errorf("watch for changes: %w", err)
		}
		go inf.Run(ctx.Done())
	}
	return sc, started, nil
}

// leaveOut records that the user may not list a kind in namespace, for
// the pages to say.
func (s *store) leaveOut(kind, namespace string, log logr.Logger) {
	where := "in namespace " + namespace
	if namespace == "" {
		where = "in every namespace"
	}
	s.missing = append(s.missing, kind+" "+where)
	log.Info("the user may not list this kind; the dashboard leaves it out", "kind", kind, "namespace", namespace)
}

// mayListPolicies reports whether the dashboard watches the RolloutPolicies
// of namespace: not when the user may not list them (which the pages say),
// nor when the cluster has no RolloutPolicy API (then none governs).
func (s *store) mayListPolicies(ctx context.Context, dcs client.WithWatch, namespace string, log logr.Logger) (bool, error) {
	err := dcs.List(ctx, &dcv1.RolloutPolicyList{}, client.InNamespace(namespace), client.Limit(1))
	switch {
	case err == nil:
		return true, nil
	case apierrors.IsForbidden(err):
		s.leaveOut("rolloutpolicies", namespace, log)
		return false, nil
	case apierrors.IsNotFound(err) || meta.IsNoMatchError(err):
		return false, nil
	}
	return false, fmt.Errorf("list rolloutpolicies: %w", err)
}

// dcNamespaces finds where the user may list DeploymentConfigs: every
// namespace at once ([""], all), else the namespaces where a
// SelfSubjectAccessReview says so (when the user may list namespaces), else
// the kubeconfig's namespace.
func dcNamespaces(ctx context.Context, kube kubernetes.Interface, dcs client.WithWatch, fallback string) ([]string, bool, error) {
	all, err := mayListDCs(ctx, dcs)
	if err != nil || all {
		return []string{""}, all, err
	}
	list, err := kube.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	if apierrors.IsForbidden(err) {
		return onlyNamespace(ctx, dcs, fallback)
	}
	if err != nil {
		return nil, false, fmt.Errorf("list namespaces: %w", err)
	}
	var allowed []string
	for _, ns := range list.Items {
		ok, err := mayListDCsIn(ctx, kube, ns.Name)
		if err != nil {
			return nil, false, err
		}
		if ok {
			allowed = append(allowed, ns.Name)
		}
	}
	if len(allowed) == 0 {
		return onlyNamespace(ctx, dcs, fallback)
	}
	sort.Strings(allowed)
	return allowed, false, nil
}

// onlyNamespace is the one namespace the dashboard shows when it can find
// no other: an error when the user may not list DeploymentConfigs there
// either.
func onlyNamespace(ctx context.Context, dcs client.WithWatch, namespace string) ([]string, bool, error) {
	err := dcs.List(ctx, &dcv1.DeploymentConfigList{}, client.InNamespace(namespace), client.Limit(1))
	if apierrors.IsForbidden(err) {
		return nil, false, fmt.Errorf("you may not list DeploymentConfigs in namespace %s, nor in every namespace (pick another with -n): %w", namespace, err)
	}
	if err != nil {
		return nil, false, fmt.Errorf("list deploymentconfigs in namespace %s: %w", namespace, err)
	}
	return []string{namespace}, false, nil
}

// mayListDCs reports whether the user may list DeploymentConfigs in every
// namespace: a Forbidden answer is a no, other errors are errors.
func mayListDCs(ctx context.Context, dcs client.WithWatch) (bool, error) {
	list := &dcv1.DeploymentConfigList{}
	err := dcs.List(ctx, list, client.Limit(1))
	switch {
	case err == nil:
		return true, nil
	case apierrors.IsForbidden(err):
		return false, nil
	case apierrors.IsNotFound(err) || meta.IsNoMatchError(err):
		return false, fmt.Errorf("the DeploymentConfig API (%s) is not installed on this cluster: apply the CRD of config/crd first", dcv1.GroupVersion)
	}
	return false, fmt.Errorf("list deploymentconfigs: %w", err)
}

// mayListDCsIn asks the API server whether the user may list and watch
// DeploymentConfigs in namespace.
func mayListDCsIn(ctx context.Context, kube kubernetes.Interface, namespace string) (bool, error) {
	for _, verb := range []string{"list", "watch"} {
		review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
			ResourceAttributes: &authorizationv1.ResourceAttributes{
				Namespace: namespace, Verb: verb, Group: dcv1.GroupVersion.Group, Resource: "deploymentconfigs",
			},
		}}
		got, err := kube.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, review, metav1.CreateOptions{})
		if err != nil {
			return false, fmt.Errorf("ask whether you may %s deploymentconfigs in namespace %s: %w", verb, namespace, err)
		}
		if !got.Status.Allowed {
			return false, nil
		}
	}
	return true, nil
}

// mayListKind reports whether the user may list a core kind in namespace.
func mayListKind(ctx context.Context, kube kubernetes.Interface, kind, namespace string) (bool, error) {
	opts := metav1.ListOptions{Limit: 1}
	var err error
	switch kind {
	case "replicationcontrollers":
		_, err = kube.CoreV1().ReplicationControllers(namespace).List(ctx, opts)
	case "pods":
		_, err = kube.CoreV1().Pods(namespace).List(ctx, opts)
	case "events":
		_, err = kube.CoreV1().Events(namespace).List(ctx, opts)
	default:
		return false, fmt.Errorf("no check for kind %s", kind)
	}
	if apierrors.IsForbidden(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("list %s: %w", kind, err)
	}
	return true, nil
}

// listWatch lists and watches one of deployconfig's kinds (its list type
// is like's) through the controller-runtime client the CLI uses.
func listWatch(c client.WithWatch, namespace string, like client.ObjectList) *cache.ListWatch {
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, options metav1.ListOptions) (runtime.Object, error) {
			list := like.DeepCopyObject().(client.ObjectList)
			err := c.List(ctx, list, &client.ListOptions{Namespace: namespace, Raw: &options})
			return list, err
		},
		WatchFuncWithContext: func(ctx context.Context, options metav1.ListOptions) (watch.Interface, error) {
			return c.Watch(ctx, like.DeepCopyObject().(client.ObjectList), &client.ListOptions{Namespace: namespace, Raw: &options})
		},
	}
}

// Namespaces lists the namespaces the store watches one by one, nil when
// it watches all at once.
func (s *store) Namespaces() []string {
	if s.all {
		return nil
	}
	var out []string
	for ns := range s.scopes {
		out = append(out, ns)
	}
	sort.Strings(out)
	return out
}

// scopeOf is the watches that hold namespace, or nil.
func (s *store) scopeOf(namespace string) *scope {
	if s.all {
		return s.scopes[""]
	}
	return s.scopes[namespace]
}

// DeploymentConfigs returns the DeploymentConfigs of namespace ("" for all
// the store holds).
func (s *store) DeploymentConfigs(namespace string) []*dcv1.DeploymentConfig {
	var objs []any
	if namespace == "" {
		for _, sc := range s.scopes {
			objs = append(objs, sc.dcs.GetStore().List()...)
		}
	} else if sc := s.scopeOf(namespace); sc != nil {
		objs = byNamespace(sc.dcs, namespace)
	}
	out := make([]*dcv1.DeploymentConfig, 0, len(objs))
	for _, o := range objs {
		out = append(out, o.(*dcv1.DeploymentConfig))
	}
	return out
}

// DeploymentConfig returns one DeploymentConfig, or nil.
func (s *store) DeploymentConfig(namespace, name string) *dcv1.DeploymentConfig {
	sc := s.scopeOf(namespace)
	if sc == nil {
		return nil
	}
	obj, ok, _ := sc.dcs.GetStore().GetByKey(namespace + "/" + name)
	if !ok {
		return nil
	}
	return obj.(*dcv1.DeploymentConfig)
}

// Policies returns the RolloutPolicies of namespace ("" for all the store
// holds), as copies of the cached objects' top level: Governing sorts them.
func (s *store) Policies(namespace string) []dcv1.RolloutPolicy {
	var objs []any
	if namespace == "" {
		for _, sc := range s.scopes {
			if sc.policies != nil {
				objs = append(objs, sc.policies.GetStore().List()...)
			}
		}
	} else if sc := s.scopeOf(namespace); sc != nil {
		objs = byNamespace(sc.policies, namespace)
	}
	out := make([]dcv1.RolloutPolicy, 0, len(objs))
	for _, o := range objs {
		out = append(out, *o.(*dcv1.RolloutPolicy))
	}
	return out
}

// Policy returns one RolloutPolicy, or nil.
func (s *store) Policy(namespace, name string) *dcv1.RolloutPolicy {
	sc := s.scopeOf(namespace)
	if sc == nil || sc.policies == nil {
		return nil
	}
	obj, ok, _ := sc.policies.GetStore().GetByKey(namespace + "/" + name)
	if !ok {
		return nil
	}
	return obj.(*dcv1.RolloutPolicy)
}

// Deployments returns the ReplicationControllers of namespace.
func (s *store) Deployments(namespace string) []*corev1.ReplicationController {
	var out []*corev1.ReplicationController
	if sc := s.scopeOf(namespace); sc != nil {
		for _, o := range byNamespace(sc.rcs, namespace) {
			out = append(out, o.(*corev1.ReplicationController))
		}
	}
	return out
}

// Pods returns the pods of namespace's deployments, deployer and hook pods
// included.
func (s *store) Pods(namespace string) []*corev1.Pod {
	var out []*corev1.Pod
	if sc := s.scopeOf(namespace); sc != nil {
		seen := map[string]bool{}
		for _, inf := range []cache.SharedIndexInformer{sc.pods, sc.deployerPods} {
			for _, o := range byNamespace(inf, namespace) {
				if p := o.(*corev1.Pod); !seen[p.Name] {
					seen[p.Name] = true
					out = append(out, p)
				}
			}
		}
	}
	return out
}

// Events returns the events of namespace about DeploymentConfigs and RCs.
func (s *store) Events(namespace string) []*corev1.Event {
	var out []*corev1.Event
	if sc := s.scopeOf(namespace); sc != nil {
		for _, inf := range []cache.SharedIndexInformer{sc.events, sc.rcEvents} {
			for _, o := range byNamespace(inf, namespace) {
				out = append(out, o.(*corev1.Event))
			}
		}
	}
	return out
}

// stripManagedFields drops what no page shows and every object of the
// API server carries: its managedFields, often the larger part of it.
func stripManagedFields(obj any) (any, error) {
	if m, err := meta.Accessor(obj); err == nil {
		m.SetManagedFields(nil)
	}
	return obj, nil
}

// byNamespace lists an informer's objects of a namespace; a kind the user
// may not list has no informer and no objects.
func byNamespace(inf cache.SharedIndexInformer, namespace string) []any {
	if inf == nil {
		return nil
	}
	objs, _ := inf.GetIndexer().ByIndex(cache.NamespaceIndex, namespace)
	return objs
}

// hub tells the open pages that a DeploymentConfig or a namespace
// changed. Each subscriber has a one-slot channel: changes that come while
// a page renders collapse into one more render.
type hub struct {
	mu   sync.Mutex
	subs map[*subscription]struct{}
}

// subscription is one open page's interest: a namespace ("" for all), and
// within it one DeploymentConfig, or all ("").
type subscription struct {
	namespace, dc string
	changed       chan struct{}
}

func newHub() *hub {
	return &hub{subs: map[*subscription]struct{}{}}
}

// subscribe registers a page; cancel removes it.
func (h *hub) subscribe(namespace, dc string) (*subscription, func()) {
	s := &subscription{namespace: namespace, dc: dc, changed: make(chan struct{}, 1)}
	h.mu.Lock()
	h.subs[s] = struct{}{}
	h.mu.Unlock()
	return s, func() {
		h.mu.Lock()
		delete(h.subs, s)
		h.mu.Unlock()
	}
}

// notify tells the pages that show namespace, or the DeploymentConfig dc
// in it, that it changed; dc "" (not known) tells every page of the
// namespace.
func (h *hub) notify(namespace, dc string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.subs {
		if s.namespace != "" && s.namespace != namespace {
			continue
		}
		if s.dc != "" && dc != "" && s.dc != dc {
			continue
		}
		select {
		case s.changed <- struct{}{}:
		default:
		}
	}
}

// handler turns an informer's events into notifications.
func (h *hub) handler() cache.ResourceEventHandler {
	changed := func(obj any) {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		if m, err := meta.Accessor(obj); err == nil {
			h.notify(m.GetNamespace(), dcOf(obj))
		}
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    changed,
		UpdateFunc: func(_, obj any) { changed(obj) },
		DeleteFunc: changed,
	}
}

// dcOf names the DeploymentConfig an object of the watches belongs to, or
// "" when it cannot tell (a RolloutPolicy: it may govern any of its
// namespace's).
func dcOf(obj any) string {
	switch o := obj.(type) {
	case *dcv1.DeploymentConfig:
		return o.Name
	case *corev1.ReplicationController:
		return o.Labels[dcv1.DeploymentConfigLabel]
	case *corev1.Pod:
		if dc := o.Labels[dcv1.DeploymentConfigSelectorLabel]; dc != "" {
			return dc
		}
		return dcOfRC(o.Labels[dcv1.DeployerPodForDeploymentLabel])
	case *corev1.Event:
		if o.InvolvedObject.Kind == "DeploymentConfig" {
			return o.InvolvedObject.Name
		}
		return dcOfRC(o.InvolvedObject.Name)
	}
	return ""
}

// dcOfRC is the DeploymentConfig of an RC named <dc>-<version>, or "".
func dcOfRC(rc string) string {
	i := strings.LastIndexByte(rc, '-')
	if i <= 0 {
		return ""
	}
	if _, err := strconv.ParseInt(rc[i+1:], 10, 64); err != nil {
		return ""
	}
	return rc[:i]
}
