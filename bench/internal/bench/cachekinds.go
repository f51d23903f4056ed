package bench

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/controller"
	"github.com/deployconfig/deployconfig/internal/deployment"
)

// The cache scenario measures, without a cluster, what dc-controller's
// caches keep of each kind of object: it makes the footprint's objects
// (corpus templates, the layout of populateDC) as the API server returns
// them (metadata it sets, managedFields, status written by their
// controllers), decodes each from its JSON as client-go does, pushes it
// through the selectors and transforms of controller.CacheOptions into a
// client-go indexer, and reads the Go heap that stays live.

// ScenarioCache is not among AllScenarios either: it needs no cluster and
// runs before one is made (alone, it makes none).
const ScenarioCache = "cache"

// cacheSample is how many objects measure a kind the footprint's layout
// has none of in the cache (an in-flight rollout's, a BlueGreen Service).
const cacheSample = 2000

// cacheKind is one kind of object dc-controller's caches may hold.
type cacheKind struct {
	name string
	// key is the kind's key in the cache options' ByObject; settled says
	// which of the two caches.
	key     client.Object
	settled bool
	// object is the i-th object of the kind as the API server returns it.
	object func(i int) (client.Object, error)
	// count is how many the footprint's layout has of the kind (before
	// the cache's selectors).
	count func(l cacheLayout) int
	// note says what the object is.
	note string
}

// cacheLayout is the footprint's objects at one size: DCs [0, size), the
// DCs from the i-th size on with revisions[i] revisions each.
type cacheLayout struct {
	dcs, rcs int
}

// CacheKindRow is one kind's line of the cache scenario's table.
type CacheKindRow struct {
	Kind, Note string
	// Objects are those the footprint's layout has; Cached those the
	// cache's selectors let in.
	Objects, Cached int
	// Measured objects went through the cache; BytesPerObject is the live
	// heap they added, per object.
	Measured       int
	BytesPerObject float64
	// Total is BytesPerObject × Cached.
	Total float64
}

// CacheSize is the cache scenario's measurement at one footprint size.
type CacheSize struct {
	DCs, RCs int
	Rows     []CacheKindRow
	// LiveHeapBytes is the live heap the cached objects added in all.
	LiveHeapBytes float64
	Seconds       float64
}

// cacheCorpus makes the footprint's objects without a cluster.
type cacheCorpus struct {
	o         Options
	templates []corev1.PodTemplateSpec
	decoder   kruntime.Decoder
	now       metav1.Time
	// revisions are the footprint's: DCs before sizes[0] have
	// revisions[0] each, and so on.
	sizes, revisions []int
}

func newCacheCorpus(o Options) (*cacheCorpus, error) {
	templates, err := corpusTemplates(o.CompatDir)
	if err != nil {
		return nil, err
	}
	scheme, err := controller.NewScheme()
	if err != nil {
		return nil, err
	}
	c := &cacheCorpus{
		o: o, templates: templates, decoder: serializer.NewCodecFactory(scheme).UniversalDeserializer(),
		now: metav1.NewTime(time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)),
	}
	for i, size := range o.FootprintSizes {
		c.sizes = append(c.sizes, size)
		c.revisions = append(c.revisions, o.RevisionsAt(i))
	}
	return c, nil
}

// revisionsOf is the revision count of the n-th DC.
func (c *cacheCorpus) revisionsOf(n int) int {
	for i, size := range c.sizes {
		if n < size {
			return c.revisions[i]
		}
	}
	return c.revisions[len(c.revisions)-1]
}

// layout counts the footprint's objects at size DCs.
func (c *cacheCorpus) layout(size int) cacheLayout {
	l := cacheLayout{dcs: size}
	have := 0
	for i, s := range c.sizes {
		upTo := min(s, size)
		if upTo > have {
			l.rcs += (upTo - have) * c.revisions[i]
			have = upTo
		}
	}
	if size > have {
		l.rcs += (size - have) * c.revisions[len(c.revisions)-1]
	}
	return l
}

