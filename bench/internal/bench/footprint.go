package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/bench/internal/bench/audit"
	"github.com/deployconfig/deployconfig/bench/internal/bench/report"
	"github.com/deployconfig/deployconfig/internal/deployment"
	"github.com/deployconfig/deployconfig/internal/dev/playground"
)

// footprintNamespace holds the footprint scenario's DCs.
const footprintNamespace = "bench-footprint"

// footprintRecord is one footprint measurement and its audit window.
type footprintRecord struct {
	report.Footprint
	window audit.Window
}

// footprint measures dc-controller's memory and CPU with each of the
// footprint sizes. The DCs are made directly, as they would be after
// Revisions rollouts each (the DC with its status, an RC per revision that
// carries the encoded DC and is Complete, all but the last labelled
// settled, a deployer pod per RC), since
// rolling out 50,000 revisions would take hours; then a fresh dc-controller
// process starts, syncs all of them and settles, and is measured.
//
// The latest RC of each DC has FootprintReplicas replicas, and its pods
// are made directly too, bound to a fake node that kwok runs them on:
// before their RC, without an owner, so that kube-controller-manager's RC
// manager adopts them (one patch each) rather than making its own (a
// create, a binding and two events each, and the scheduler's CPU, at its
// QPS). dc-controller does not cache application pods; they are there so
// that the cluster holds what it would. Deployer pods are bound to a fake
// node and marked Succeeded, as a finished deployment's deployer pod is.
func (r *runner) footprint(ctx context.Context) error {
	ns := footprintNamespace
	if err := r.e.createNamespace(ctx, ns); err != nil {
		return err
	}
	if err := r.ensureDeployerAccount(ctx, ns); err != nil {
		return err
	}
	templates, err := corpusTemplates(r.o.CompatDir)
	if err != nil {
		return err
	}
	if err := r.ensureReferenced(ctx, ns, templates); err != nil {
		return err
	}
	makers, err := r.e.makers(r.o.FootprintClients)
	if err != nil {
		return err
	}
	have := 0
	rcs := 0
	for i, size := range r.o.FootprintSizes {
		revisions := r.o.RevisionsAt(i)
		fmt.Fprintf(r.o.Log, "Footprint: making DCs %d..%d with %d revisions each (%d corpus templates, %d clients)...\n",
			have, size-1, revisions, len(templates), len(makers))
		start := time.Now()
		var created atomic.Int64
		err := parallel(ctx, size-have, 2*createWorkers, func(ctx context.Context, i int) error {
			n := have + i
			m := makers[n%len(makers)]
			return r.populateDC(ctx, m, ns, objectName(n), templates[n%len(templates)], revisions, n%r.o.Nodes, &created)
		})
		if err != nil {
			return err
		}
		took := time.Since(start).Seconds()
		fmt.Fprintf(r.o.Log, "  made %d objects in %.0f s (%.0f/s)\n", created.Load(), took, float64(created.Load())/took)
		rcs += (size - have) * revisions
		have = size
		for j, mode := range r.o.DCModes {
			rec, err := r.measureController(ctx, size, revisions, rcs, mode)
			if err != nil {
				return err
			}
			rec.Templates, rec.Replicas, rec.Clients, rec.LogBytes = len(templates), r.o.FootprintReplicas, len(makers), r.footprintLogBytes()
			if j == 0 {
				// The objects were made once, for every mode's reading.
				rec.Created, rec.CreateSeconds = int(created.Load()), took
			}
			r.footprints = append(r.footprints, rec)
			fmt.Fprintf(r.o.Log, "  %d DCs, %s mode: peak RSS %s, CPU %.1f s, synced in %.0f s\n", size, mode, report.MB(rec.Usage.PeakRSSBytes), rec.Usage.CPUSeconds, rec.SyncSeconds)
		}
	}
	return nil
}

