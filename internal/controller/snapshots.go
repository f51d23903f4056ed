package controller

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/cachedconfig"
	"github.com/deployconfig/deployconfig/internal/configsnapshot"
)

// Configuration snapshots (docs/config-snapshots.md). The sources are read
// from the API server, by name, only for DeploymentConfigs that set
// spec.configSnapshots; the cache holds the metadata of ConfigMaps and
// Secrets only, to map their changes to the DeploymentConfigs that follow
// them. Nothing here logs or reports a Secret's data: errors name objects.

// EventConfigDataChanged is the event of a rollout that a change of a
// followed ConfigMap or Secret started.
const EventConfigDataChanged = "ConfigDataChanged"

// configDataChangeMessage is the details message of such a rollout.
const configDataChangeMessage = "config data change"

// dcByConfigSource indexes DeploymentConfigs by the ConfigMaps and Secrets
// their snapshots follow, as Kind/name.
const dcByConfigSource = "deployconfig.dc.byConfigSource"

// MissingConfigError says a required ConfigMap or Secret of the template
// does not exist: no deployment can be made of it, as no pod could start.
type MissingConfigError struct {
	// Source is the missing object.
	Source configsnapshot.Ref
}

// Error says what is missing and what to do.
func (e *MissingConfigError) Error() string {
	return fmt.Sprintf("%s %q, which the pod template requires, does not exist: create it (or mark the reference optional) and the rollout goes on",
		e.Source.Kind, e.Source.Name)
}

// ConditionReason is the Progressing condition's reason for the error.
func (e *MissingConfigError) ConditionReason() string { return dcv1.ConfigSnapshotMissingReason }

// snapshot is one source's copy, to create before a deployment.
type snapshot struct {
	entry configsnapshot.Entry
	copy  client.Object
	hash  string
	// resourceVersion is the source's, as read.
	resourceVersion string
}