// dc is the n-th DeploymentConfig as it stands once synced after its
// latest rollout: the status dc-controller writes.
func (c *cacheCorpus) dc(n int) *dcv1.DeploymentConfig {
	revs := int64(c.revisionsOf(n))
	dc := newDC(footprintNamespace, objectName(n), c.o.FootprintReplicas)
	withTemplate(dc, c.templates[n%len(c.templates)])
	dc.Spec.Template.Annotations[revisionAnnotation] = strconv.FormatInt(revs, 10)
	c.serverMeta(&dc.ObjectMeta, n, 0)
	replicas := c.o.FootprintReplicas
	rcName := deployment.Name(dc.Name, revs)
	dc.Status = dcv1.DeploymentConfigStatus{
		LatestVersion: revs, ObservedGeneration: dc.Generation,
		Replicas: replicas, UpdatedReplicas: replicas, AvailableReplicas: replicas, ReadyReplicas: replicas,
		Selector: "app=" + dc.Name,
		Details:  &dcv1.DeploymentDetails{Message: "config change", Causes: []dcv1.DeploymentCause{{Type: dcv1.DeploymentTriggerOnConfigChange}}},
		Conditions: []dcv1.DeploymentCondition{
			{Type: dcv1.DeploymentAvailable, Status: corev1.ConditionTrue, Reason: dcv1.MinimumReplicasAvailableReason, Message: "Deployment config has minimum availability.", LastTransitionTime: c.now, LastUpdateTime: c.now},
			{Type: dcv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "NewReplicationControllerAvailable", Message: fmt.Sprintf("replication controller %q successfully rolled out", rcName), LastTransitionTime: c.now, LastUpdateTime: c.now},
			{Type: dcv1.DeploymentReady, Status: corev1.ConditionTrue, Reason: "RolloutComplete", Message: fmt.Sprintf("Rollout #%d is complete", revs), LastTransitionTime: c.now, LastUpdateTime: c.now},
			{Type: dcv1.DeploymentReconciling, Status: corev1.ConditionFalse, Reason: "RolloutComplete", Message: fmt.Sprintf("Rollout #%d is complete", revs), LastTransitionTime: c.now, LastUpdateTime: c.now},
			{Type: dcv1.DeploymentStalled, Status: corev1.ConditionFalse, Reason: "RolloutComplete", Message: fmt.Sprintf("Rollout #%d is complete", revs), LastTransitionTime: c.now, LastUpdateTime: c.now},
		},
	}
	dc.SetGroupVersionKind(dcv1.GroupVersion.WithKind("DeploymentConfig"))
	return dc
}

// rc is version v of the n-th DC's deployments, as populateRevision
// makes it and its RC manager reports on it: Complete, the latest at the
// DC's replicas, the older ones settled at 0.
func (c *cacheCorpus) rc(n int, v int64) (*corev1.ReplicationController, error) {
	dc := c.dc(n)
	latest := v == dc.Status.LatestVersion
	at := dc.DeepCopy()
	at.Status = dcv1.DeploymentConfigStatus{LatestVersion: v}
	at.Spec.Template.Annotations[revisionAnnotation] = strconv.FormatInt(v, 10)
	rc, err := deployment.New(at)
	if err != nil {
		return nil, err
	}
	rc.Annotations[dcv1.DeploymentPhaseAnnotation] = string(dcv1.DeploymentPhaseComplete)
	c.serverMeta(&rc.ObjectMeta, n, int(v))
	rc.Status.ObservedGeneration = rc.Generation
	if latest {
		replicas := dc.Spec.Replicas
		rc.Spec.Replicas = &replicas
		rc.Annotations[dcv1.DeploymentReplicasAnnotation] = strconv.Itoa(int(replicas))
		rc.Status.Replicas, rc.Status.FullyLabeledReplicas = replicas, replicas
		rc.Status.ReadyReplicas, rc.Status.AvailableReplicas = replicas, replicas
	} else {
		rc.Labels[dcv1.DeploymentSettledLabel] = "true"
	}
	rc.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ReplicationController"))
	return rc, nil
}