// footprintLogBytes is the in-controller log each DC's latest RC carries
// in the footprint: when dc-controller is measured in controller mode,
// that mode's rollouts leave their log there (the runner's bound), and
// the pod-mode reading, over the same objects, then shows the log costs
// it nothing. Older RCs are settled, which dc-controller's caches never
// select, so their logs would weigh on etcd and not on the figure.
func (r *runner) footprintLogBytes() int {
	if !slices.Contains(r.o.DCModes, ModeController) {
		return 0
	}
	return r.o.LogCacheLogBytes
}

// ensureReferenced creates, empty, the ConfigMaps, Secrets and service
// accounts the corpus templates name (see referenced).
func (r *runner) ensureReferenced(ctx context.Context, ns string, templates []corev1.PodTemplateSpec) error {
	for _, t := range templates {
		cms, secrets, accounts := referenced(t.Spec)
		var objs []client.Object
		for _, name := range cms {
			objs = append(objs, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}})
		}
		for _, name := range secrets {
			objs = append(objs, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}})
		}
		for _, name := range accounts {
			objs = append(objs, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}})
		}
		for _, o := range objs {
			if err := r.e.client.Create(ctx, o); err != nil && !apierrors.IsAlreadyExists(err) {
				return fmt.Errorf("creating %T %s/%s of the corpus: %w", o, ns, o.GetName(), err)
			}
		}
	}
	return nil
}

// ensureDeployerAccount creates the deployer service account the deployer
// pods name (dc-controller creates it too when it starts).
func (r *runner) ensureDeployerAccount(ctx context.Context, ns string) error {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "deployer"}}
	_, err := r.e.kube.CoreV1().ServiceAccounts(ns).Create(ctx, sa, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating the deployer service account: %w", err)
	}
	return nil
}

// populateDC makes one DC as it stands after revs rollouts,
// with a corpus template, through one maker; created counts the writes.
func (r *runner) populateDC(ctx context.Context, m maker, ns, name string, tmpl corev1.PodTemplateSpec, revs, node int, created *atomic.Int64) error {
	revisions := int64(revs)
	dc := newDC(ns, name, r.o.FootprintReplicas)
	withTemplate(dc, tmpl)
	dc.Spec.Template.Annotations[revisionAnnotation] = strconv.FormatInt(revisions, 10)
	if err := m.client.Create(ctx, dc); err != nil {
		return fmt.Errorf("creating deploymentconfig %s/%s: %w", ns, name, err)
	}
	created.Add(1)
	for v := int64(1); v <= revisions; v++ {
		if err := r.populateRevision(ctx, m, dc, v, revisions, node, created); err != nil {
			return err
		}
	}
	dc.Status.LatestVersion = revisions
	dc.Status.ObservedGeneration = dc.Generation
	dc.Status.Details = &dcv1.DeploymentDetails{Message: "config change"}
	if err := m.client.Status().Update(ctx, dc); err != nil {
		return fmt.Errorf("updating the status of deploymentconfig %s/%s: %w", ns, name, err)
	}
	created.Add(1)
	return nil
}