// currentSnapshots reads each source the DeploymentConfig follows and
// returns the copies its next deployment runs on. An optional source that
// does not exist gets an entry without a copy; a required one is a
// MissingConfigError. With memo, a ConfigMap whose cached resourceVersion
// is the one last read gets that read's entry, without its copy: enough to
// tell whether its data changed, on every sync, without a request.
func (r *DeploymentConfigReconciler) currentSnapshots(ctx context.Context, dc *dcv1.DeploymentConfig, memo bool) ([]snapshot, error) {
	var out []snapshot
	for _, ref := range configsnapshot.Followed(dc) {
		key := types.NamespacedName{Namespace: dc.Namespace, Name: ref.Name}
		if memo && ref.Kind == configsnapshot.KindConfigMap {
			if entry, ok := r.memo.lookup(ctx, r.Client, key); ok {
				out = append(out, snapshot{entry: entry})
				continue
			}
		}
		s, err := r.readSource(ctx, dc.Namespace, ref)
		if err == nil && ref.Kind == configsnapshot.KindConfigMap {
			r.memo.store(key, s.resourceVersion, s.entry)
		}
		if apierrors.IsNotFound(err) {
			if !ref.Optional {
				return nil, &MissingConfigError{Source: ref}
			}
			out = append(out, snapshot{entry: configsnapshot.Entry{Kind: ref.Kind, Name: ref.Name}})
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// readSource reads one source, in the DeploymentConfig's own namespace
// (a pod template cannot reference another), and builds its copy.
func (r *DeploymentConfigReconciler) readSource(ctx context.Context, namespace string, ref configsnapshot.Ref) (snapshot, error) {
	key := types.NamespacedName{Namespace: namespace, Name: ref.Name}
	entry := configsnapshot.Entry{Kind: ref.Kind, Name: ref.Name}
	switch ref.Kind {
	case configsnapshot.KindConfigMap:
		cm := &corev1.ConfigMap{}
		if err := r.APIReader.Get(ctx, key, cm); err != nil {
			return snapshot{}, fmt.Errorf("get configmap %s/%s: %w", namespace, ref.Name, err)
		}
		c := configsnapshot.ConfigMapCopy(cm)
		entry.Copy = c.Name
		return snapshot{entry: entry, copy: c, hash: configsnapshot.ConfigMapHash(cm), resourceVersion: cm.ResourceVersion}, nil
	default:
		secret := &corev1.Secret{}
		if err := r.APIReader.Get(ctx, key, secret); err != nil {
			return snapshot{}, fmt.Errorf("get secret %s/%s: %w", namespace, ref.Name, err)
		}
		nameKey, err := r.keys.get(ctx, r.Client, r.APIReader, namespace)
		if err != nil {
			return snapshot{}, err
		}
		c := configsnapshot.SecretCopy(secret, nameKey)
		entry.Copy = c.Name
		return snapshot{entry: entry, copy: c, hash: configsnapshot.SecretHash(secret, nameKey)}, nil
	}
}

func setOf(snapshots []snapshot) configsnapshot.Set {
	entries := make([]configsnapshot.Entry, 0, len(snapshots))
	for _, s := range snapshots {
		entries = append(entries, s.entry)
	}
	return configsnapshot.NewSet(entries...)
}

// pinnedVersion returns the version a rollback pinned the snapshots to, if
// any (dcv1.ConfigSnapshotPinAnnotation).
func pinnedVersion(dc *dcv1.DeploymentConfig) (int64, bool) {
	v, err := strconv.ParseInt(dc.Annotations[dcv1.ConfigSnapshotPinAnnotation], 10, 64)
	return v, err == nil && v > 0
}

// configDataRollout decides whether a change of the followed data starts a
// rollout: the sources' current snapshots differ from those of the latest
// deployment. It returns nil when nothing changed, when the snapshots are
// pinned, and when a rollout could not start anyway (see triggeredRollout).
func (r *DeploymentConfigReconciler) configDataRollout(ctx context.Context, dc *dcv1.DeploymentConfig, latest *corev1.ReplicationController) (*dcv1.DeploymentDetails, error) {
	if dc.Spec.ConfigSnapshots == nil || latest == nil || !imagesResolved(dc) || hasEmptyImage(dc.Spec.Template) {
		return nil, nil
	}
	if _, pinned := pinnedVersion(dc); pinned {
		return nil, nil
	}
	current, err := r.currentSnapshots(ctx, dc, true)
	if missing := (*MissingConfigError)(nil); errors.As(err, &missing) {
		// Nothing to roll out; a rollout the template starts reports it.
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	recorded, has, err := configsnapshot.Of(latest.Annotations)
	if err != nil {
		log.FromContext(ctx).Info("unreadable config snapshots record; rolling out fresh ones", "rc", latest.Name, "error", err.Error())
	}
	if err := r.keepEqualSecretCopies(ctx, latest.Namespace, recorded, current); err != nil {
		return nil, err
	}
	changed := configsnapshot.Changed(recorded, setOf(current))
	if has && len(changed) == 0 {
		return nil, nil
	}
	if len(changed) == 0 {
		// configSnapshots was just turned on over sources that are all
		// optional and absent: nothing to copy, nothing to roll out.
		return nil, nil
	}
	return &dcv1.DeploymentDetails{
		Message: fmt.Sprintf("%s (%s)", configDataChangeMessage, strings.Join(changed, ", ")),
		Causes: []dcv1.DeploymentCause{{
			Type:       dcv1.DeploymentTriggerOnConfigData,
			ConfigData: &dcv1.DeploymentCauseConfigData{Changed: changed},
		}},
	}, nil
}

// keepEqualSecretCopies gives each current Secret snapshot the recorded
// copy's name when that copy holds the same data under another name: one
// named with an earlier key (a deleted key Secret) or before copies' names
// were keyed. Such a copy is no change of the data, and rolls nothing out.
func (r *DeploymentConfigReconciler) keepEqualSecretCopies(ctx context.Context, namespace string, recorded configsnapshot.Set, current []snapshot) error {
	copies := recorded.Copies()
	for i := range current {
		s := &current[i]
		was := copies[configsnapshot.Ref{Kind: configsnapshot.KindSecret, Name: s.entry.Name}]
		if s.entry.Kind != configsnapshot.KindSecret || s.entry.Copy == "" || was == "" || was == s.entry.Copy {
			continue
		}
		existing, hash, err := r.readCopy(ctx, configsnapshot.KindSecret, types.NamespacedName{Namespace: namespace, Name: was})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return err
		}
		if configsnapshot.IsCopyOf(existing, s.entry.Name) && hash == s.hash {
			s.entry.Copy = was
		}
	}
	return nil
}

// snapshotConfig gives a new deployment its snapshots: it creates the
// copies (or finds them, when equal data was copied before), points the
// RC's pod template at them and records them on the RC. A pinned
// DeploymentConfig reuses the snapshots of the pinned version.
func (r *DeploymentConfigReconciler) snapshotConfig(ctx context.Context, dc *dcv1.DeploymentConfig, rc *corev1.ReplicationController) error {
	if dc.Spec.ConfigSnapshots == nil {
		return nil
	}
	set, err := r.snapshotsFor(ctx, dc)
	if err != nil {
		return err
	}
	value, err := set.Encode()
	if err != nil {
		return err
	}
	configsnapshot.Rewrite(&rc.Spec.Template.Spec, set)
	rc.Annotations[dcv1.ConfigSnapshotsAnnotation] = value
	return nil
}

// snapshotsFor returns the snapshots of the DeploymentConfig's next
// deployment, with their copies in place.
func (r *DeploymentConfigReconciler) snapshotsFor(ctx context.Context, dc *dcv1.DeploymentConfig) (configsnapshot.Set, error) {
	if v, pinned := pinnedVersion(dc); pinned {
		return r.pinnedSnapshots(ctx, dc, v)
	}
	current, err := r.currentSnapshots(ctx, dc, false)
	if err != nil {
		return nil, err
	}
	for _, s := range current {
		if s.copy == nil {
			continue
		}
		// Owned by the DeploymentConfig until its deployment takes it over
		// (ownSnapshots): should the deployment never be created, the copy
		// goes with the DeploymentConfig rather than stay forever.
		s.copy.SetOwnerReferences([]metav1.OwnerReference{{
			APIVersion: dcv1.GroupVersion.String(), Kind: "DeploymentConfig", Name: dc.Name, UID: dc.UID,
		}})
		if err := r.createCopy(ctx, s); err != nil {
			return nil, err
		}
	}
	return setOf(current), nil
}

// pinnedSnapshots returns the snapshots of the pinned version, whose copies
// that version's RC keeps. The RC is read from the API server: an old
// version is settled, out of the cache.
func (r *DeploymentConfigReconciler) pinnedSnapshots(ctx context.Context, dc *dcv1.DeploymentConfig, version int64) (configsnapshot.Set, error) {
	rc := &corev1.ReplicationController{}
	name := fmt.Sprintf("%s-%d", dc.Name, version)
	err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: dc.Namespace, Name: name}, rc)
	if apierrors.IsNotFound(err) {
		return nil, &PinUnavailableError{DC: dc.Name, Version: version, Why: fmt.Sprintf("its replication controller %s no longer exists", name)}
	}
	if err != nil {
		return nil, fmt.Errorf("read the snapshots of pinned version %d (%s): %w", version, dc.Namespace+"/"+name, err)
	}
	set, has, err := configsnapshot.Of(rc.Annotations)
	if err != nil {
		return nil, &PinUnavailableError{DC: dc.Name, Version: version, Why: fmt.Sprintf("its record of snapshots is unreadable (%v)", err)}
	}
	if !has {
		return nil, &PinUnavailableError{DC: dc.Name, Version: version, Why: "it has no config snapshots"}
	}
	return set, nil
}

// PinUnavailableError says the version a rollback pinned the snapshots to
// cannot give its snapshots any more. Retrying cannot help: only removing
// the pin (or pinning a version that has them) lets the rollout start.
type PinUnavailableError struct {
	// DC is the DeploymentConfig's name.
	DC string
	// Version is the pinned version.
	Version int64
	// Why says what is wrong with it.
	Why string
}

// Error says what is wrong and how to unpin.
func (e *PinUnavailableError) Error() string {
	return fmt.Sprintf("the config snapshots are pinned to version %d, but %s: follow the current data again with 'kubectl annotate dc/%s %s-'",
		e.Version, e.Why, e.DC, dcv1.ConfigSnapshotPinAnnotation)
}

// ConditionReason is the Progressing condition's reason for the error.
func (e *PinUnavailableError) ConditionReason() string {
	return dcv1.ConfigSnapshotPinUnavailableReason
}

// createCopy creates a snapshot copy. An object of its name that exists is
// the same copy (names are content digests) when it copies the same source
// with the same data; anything else is refused, never served.
func (r *DeploymentConfigReconciler) createCopy(ctx context.Context, s snapshot) error {
	err := r.Client.Create(ctx, s.copy)
	if err == nil || !apierrors.IsAlreadyExists(err) {
		if err != nil {
			return fmt.Errorf("create snapshot %s %s/%s of %q: %w", s.entry.Kind, s.copy.GetNamespace(), s.copy.GetName(), s.entry.Name, err)
		}
		return nil
	}
	key := client.ObjectKeyFromObject(s.copy)
	existing, existingHash, err := r.readCopy(ctx, s.entry.Kind, key)
	if err != nil {
		return err
	}
	if !configsnapshot.IsCopyOf(existing, s.entry.Name) || existingHash != s.hash {
		return fmt.Errorf("%s %s exists and is not the snapshot of %q's current data: rename or delete it", s.entry.Kind, key, s.entry.Name)
	}
	return nil
}

// readCopy reads an existing copy and digests its content.
func (r *DeploymentConfigReconciler) readCopy(ctx context.Context, kind string, key types.NamespacedName) (client.Object, string, error) {
	if kind == configsnapshot.KindConfigMap {
		cm := &corev1.ConfigMap{}
		if err := r.APIReader.Get(ctx, key, cm); err != nil {
			return nil, "", fmt.Errorf("get snapshot configmap %s: %w", key, err)
		}
		return cm, configsnapshot.ConfigMapHash(cm), nil
	}
	secret := &corev1.Secret{}
	if err := r.APIReader.Get(ctx, key, secret); err != nil {
		return nil, "", fmt.Errorf("get snapshot secret %s: %w", key, err)
	}
	nameKey, err := r.keys.get(ctx, r.Client, r.APIReader, key.Namespace)
	if err != nil {
		return nil, "", err
	}
	return secret, configsnapshot.SecretHash(secret, nameKey), nil
}

// ownSnapshots makes the deployment an owner of each of its copies, in
// place of the DeploymentConfig, so that garbage collection removes a copy
// once no deployment uses it, and marks the deployment done. The owner reference goes in with a strategic merge
// patch, keyed by UID: deployments of other DeploymentConfigs that share the
// copy add theirs at the same time without conflict.
func (r *DeploymentConfigReconciler) ownSnapshots(ctx context.Context, rc *corev1.ReplicationController) error {
	set, has, err := configsnapshot.Of(rc.Annotations)
	if !has || rc.Annotations[dcv1.ConfigSnapshotsOwnedAnnotation] == "true" {
		return nil
	}
	if err != nil {
		return fmt.Errorf("replicationcontroller %s/%s: %w", rc.Namespace, rc.Name, err)
	}
	refs := []any{metav1.OwnerReference{APIVersion: "v1", Kind: "ReplicationController", Name: rc.Name, UID: rc.UID}}
	if dc := metav1.GetControllerOf(rc); dc != nil {
		// The DeploymentConfig's own reference, which a new copy carries
		// until now, goes in the same patch.
		refs = append(refs, map[string]any{"$patch": "delete", "uid": dc.UID})
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"ownerReferences": refs}})
	if err != nil {
		return fmt.Errorf("encode owner reference: %w", err)
	}
	for _, e := range set {
		if e.Copy == "" {
			continue
		}
		var obj client.Object = &corev1.ConfigMap{}
		if e.Kind == configsnapshot.KindSecret {
			obj = &corev1.Secret{}
		}
		obj.SetNamespace(rc.Namespace)
		obj.SetName(e.Copy)
		if err := r.Client.Patch(ctx, obj, client.RawPatch(types.StrategicMergePatchType, patch)); err != nil {
			return fmt.Errorf("own snapshot %s %s/%s by %s: %w", e.Kind, rc.Namespace, e.Copy, rc.Name, err)
		}
	}
	marked := client.MergeFrom(rc.DeepCopy())
	rc.Annotations[dcv1.ConfigSnapshotsOwnedAnnotation] = "true"
	if err := r.Client.Patch(ctx, rc, marked); err != nil {
		return fmt.Errorf("mark the snapshots of %s/%s owned: %w", rc.Namespace, rc.Name, client.IgnoreNotFound(err))
	}
	return nil
}