// deployerPod is the deployer pod of version v of the n-th DC, as its
// kubelet reports it in phase.
func (c *cacheCorpus) deployerPod(n int, v int64, phase corev1.PodPhase) (*corev1.Pod, error) {
	rc, err := c.rc(n, v)
	if err != nil {
		return nil, err
	}
	pod := deployerPod(rc, "kwok-node-0")
	c.serverMeta(&pod.ObjectMeta, n, int(v)+1000)
	// What the API server's defaults and admission add to a pod.
	pod.Spec.DNSPolicy, pod.Spec.SchedulerName = corev1.DNSClusterFirst, corev1.DefaultSchedulerName
	pod.Spec.TerminationGracePeriodSeconds, pod.Spec.EnableServiceLinks = new(int64(30)), new(true)
	pod.Spec.SecurityContext, pod.Spec.Priority = &corev1.PodSecurityContext{}, new(int32(0))
	pod.Spec.PreemptionPolicy = new(corev1.PreemptLowerPriority)
	pod.Spec.Tolerations = []corev1.Toleration{
		{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: new(int64(300))},
		{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: new(int64(300))},
	}
	for i := range pod.Spec.Containers {
		ct := &pod.Spec.Containers[i]
		ct.TerminationMessagePath, ct.TerminationMessagePolicy = corev1.TerminationMessagePathDefault, corev1.TerminationMessageReadFile
		ct.ImagePullPolicy = corev1.PullIfNotPresent
	}
	state := corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: c.now}}
	if phase == corev1.PodSucceeded {
		state = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed", StartedAt: c.now, FinishedAt: c.now, ContainerID: "kwok://" + string(pod.UID)}}
	}
	pod.Status = corev1.PodStatus{
		Phase: phase, HostIP: "10.0.0.1", PodIP: fmt.Sprintf("10.%d.%d.%d", n>>16&255, n>>8&255, n&255), StartTime: &c.now, QOSClass: corev1.PodQOSBestEffort,
		HostIPs: []corev1.HostIP{{IP: "10.0.0.1"}}, PodIPs: []corev1.PodIP{{IP: fmt.Sprintf("10.%d.%d.%d", n>>16&255, n>>8&255, n&255)}},
		ContainerStatuses: []corev1.ContainerStatus{{Name: "deployment", Image: deployerImage, ImageID: "docker-pullable://" + deployerImage, Ready: phase == corev1.PodRunning, State: state}},
	}
	for _, t := range []corev1.PodConditionType{corev1.PodReadyToStartContainers, corev1.PodInitialized, corev1.PodReady, corev1.ContainersReady, corev1.PodScheduled} {
		pod.Status.Conditions = append(pod.Status.Conditions, corev1.PodCondition{Type: t, Status: corev1.ConditionTrue, LastTransitionTime: c.now})
	}
	pod.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Pod"))
	return pod, nil
}

// serverMeta sets what the API server sets on an object it stores.
func (c *cacheCorpus) serverMeta(m *metav1.ObjectMeta, n, sub int) {
	m.UID = types.UID(fmt.Sprintf("%08x-%04x-4%03x-8%03x-%012x", n, sub, n%4096, sub%4096, n*7919+sub))
	m.ResourceVersion = strconv.Itoa(1_000_000 + 16*n + sub)
	m.Generation = 1
	m.CreationTimestamp = c.now
}