// populateRevision makes a DC's deployment of version v, Complete, with
// its deployer pod: the latest with the DC's replicas, older ones at 0.
func (r *runner) populateRevision(ctx context.Context, m maker, dc *dcv1.DeploymentConfig, v, revisions int64, node int, created *atomic.Int64) error {
	at := dc.DeepCopy()
	at.Status.LatestVersion = v
	at.Spec.Template.Annotations[revisionAnnotation] = strconv.FormatInt(v, 10)
	rc, err := deployment.New(at)
	if err != nil {
		return err
	}
	rc.Annotations[dcv1.DeploymentPhaseAnnotation] = string(dcv1.DeploymentPhaseComplete)
	if v < revisions {
		// dc-controller labels each older deployment so once the next one
		// is Complete and it is scaled down.
		rc.Labels[dcv1.DeploymentSettledLabel] = "true"
	} else {
		replicas := dc.Spec.Replicas
		rc.Spec.Replicas = &replicas
		rc.Annotations[dcv1.DeploymentReplicasAnnotation] = strconv.Itoa(int(replicas))
		if n := r.footprintLogBytes(); n > 0 {
			for key, value := range deployment.LogPatch(logText(rc.Name, n)) {
				rc.Annotations[key] = *value
			}
		}
		if err := makeAppPods(ctx, m, rc, playground.NodeName(node), created); err != nil {
			return err
		}
	}
	rcs := m.kube.CoreV1().ReplicationControllers(dc.Namespace)
	if rc, err = rcs.Create(ctx, rc, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating replicationcontroller %s/%s: %w", dc.Namespace, deployment.Name(dc.Name, v), err)
	}
	created.Add(1)
	if deployment.Replicas(rc) == 0 {
		// What kube-controller-manager's RC manager would write at 20 QPS
		// (an hour for 50,000 RCs): the status of an RC at 0 replicas.
		// The latest RC's status is its to write, as it makes the pods.
		rc.Status.ObservedGeneration = rc.Generation
		if _, err := rcs.UpdateStatus(ctx, rc, metav1.UpdateOptions{}); err != nil && !apierrors.IsConflict(err) {
			return fmt.Errorf("updating the status of replicationcontroller %s/%s: %w", rc.Namespace, rc.Name, err)
		}
		created.Add(1)
	}
	pods := m.kube.CoreV1().Pods(dc.Namespace)
	pod, err := pods.Create(ctx, deployerPod(rc, playground.NodeName(node)), metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("creating pod %s/%s: %w", dc.Namespace, deployment.DeployerPodName(rc.Name), err)
	}
	// Its deployment is Complete: the pod has succeeded. A patch, since
	// kwok may be writing the new pod's status too; a pod that has finished
	// stays so.
	succeeded := []byte(`{"status":{"phase":"Succeeded"}}`)
	if _, err := pods.Patch(ctx, pod.Name, types.MergePatchType, succeeded, metav1.PatchOptions{}, "status"); err != nil {
		return fmt.Errorf("updating the status of pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	created.Add(2)
	return nil
}

// makeAppPods makes the pods of a deployment that has not been created
// yet, from its template, bound to node and without an owner: its RC
// manager adopts them once the RC exists.
func makeAppPods(ctx context.Context, m maker, rc *corev1.ReplicationController, node string, created *atomic.Int64) error {
	pods := m.kube.CoreV1().Pods(rc.Namespace)
	for i := range deployment.Replicas(rc) {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{
				Namespace:   rc.Namespace,
				Name:        fmt.Sprintf("%s-%d", rc.Name, i),
				Labels:      rc.Spec.Template.Labels,
				Annotations: rc.Spec.Template.Annotations,
			},
			Spec: *rc.Spec.Template.Spec.DeepCopy(),
		}
		pod.Spec.NodeName = node
		if _, err := pods.Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("creating pod %s/%s of the deployment: %w", pod.Namespace, pod.Name, err)
		}
		created.Add(1)
	}
	return nil
}

// deployerPod is a finished deployment's deployer pod as dc-controller's
// cache holds it: labelled for its RC and owned by it.
func deployerPod(rc *corev1.ReplicationController, node string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:       rc.Namespace,
			Name:            deployment.DeployerPodName(rc.Name),
			Labels:          map[string]string{dcv1.DeployerPodForDeploymentLabel: rc.Name},
			Annotations:     map[string]string{dcv1.DeploymentAnnotation: rc.Name},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(rc, corev1.SchemeGroupVersion.WithKind("ReplicationController"))},
		},
		Spec: corev1.PodSpec{
			NodeName:                     node,
			RestartPolicy:                corev1.RestartPolicyNever,
			ServiceAccountName:           "deployer",
			AutomountServiceAccountToken: new(false),
			Containers: []corev1.Container{{
				Name:  "deployment",
				Image: deployerImage,
				Env:   deployment.Env(rc),
			}},
		},
	}
}