// recordConfigDataEvent tells, on the DeploymentConfig, which sources'
// change started a rollout.
func (r *DeploymentConfigReconciler) recordConfigDataEvent(dc *dcv1.DeploymentConfig, details *dcv1.DeploymentDetails) {
	for _, c := range details.Causes {
		if c.ConfigData == nil {
			continue
		}
		r.Recorder.Eventf(dc, nil, corev1.EventTypeNormal, EventConfigDataChanged, "Trigger",
			"Config data of %v changed: rolling out version %d", c.ConfigData.Changed, dc.Status.LatestVersion)
	}
}

// indexDCByConfigSource returns the sources a DeploymentConfig's snapshots
// follow, as Kind/name. The cache keeps the template compacted; a copy is
// expanded, only for DeploymentConfigs with snapshots.
func indexDCByConfigSource(o client.Object) []string {
	dc, ok := o.(*dcv1.DeploymentConfig)
	if !ok || dc.Spec.ConfigSnapshots == nil {
		return nil
	}
	expanded := dc.DeepCopy()
	if err := cachedconfig.Expand(expanded); err != nil {
		return nil
	}
	var keys []string
	for _, ref := range configsnapshot.Followed(expanded) {
		keys = append(keys, ref.Kind+"/"+ref.Name)
	}
	return keys
}