// apiObject gives obj the managedFields its writers leave (spec and
// metadata by creator, status by statusWriter), then decodes it from its
// JSON as a client does: every string its own copy.
func (c *cacheCorpus) apiObject(obj client.Object, creator, statusWriter string) (client.Object, error) {
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("encoding %T: %w", obj, err)
	}
	var whole map[string]any
	if err := json.Unmarshal(data, &whole); err != nil {
		return nil, err
	}
	meta, _ := whole["metadata"].(map[string]any)
	owned := map[string]any{}
	for _, k := range []string{"labels", "annotations", "ownerReferences"} {
		if v, ok := meta[k]; ok {
			owned[k] = v
		}
	}
	mainFields := map[string]any{"metadata": owned}
	for k, v := range whole {
		if k != "metadata" && k != "status" && k != "apiVersion" && k != "kind" {
			mainFields[k] = v
		}
	}
	gv := obj.GetObjectKind().GroupVersionKind().GroupVersion().String()
	entry := func(manager, subresource string, fieldsOf map[string]any) (metav1.ManagedFieldsEntry, error) {
		raw, err := json.Marshal(fieldSet(fieldsOf))
		if err != nil {
			return metav1.ManagedFieldsEntry{}, err
		}
		return metav1.ManagedFieldsEntry{Manager: manager, Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: gv,
			Time: &c.now, FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: raw}, Subresource: subresource}, nil
	}
	e, err := entry(creator, "", mainFields)
	if err != nil {
		return nil, err
	}
	managed := []metav1.ManagedFieldsEntry{e}
	if status, ok := whole["status"].(map[string]any); ok && len(status) > 0 {
		e, err := entry(statusWriter, "status", map[string]any{"status": status})
		if err != nil {
			return nil, err
		}
		managed = append(managed, e)
	}
	obj.SetManagedFields(managed)
	if data, err = json.Marshal(obj); err != nil {
		return nil, err
	}
	if _, ok := obj.(*metav1.PartialObjectMetadata); ok {
		out := &metav1.PartialObjectMetadata{}
		if err := json.Unmarshal(data, out); err != nil {
			return nil, fmt.Errorf("decoding metadata: %w", err)
		}
		return out, nil
	}
	decoded, _, err := c.decoder.Decode(data, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("decoding %T: %w", obj, err)
	}
	return decoded.(client.Object), nil
}

// fieldSet is the FieldsV1 form of a JSON value: each field "f:<name>",
// each list item by its name ("k:{...}") or its place, as structured merge
// diff writes them.
func fieldSet(v any) map[string]any {
	out := map[string]any{}
	switch t := v.(type) {
	case map[string]any:
		for k, val := range t {
			out["f:"+k] = fieldSet(val)
		}
	case []any:
		for i, item := range t {
			key := fmt.Sprintf("i:%d", i)
			if m, ok := item.(map[string]any); ok {
				for _, id := range []string{"name", "type", "key", "containerPort", "mountPath"} {
					if name, ok := m[id]; ok {
						key = fmt.Sprintf(`k:{%q:%v}`, id, strconv.Quote(fmt.Sprint(name)))
						break
					}
				}
				sub := fieldSet(item)
				sub["."] = map[string]any{}
				out[key] = sub
				continue
			}
			out[fmt.Sprintf("v:%q", fmt.Sprint(item))] = map[string]any{}
		}
	}
	return out
}