// measureController starts a fresh dc-controller in a deployer mode,
// waits until it has synced every DC and settled, and measures it.
// revisions are those of the DCs added last; rcs counts every DC's.
func (r *runner) measureController(ctx context.Context, dcs, revisions, rcs int, mode string) (footprintRecord, error) {
	logPath := filepath.Join(r.e.dir, fmt.Sprintf("dc-controller-footprint-%d-%s.log", dcs, mode))
	c, err := startControllerArgs(ctx, r.e, logPath, r.o.deployerModeArgs(mode)...)
	if err != nil {
		return footprintRecord{}, err
	}
	defer c.stop()
	if err := c.waitIdle(ctx, r.o.PhaseTimeout); err != nil {
		if ctx.Err() != nil {
			return footprintRecord{}, err
		}
		// Measured all the same: the figures then say "at least".
		r.warnings = append(r.warnings, fmt.Sprintf("footprint with %d DCs: %v; measured at that point", dcs, err))
	}
	usage, err := c.usage()
	if err != nil {
		return footprintRecord{}, err
	}
	end := time.Now()
	rec := footprintRecord{
		Footprint: report.Footprint{
			Mode: mode, DCs: dcs, Revisions: revisions, RCs: rcs, DeployerPods: rcs,
			SyncSeconds: end.Sub(c.started).Seconds(), Usage: usage,
		},
		window: audit.Window{Namespace: footprintNamespace, From: c.started, To: end},
	}
	if m, err := c.scrape(ctx); err == nil {
		rec.HeapBytes = uint64(m["go_memstats_heap_inuse_bytes"])
	}
	if r.o.ProfileDir != "" {
		path := filepath.Join(r.o.ProfileDir, fmt.Sprintf("footprint-%d-%s-heap.pprof", dcs, mode))
		if err := os.MkdirAll(r.o.ProfileDir, 0o755); err != nil {
			return rec, fmt.Errorf("making %s: %w", r.o.ProfileDir, err)
		}
		if err := c.saveHeapProfile(ctx, path); err != nil {
			return rec, err
		}
		fmt.Fprintf(r.o.Log, "  heap profile: %s\n", path)
	}
	return rec, nil
}

// reference measures the cluster's raw write throughput: RawCreates RC
// creates (0 replicas, so no pods follow) from RawConcurrency clients with
// no rate limit.
func (r *runner) referenceWrites(ctx context.Context) error {
	ns := "bench-raw"
	if err := r.e.createNamespace(ctx, ns); err != nil {
		return err
	}
	fmt.Fprintf(r.o.Log, "Reference: %d RC creates from %d clients...\n", r.o.RawCreates, r.o.RawConcurrency)
	start := time.Now()
	err := parallel(ctx, r.o.RawCreates, r.o.RawConcurrency, func(ctx context.Context, i int) error {
		rc := rawRC(ns, fmt.Sprintf("raw-%05d", i))
		_, err := r.e.unlimited.CoreV1().ReplicationControllers(ns).Create(ctx, rc, metav1.CreateOptions{})
		return err
	})
	if err != nil {
		return fmt.Errorf("raw RC creates: %w", err)
	}
	secs := time.Since(start).Seconds()
	r.reference = &report.Reference{RCCreates: r.o.RawCreates, Concurrency: r.o.RawConcurrency, Seconds: secs, PerSecond: float64(r.o.RawCreates) / secs}
	fmt.Fprintf(r.o.Log, "  %.0f creates/s\n", r.reference.PerSecond)
	return r.cleanUp(ctx, ns)
}

// rawRC is an RC of the raw write test: the application's template at 0
// replicas.
func rawRC(ns, name string) *corev1.ReplicationController {
	template := podTemplate(name, 1)
	return &corev1.ReplicationController{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: corev1.ReplicationControllerSpec{
			Replicas: new(int32(0)),
			Selector: template.Labels,
			Template: &template,
		},
	}
}