// deploymentConfigsOfSource maps an event of a ConfigMap or Secret (its
// metadata) to the DeploymentConfigs that follow it.
func deploymentConfigsOfSource(reader client.Reader, kind string) func(context.Context, client.Object) []reconcile.Request {
	return func(ctx context.Context, o client.Object) []reconcile.Request {
		if _, copied := o.GetLabels()[dcv1.ConfigSnapshotOfLabel]; copied {
			return nil
		}
		list := &dcv1.DeploymentConfigList{}
		err := reader.List(ctx, list, client.InNamespace(o.GetNamespace()), client.MatchingFields{dcByConfigSource: kind + "/" + o.GetName()})
		if err != nil {
			log.FromContext(ctx).Error(err, "list the deploymentconfigs that follow a source", "kind", kind, "name", o.GetName())
			return nil
		}
		reqs := make([]reconcile.Request, 0, len(list.Items))
		for _, dc := range list.Items {
			reqs = append(reqs, reconcile.Request{NamespacedName: types.NamespacedName{Namespace: dc.Namespace, Name: dc.Name}})
		}
		return reqs
	}
}

// sourceStartsRollout is the priority of a source's event: its change may
// start rollouts.
func sourceStartsRollout(context.Context, reconcile.Request) bool { return true }

// DefaultSnapshotSecretInterval is how often, by default, a DeploymentConfig
// whose snapshots follow Secrets reads them: one GET per Secret and
// DeploymentConfig per interval.
const DefaultSnapshotSecretInterval = time.Minute