// cacheKinds lists the kinds the caches may hold, each as the footprint
// has it, and those of rollouts in flight, which the footprint's settled
// layout has none of.
func (c *cacheCorpus) cacheKinds() []cacheKind {
	latest := func(n int) int64 { return int64(c.revisionsOf(n)) }
	rcOf := func(n int, v int64, edit func(*corev1.ReplicationController)) (client.Object, error) {
		rc, err := c.rc(n, v)
		if err != nil {
			return nil, err
		}
		if edit != nil {
			edit(rc)
		}
		return c.apiObject(rc, "dc-controller", "kube-controller-manager")
	}
	running := func(rc *corev1.ReplicationController) {
		rc.Annotations[dcv1.DeploymentPhaseAnnotation] = string(dcv1.DeploymentPhaseRunning)
		rc.Annotations[dcv1.DeployerPodAnnotation] = deployment.DeployerPodName(rc.Name)
	}
	withLog := func(rc *corev1.ReplicationController) {
		running(rc)
		for k, v := range deployment.LogPatch(logText(rc.Name, c.o.LogCacheLogBytes)) {
			rc.Annotations[k] = *v
		}
	}
	none := func(cacheLayout) int { return 0 }
	return []cacheKind{
		{name: "DeploymentConfig", key: &dcv1.DeploymentConfig{}, count: func(l cacheLayout) int { return l.dcs },
			note: "synced after its latest rollout, corpus template, five conditions",
			object: func(n int) (client.Object, error) {
				return c.apiObject(c.dc(n), "dc-bench", "dc-controller")
			}},
		{name: "RC, latest (Complete)", key: &corev1.ReplicationController{}, count: func(l cacheLayout) int { return l.dcs },
			note:   "the DC's latest deployment at its replicas",
			object: func(n int) (client.Object, error) { return rcOf(n, latest(n), nil) }},
		{name: "RC, settled (main cache)", key: &corev1.ReplicationController{}, count: func(l cacheLayout) int { return l.rcs - l.dcs },
			note:   "an older deployment, labelled settled: left out by the label selector (bytes/object: were it cached)",
			object: func(n int) (client.Object, error) { return rcOf(n, 1, nil) }},
		{name: "RC, settled, hand-scaled (settled cache)", key: &corev1.ReplicationController{}, settled: true, count: none,
			note: "a settled deployment whose status counts pods (a hand edit); the footprint's settled RCs count none, which the field selector leaves out",
			object: func(n int) (client.Object, error) {
				return rcOf(n, 1, func(rc *corev1.ReplicationController) { rc.Status.Replicas = 1 })
			}},
		{name: "RC, rollout in flight (pod mode)", key: &corev1.ReplicationController{}, count: none,
			note:   "Running, its deployer pod named: one per rollout in flight",
			object: func(n int) (client.Object, error) { return rcOf(n, latest(n), running) }},
		{name: "RC, rollout in flight (controller mode)", key: &corev1.ReplicationController{}, count: none,
			note:   fmt.Sprintf("Running, with a %d-byte in-controller log: one per rollout in flight", c.o.LogCacheLogBytes),
			object: func(n int) (client.Object, error) { return rcOf(n, latest(n), withLog) }},
		{name: "deployer pod, Succeeded", key: &corev1.Pod{}, count: func(l cacheLayout) int { return l.rcs },
			note: "every deployment keeps its finished deployer pod: left out by the field selector (bytes/object: were it cached)",
			object: func(n int) (client.Object, error) {
				pod, err := c.deployerPod(n, latest(n), corev1.PodSucceeded)
				if err != nil {
					return nil, err
				}
				return c.apiObject(pod, "dc-controller", "kubelet")
			}},
		{name: "deployer pod, Running (pod mode)", key: &corev1.Pod{}, count: none,
			note: "one per rollout in flight in pod mode",
			object: func(n int) (client.Object, error) {
				pod, err := c.deployerPod(n, latest(n), corev1.PodRunning)
				if err != nil {
					return nil, err
				}
				return c.apiObject(pod, "dc-controller", "kubelet")
			}},
		{name: "Service (BlueGreen)", key: &corev1.Service{}, count: none,
			note:   "a Service a BlueGreen DC's sync labelled; the footprint's DCs are Rolling",
			object: func(n int) (client.Object, error) { return c.apiObject(c.service(n), "dc-controller", "") }},
		{name: "ConfigMap (metadata)", key: configMapKey(), count: func(cacheLayout) int { return len(c.configMaps()) },
			note: "a ConfigMap the corpus templates name, as metadata",
			object: func(n int) (client.Object, error) {
				names := c.configMaps()
				m := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: footprintNamespace, Name: fmt.Sprintf("%s-%d", names[n%len(names)], n/len(names))}}
				m.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMap"))
				c.serverMeta(&m.ObjectMeta, n, 0)
				m.Generation = 0
				return c.apiObject(m, "dc-bench", "")
			}},
	}
}

// configMapKey is the cache options' key of ConfigMap metadata.
func configMapKey() client.Object {
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMap"))
	return m
}

// configMaps are the ConfigMaps the corpus templates name (ensureReferenced
// makes them in the footprint's namespace).
func (c *cacheCorpus) configMaps() []string {
	var names []string
	for _, t := range c.templates {
		cms, _, _ := referenced(t.Spec)
		for _, name := range cms {
			if !slices.Contains(names, name) {
				names = append(names, name)
			}
		}
	}
	if len(names) == 0 {
		names = []string{"config"}
	}
	return names
}

// service is the active Service of a BlueGreen DC.
func (c *cacheCorpus) service(n int) *corev1.Service {
	name := objectName(n)
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: footprintNamespace, Name: name + "-active", Labels: map[string]string{dcv1.ServiceOfLabel: name}},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app": name, dcv1.DeploymentConfigLabel: name}, Type: corev1.ServiceTypeClusterIP,
			Ports:      []corev1.ServicePort{{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP}},
			ClusterIP:  fmt.Sprintf("10.96.%d.%d", n>>8&255, n&255),
			ClusterIPs: []string{fmt.Sprintf("10.96.%d.%d", n>>8&255, n&255)}, IPFamilies: []corev1.IPFamily{corev1.IPv4Protocol},
			SessionAffinity: corev1.ServiceAffinityNone,
		},
	}
	c.serverMeta(&svc.ObjectMeta, n, 2000)
	svc.Generation = 0
	svc.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Service"))
	return svc
}

// byObject finds the options of key's kind (its type, and for metadata its
// kind): ByObject's keys are pointers.
func byObject(opts cache.Options, key client.Object) (cache.ByObject, bool) {
	for k, by := range opts.ByObject {
		if reflect.TypeOf(k) != reflect.TypeOf(key) {
			continue
		}
		if m, ok := k.(*metav1.PartialObjectMetadata); ok && m.Kind != key.(*metav1.PartialObjectMetadata).Kind {
			continue
		}
		return by, true
	}
	return cache.ByObject{}, false
}

// admits reports whether a cache's selectors let obj in.
func admits(by cache.ByObject, obj client.Object) bool {
	if by.Label != nil && !by.Label.Matches(labels.Set(obj.GetLabels())) {
		return false
	}
	if by.Field == nil {
		return true
	}
	set := fields.Set{"metadata.name": obj.GetName(), "metadata.namespace": obj.GetNamespace()}
	switch o := obj.(type) {
	case *corev1.Pod:
		set["status.phase"] = string(o.Status.Phase)
	case *corev1.ReplicationController:
		set["status.replicas"] = strconv.Itoa(int(o.Status.Replicas))
	}
	return by.Field.Matches(set)
}

// liveHeap is the heap in use after a full collection.
func liveHeap() float64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return float64(ms.HeapAlloc)
}

// measureCache measures every kind at size DCs. The stores stay alive until
// the end, so that the total is what all the kinds take together (strings
// interned by one kind are counted with the first that has them).
func (c *cacheCorpus) measureCache(size int) (CacheSize, error) {
	start := time.Now()
	l := c.layout(size)
	mainOpts, settledOpts := controller.CacheOptions(nil, nil)
	out := CacheSize{DCs: l.dcs, RCs: l.rcs}
	var stores []toolscache.Indexer
	for _, k := range c.cacheKinds() {
		opts := mainOpts
		if k.settled {
			opts = settledOpts
		}
		by, ok := byObject(opts, k.key)
		if !ok {
			return out, fmt.Errorf("the cache options have no entry for %s", k.name)
		}
		transform := by.Transform
		if transform == nil {
			transform = opts.DefaultTransform
		}
		first, err := k.object(0)
		if err != nil {
			return out, err
		}
		row := CacheKindRow{Kind: k.name, Note: k.note, Objects: k.count(l)}
		if admits(by, first) {
			row.Cached = row.Objects
		}
		// Too few objects measure the heap's noise: a kind with fewer
		// cached than the sample is measured on the sample.
		row.Measured = max(row.Cached, min(cacheSample, size))
		before := liveHeap()
		store := toolscache.NewIndexer(toolscache.MetaNamespaceKeyFunc, toolscache.Indexers{toolscache.NamespaceIndex: toolscache.MetaNamespaceIndexFunc})
		for i := range row.Measured {
			obj, err := k.object(i)
			if err != nil {
				return out, err
			}
			if transform != nil {
				t, err := transform(obj)
				if err != nil {
					return out, fmt.Errorf("transforming %s %s: %w", k.name, obj.GetName(), err)
				}
				obj = t.(client.Object)
			}
			if err := store.Add(obj); err != nil {
				return out, err
			}
		}
		row.BytesPerObject = (liveHeap() - before) / float64(row.Measured)
		row.Total = row.BytesPerObject * float64(row.Cached)
		if row.Cached > 0 {
			stores = append(stores, store)
		} else {
			// A sample: what it took is no part of the footprint's cache.
			store = nil
		}
		out.LiveHeapBytes += row.Total
		out.Rows = append(out.Rows, row)
		fmt.Fprintf(c.o.Log, "  %-42s %8d cached, %7.0f B each (%d measured)\n", k.name, row.Cached, row.BytesPerObject, row.Measured)
	}
	runtime.KeepAlive(stores)
	out.Seconds = time.Since(start).Seconds()
	return out, nil
}