// afterSync runs after each sync of a DeploymentConfig. It wakes the
// rollouts a freed slot admits (rolloutGate.wakeWaiters), and syncs a
// DeploymentConfig whose snapshots follow Secrets again after
// secretInterval: dc-controller reads Secrets only by name, as a watch
// would need the right to list every Secret of the cluster, which it does
// not hold (docs/security.md), so a Secret's change is seen within one
// interval rather than at once. A pinned DeploymentConfig follows nothing.
type afterSync struct {
	reconcile.Reconciler
	reader         client.Reader
	secretInterval time.Duration
	gate           *rolloutGate
}

// Reconcile syncs, wakes waiting rollouts and, for a DeploymentConfig that
// follows Secrets, asks to be called again within the interval.
func (p afterSync) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	result, err := p.Reconciler.Reconcile(ctx, req)
	p.gate.wakeWaiters(ctx)
	if err != nil || p.secretInterval <= 0 {
		return result, err
	}
	dc := &dcv1.DeploymentConfig{}
	if p.reader.Get(ctx, req.NamespacedName, dc) != nil || !followsSecrets(dc) {
		return result, nil
	}
	if result.RequeueAfter == 0 || result.RequeueAfter > p.secretInterval {
		result.RequeueAfter = p.secretInterval
	}
	return result, nil
}