// cacheScenario runs the cache scenario at every footprint size and writes
// its report, <OutDir>/<date>[-label]-cache-per-kind.md.
func cacheScenario(o Options) (string, error) {
	c, err := newCacheCorpus(o)
	if err != nil {
		return "", err
	}
	var sizes []CacheSize
	for _, size := range o.FootprintSizes {
		fmt.Fprintf(o.Log, "Cache per kind: %d DCs...\n", size)
		s, err := c.measureCache(size)
		if err != nil {
			return "", err
		}
		sizes = append(sizes, s)
	}
	name := time.Now().UTC().Format("2006-01-02")
	if o.Label != "" {
		name += "-" + o.Label
	}
	path := filepath.Join(o.OutDir, name+"-cache-per-kind.md")
	if err := os.WriteFile(path, []byte(cacheMarkdown(o, len(c.templates), sizes)), 0o644); err != nil {
		return "", fmt.Errorf("writing the cache scenario's report: %w", err)
	}
	return path, nil
}

// cacheMarkdown is the cache scenario's report.
func cacheMarkdown(o Options, templates int, sizes []CacheSize) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# What dc-controller's caches hold, per kind\n\n")
	fmt.Fprintf(&b, "`dc-bench --scenarios %s --footprint-sizes %s --footprint-revisions %s` (%s, Go %s, %s/%s).\n\n",
		ScenarioCache, joinSizes(o.FootprintSizes), joinSizes(o.FootprintRevisions), time.Now().UTC().Format(time.RFC3339), runtime.Version(), runtime.GOOS, runtime.GOARCH)
	b.WriteString("No cluster: each object is made as the footprint scenario makes it (" + strconv.Itoa(templates) + " corpus templates, " +
		"the layout of the footprint's DCs), with what the API server adds (uid, resourceVersion, generation, creationTimestamp, " +
		"managedFields of its writers: spec and metadata by its creator, status by its controller), encoded to JSON and decoded " +
		"as client-go decodes a watch event, each on its own. It then meets the label and field selectors of " +
		"`controller.CacheOptions` (the manager's cache, or the settled RCs' cache) and, if they let it in, its transform, and " +
		"goes into a client-go indexer with the namespace index, as in an informer. *bytes/object* is the Go heap still live " +
		"after a full collection, per object, with the indexer's entry; a kind the layout has none of in the cache is measured " +
		"on a sample of " + strconv.Itoa(cacheSample) + ". Not counted: controller-runtime's field indexes (four, a few tens of bytes per indexed object), " +
		"the informers' watch and the list's transient peak while a cache fills, and the Go runtime's own headroom (GOGC), " +
		"which the footprint scenario's RSS has.\n\n")
	for _, s := range sizes {
		fmt.Fprintf(&b, "## %d DCs (%d RCs, %d deployer pods)\n\n", s.DCs, s.RCs, s.RCs)
		b.WriteString("| kind | objects | cached | bytes/object | total | what |\n| --- | ---: | ---: | ---: | ---: | --- |\n")
		for _, r := range s.Rows {
			fmt.Fprintf(&b, "| %s | %d | %d | %.0f | %s | %s |\n", r.Kind, r.Objects, r.Cached, r.BytesPerObject, mb(r.Total), r.Note)
		}
		fmt.Fprintf(&b, "| **all cached** | | | | **%s** | measured in %.0f s |\n\n", mb(s.LiveHeapBytes), s.Seconds)
	}
	return b.String()
}

func mb(bytes float64) string { return fmt.Sprintf("%.1f MB", bytes/1e6) }

func joinSizes(v []int) string {
	parts := make([]string, len(v))
	for i, n := range v {
		parts[i] = strconv.Itoa(n)
	}
	return strings.Join(parts, ",")
}