// followsSecrets reports whether a (cached) DeploymentConfig's snapshots
// follow a Secret.
func followsSecrets(dc *dcv1.DeploymentConfig) bool {
	if dc.DeletionTimestamp != nil {
		return false
	}
	if _, pinned := pinnedVersion(dc); pinned {
		return false
	}
	for _, key := range indexDCByConfigSource(dc) {
		if strings.HasPrefix(key, configsnapshot.KindSecret+"/") {
			return true
		}
	}
	return false
}

// configMapMetadata is the object under which the cache holds the metadata
// of ConfigMaps (the watch's builder.OnlyMetadata).
func configMapMetadata() *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMap"))
	return m
}

// sourceMemo remembers, for each followed ConfigMap, the snapshot entry of
// the content last read and the resourceVersion it was read at. A sync of a
// DeploymentConfig with snapshots compares the followed data with its
// latest deployment's; the memo answers that from the cached metadata, so
// that only a ConfigMap that changed since is read from the API server.
type sourceMemo struct {
	mu   sync.Mutex
	byCM map[types.NamespacedName]memoEntry
}

type memoEntry struct {
	resourceVersion string
	entry           configsnapshot.Entry
}

func newSourceMemo() *sourceMemo {
	return &sourceMemo{byCM: map[types.NamespacedName]memoEntry{}}
}

// lookup returns the entry of a ConfigMap whose cached resourceVersion is
// the memo's. The cache may lag; the ConfigMap's event then syncs again.
func (m *sourceMemo) lookup(ctx context.Context, cache client.Reader, key types.NamespacedName) (configsnapshot.Entry, bool) {
	if m == nil {
		return configsnapshot.Entry{}, false
	}
	meta := configMapMetadata()
	if err := cache.Get(ctx, key, meta); err != nil {
		return configsnapshot.Entry{}, false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.byCM[key]
	if !ok || e.resourceVersion != meta.ResourceVersion {
		return configsnapshot.Entry{}, false
	}
	return e.entry, true
}

// store remembers what a read of a ConfigMap found.
func (m *sourceMemo) store(key types.NamespacedName, resourceVersion string, entry configsnapshot.Entry) {
	if m == nil || resourceVersion == "" {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.byCM[key] = memoEntry{resourceVersion: resourceVersion, entry: entry}
}
