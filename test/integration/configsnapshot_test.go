package integration

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/configsnapshot"
	"github.com/deployconfig/deployconfig/internal/deployment"
)

// snapshotDC is a DeploymentConfig whose pods read the ConfigMap "app"
// through envFrom and the Secret "creds" through a volume, with snapshots.
func snapshotDC(ns, name string, mutate func(*dcv1.DeploymentConfig)) *dcv1.DeploymentConfig {
	return newDC(ns, name, func(dc *dcv1.DeploymentConfig) {
		dc.Spec.Replicas = 1
		dc.Spec.ConfigSnapshots = &dcv1.ConfigSnapshots{}
		spec := &dc.Spec.Template.Spec
		spec.Containers[0].EnvFrom = []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "app"}}}}
		spec.Volumes = []corev1.Volume{{Name: "creds", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "creds"}}}}
		if mutate != nil {
			mutate(dc)
		}
	})
}

func configMap(ns, name, value string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: map[string]string{"GREETING": value}}
}

func secret(ns, name, value string) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Type: corev1.SecretTypeOpaque, Data: map[string][]byte{"password": []byte(value)}}
}

// setGreeting changes the ConfigMap's data, as a user would.
func setGreeting(t *testing.T, ns, name, value string) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cm := &corev1.ConfigMap{}
		if err := cluster.client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, cm); err != nil {
			return err
		}
		cm.Data["GREETING"] = value
		return cluster.client.Update(context.Background(), cm)
	})
	if err != nil {
		t.Fatalf("update configmap %s: %v", name, err)
	}
}

// envFromName is the ConfigMap a deployment's first container reads.
func envFromName(rc *corev1.ReplicationController) string {
	return rc.Spec.Template.Spec.Containers[0].EnvFrom[0].ConfigMapRef.Name
}

// waitOwned waits until a deployment's copies carry its owner reference,
// and returns the deployment.
func waitOwned(t *testing.T, ns, name string) *corev1.ReplicationController {
	t.Helper()
	return waitRC(t, ns, name, "snapshots owned", func(rc *corev1.ReplicationController) bool {
		return rc.Annotations[dcv1.ConfigSnapshotsOwnedAnnotation] == "true"
	})
}

// ownersOf returns the names of the objects that own an object, with the
// kind of any owner that is not an RC: once a deployment owns a copy, only
// deployments do.
func ownersOf(t *testing.T, obj client.Object) []string {
	t.Helper()
	if err := cluster.client.Get(context.Background(), client.ObjectKeyFromObject(obj), obj); err != nil {
		t.Fatalf("get %T %s: %v", obj, obj.GetName(), err)
	}
	var names []string
	for _, ref := range obj.GetOwnerReferences() {
		name := ref.Name
		if ref.Kind != "ReplicationController" {
			name = ref.Kind + "/" + name
		}
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// TestConfigSnapshotsRollOutDataAndRestoreIt follows one DeploymentConfig
// through the life of its configuration: its deployment runs on immutable
// copies, a change of the ConfigMap rolls out with a ConfigData cause, a
// failed rollout falls back to a deployment that still reads the old copy,
// and a rollback pinned to an old revision runs on that revision's copy
// while later changes do not roll out.
func TestConfigSnapshotsRollOutDataAndRestoreIt(t *testing.T) {
	ns := newNamespace(t)
	mustCreate(t, configMap(ns, "app", "hello"))
	mustCreate(t, secret(ns, "creds", "s3cret"))
	mustCreate(t, snapshotDC(ns, "web", nil))

	first := waitOwned(t, ns, "web-1")
	v1Copy := envFromName(first)
	if !strings.HasPrefix(v1Copy, "app-") {
		t.Fatalf("web-1 reads ConfigMap %q, want a copy of app", v1Copy)
	}
	copyCM := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: v1Copy}}
	if got := ownersOf(t, copyCM); !slices.Equal(got, []string{"web-1"}) {
		t.Fatalf("copy %s owners %v, want [web-1]", v1Copy, got)
	}
	if copyCM.Immutable == nil || !*copyCM.Immutable || copyCM.Data["GREETING"] != "hello" || copyCM.Labels[dcv1.ConfigSnapshotOfLabel] != "app" {
		t.Fatalf("copy %s: immutable %v, data %v, labels %v", v1Copy, copyCM.Immutable, copyCM.Data, copyCM.Labels)
	}
	secretCopy := first.Spec.Template.Spec.Volumes[0].Secret.SecretName
	copySecret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: secretCopy}}
	if got := ownersOf(t, copySecret); !slices.Equal(got, []string{"web-1"}) || copySecret.Type != corev1.SecretTypeOpaque || string(copySecret.Data["password"]) != "s3cret" {
		t.Fatalf("secret copy %s: owners %v, type %s", secretCopy, got, copySecret.Type)
	}
	// The DeploymentConfig keeps the names its author wrote.
	if got := getDC(t, ns, "web").Spec.Template.Spec.Containers[0].EnvFrom[0].ConfigMapRef.Name; got != "app" {
		t.Fatalf("the DeploymentConfig's template now reads %q", got)
	}
	runDeployer(t, ns, "web-1", corev1.PodSucceeded)

	setGreeting(t, ns, "app", "bonjour")
	second := waitOwned(t, ns, "web-2")
	v2Copy := envFromName(second)
	if v2Copy == v1Copy || second.Spec.Template.Spec.Volumes[0].Secret.SecretName != secretCopy {
		t.Fatalf("web-2 reads %s and %s; want a new ConfigMap copy and the same Secret copy %s", v2Copy, second.Spec.Template.Spec.Volumes[0].Secret.SecretName, secretCopy)
	}
	details := getDC(t, ns, "web").Status.Details
	if details == nil || len(details.Causes) != 1 || details.Causes[0].Type != dcv1.DeploymentTriggerOnConfigData ||
		!slices.Equal(details.Causes[0].ConfigData.Changed, []string{"ConfigMap/app"}) {
		t.Fatalf("details of web-2: %+v", details)
	}
	waitEvent(t, ns, "web", "ConfigDataChanged")
	runDeployer(t, ns, "web-2", corev1.PodSucceeded)

	// A failed rollout of new data: the fall-back scales web-2 up again,
	// whose template still reads the copy of "bonjour".
	setGreeting(t, ns, "app", "hola")
	waitOwned(t, ns, "web-3")
	runDeployer(t, ns, "web-3", corev1.PodFailed)
	back := waitRC(t, ns, "web-2", "scaled up by the fall-back", func(rc *corev1.ReplicationController) bool {
		return deployment.Replicas(rc) == 1
	})
	if envFromName(back) != v2Copy {
		t.Fatalf("the fall-back's deployment reads %s, want %s", envFromName(back), v2Copy)
	}

	// A rollback to revision 1, as rollout undo writes it: revision 1's
	// template and the pin to its snapshots.
	updateDC(t, ns, "web", func(dc *dcv1.DeploymentConfig) {
		dc.Annotations = map[string]string{dcv1.ConfigSnapshotPinAnnotation: "1"}
		dc.Spec.Template.Spec.Containers[0].Image = "registry.example.com/web:0"
	})
	fourth := waitOwned(t, ns, "web-4")
	if envFromName(fourth) != v1Copy {
		t.Fatalf("the rollback reads %s, want revision 1's copy %s", envFromName(fourth), v1Copy)
	}
	if got := ownersOf(t, copyCM); !slices.Equal(got, []string{"web-1", "web-4"}) {
		t.Fatalf("copy %s owners %v, want [web-1 web-4]", v1Copy, got)
	}
	runDeployer(t, ns, "web-4", corev1.PodSucceeded)
	// Pinned, a change of the data does not roll out: the next rollout is
	// the template's, and it still runs on revision 1's copy.
	setGreeting(t, ns, "app", "ciao")
	updateDC(t, ns, "web", func(dc *dcv1.DeploymentConfig) {
		dc.Spec.Template.Spec.Containers[0].Image = "registry.example.com/web:00"
	})
	fifth := waitOwned(t, ns, "web-5")
	if envFromName(fifth) != v1Copy {
		t.Fatalf("the pinned rollout reads %s, want revision 1's copy %s", envFromName(fifth), v1Copy)
	}
	if d := getDC(t, ns, "web").Status.Details; d == nil || d.Causes[0].Type != dcv1.DeploymentTriggerOnConfigChange {
		t.Fatalf("web-5's details %+v, want a ConfigChange cause", d)
	}
	runDeployer(t, ns, "web-5", corev1.PodSucceeded)
	// Unpinned, it follows the data again.
	updateDC(t, ns, "web", func(dc *dcv1.DeploymentConfig) { delete(dc.Annotations, dcv1.ConfigSnapshotPinAnnotation) })
	sixth := waitOwned(t, ns, "web-6")
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: envFromName(sixth)}}
	ownersOf(t, cm)
	if cm.Data["GREETING"] != "ciao" {
		t.Fatalf("web-6 reads %v, want ciao", cm.Data)
	}
}

// TestConfigSnapshotsFollowSecretChanges: a Secret is read by name, never
// watched; a change of its data still rolls out, within the controller's
// --snapshot-secret-interval, into a copy of the same type.
func TestConfigSnapshotsFollowSecretChanges(t *testing.T) {
	ns := newNamespace(t)
	mustCreate(t, configMap(ns, "app", "v1"))
	creds := secret(ns, "creds", "one")
	creds.Type = corev1.SecretTypeBasicAuth
	creds.Data = map[string][]byte{corev1.BasicAuthUsernameKey: []byte("u"), corev1.BasicAuthPasswordKey: []byte("one")}
	mustCreate(t, creds)
	mustCreate(t, snapshotDC(ns, "web", nil))
	runDeployer(t, ns, "web-1", corev1.PodSucceeded)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := cluster.client.Get(context.Background(), client.ObjectKeyFromObject(creds), creds); err != nil {
			return err
		}
		creds.Data[corev1.BasicAuthPasswordKey] = []byte("two")
		return cluster.client.Update(context.Background(), creds)
	})
	if err != nil {
		t.Fatalf("update secret: %v", err)
	}
	rc := waitOwned(t, ns, "web-2")
	copied := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: rc.Spec.Template.Spec.Volumes[0].Secret.SecretName}}
	ownersOf(t, copied)
	if copied.Type != corev1.SecretTypeBasicAuth || string(copied.Data[corev1.BasicAuthPasswordKey]) != "two" || copied.Immutable == nil || !*copied.Immutable {
		t.Fatalf("copy %s: type %s, immutable %v", copied.Name, copied.Type, copied.Immutable)
	}
	if d := getDC(t, ns, "web").Status.Details; d == nil || !slices.Equal(d.Causes[0].ConfigData.Changed, []string{"Secret/creds"}) {
		t.Fatalf("details %+v", d)
	}
}

// TestConfigSnapshotsSharedAndPruned: two DeploymentConfigs that read the
// same data share one copy, each of their deployments an owner of it; the
// deployments history cleanup deletes leave the copies only they used
// without an owner that exists, which the garbage collector then deletes
// (envtest runs none; the kwok e2e test watches it happen).
func TestConfigSnapshotsSharedAndPruned(t *testing.T) {
	ns := newNamespace(t)
	mustCreate(t, configMap(ns, "app", "v1"))
	mustCreate(t, secret(ns, "creds", "x"))
	limit := int32(1)
	mustCreate(t, snapshotDC(ns, "a", func(dc *dcv1.DeploymentConfig) { dc.Spec.RevisionHistoryLimit = &limit }))
	mustCreate(t, snapshotDC(ns, "b", nil))
	a1, b1 := waitOwned(t, ns, "a-1"), waitOwned(t, ns, "b-1")
	if envFromName(a1) != envFromName(b1) {
		t.Fatalf("a-1 reads %s, b-1 %s: equal data must share one copy", envFromName(a1), envFromName(b1))
	}
	shared := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: envFromName(a1)}}
	if got := ownersOf(t, shared); !slices.Equal(got, []string{"a-1", "b-1"}) {
		t.Fatalf("shared copy owners %v, want [a-1 b-1]", got)
	}
	runDeployer(t, ns, "a-1", corev1.PodSucceeded)
	for i, value := range []string{"v2", "v3"} {
		setGreeting(t, ns, "app", value)
		runDeployer(t, ns, fmt.Sprintf("a-%d", i+2), corev1.PodSucceeded)
	}
	// revisionHistoryLimit 1 keeps a-2 and a-3: a-1 goes.
	waitGone(t, &corev1.ReplicationController{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "a-1"}})
	// The shared copy is still b-1's; a-1's reference dangles, which the
	// garbage collector ignores while another owner exists.
	if got := ownersOf(t, shared); !slices.Contains(got, "b-1") {
		t.Fatalf("shared copy owners %v lost b-1", got)
	}
}

// TestConfigSnapshotsPinSurvivesCleanup: with revisionHistoryLimit 1, a
// rollback pinned to revision 2 keeps revision 2 (and so its copies) past
// history cleanup, and the next rollout runs on them. A pin whose
// revision is gone anyway (deleted by hand) stalls the DeploymentConfig
// with the command that unpins it, rather than leave it reconciling.
func TestConfigSnapshotsPinSurvivesCleanup(t *testing.T) {
	ns := newNamespace(t)
	mustCreate(t, configMap(ns, "app", "v1"))
	mustCreate(t, secret(ns, "creds", "x"))
	limit := int32(1)
	mustCreate(t, snapshotDC(ns, "pin", func(dc *dcv1.DeploymentConfig) { dc.Spec.RevisionHistoryLimit = &limit }))
	runDeployer(t, ns, "pin-1", corev1.PodSucceeded)
	setGreeting(t, ns, "app", "v2")
	v2Copy := envFromName(waitOwned(t, ns, "pin-2"))
	runDeployer(t, ns, "pin-2", corev1.PodSucceeded)
	setGreeting(t, ns, "app", "v3")
	runDeployer(t, ns, "pin-3", corev1.PodSucceeded)

	kubectlDCOK := func(args ...string) {
		t.Helper()
		if code, stdout, stderr := kubectlDC(testContext(t, time.Minute), ns, args...); code != 0 {
			t.Fatalf("kubectl dc %v: exit %d:\n%s%s", args, code, stdout, stderr)
		}
	}
	kubectlDCOK("rollout", "undo", "pin", "--to-revision", "2")
	if got := getDC(t, ns, "pin").Annotations[dcv1.ConfigSnapshotPinAnnotation]; got != "2" {
		t.Fatalf("rollout undo pinned %q, want 2", got)
	}
	runDeployer(t, ns, "pin-4", corev1.PodSucceeded)
	// Cleanup runs once pin-4 is active: pin-1 goes, pin-2 stays.
	waitGone(t, &corev1.ReplicationController{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pin-1"}})
	if _, err := getRC(context.Background(), ns, "pin-2"); err != nil {
		t.Fatalf("the pinned revision: %v", err)
	}
	// rollout latest: revision 5 runs on revision 2's copy.
	kubectlDCOK("rollout", "latest", "pin")
	if got := envFromName(waitOwned(t, ns, "pin-5")); got != v2Copy {
		t.Fatalf("pin-5 reads %s, want revision 2's copy %s", got, v2Copy)
	}
	runDeployer(t, ns, "pin-5", corev1.PodSucceeded)

	// A pin to a revision that is gone: Stalled, saying how to unpin.
	updateDC(t, ns, "pin", func(dc *dcv1.DeploymentConfig) {
		dc.Annotations[dcv1.ConfigSnapshotPinAnnotation] = "1"
		dc.Spec.Template.Spec.Containers[0].Image = "registry.example.com/web:6"
	})
	waitCondition(t, ns, "pin", dcv1.DeploymentStalled, corev1.ConditionTrue, dcv1.ConfigSnapshotPinUnavailableReason)
	unpin := "kubectl annotate dc/pin " + dcv1.ConfigSnapshotPinAnnotation + "-"
	for _, c := range getDC(t, ns, "pin").Status.Conditions {
		if (c.Type == dcv1.DeploymentStalled || c.Type == dcv1.DeploymentProgressing) && !strings.Contains(c.Message, unpin) {
			t.Errorf("%s says %q, want it to name %q", c.Type, c.Message, unpin)
		}
	}
	updateDC(t, ns, "pin", func(dc *dcv1.DeploymentConfig) { delete(dc.Annotations, dcv1.ConfigSnapshotPinAnnotation) })
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: envFromName(waitOwned(t, ns, "pin-6"))}}
	ownersOf(t, cm)
	if cm.Data["GREETING"] != "v3" {
		t.Fatalf("unpinned, pin-6 reads %v, want the current v3", cm.Data)
	}
}

// TestConfigSnapshotsSecretNamesAreKeyed: a Secret copy's name, which
// anyone who may read RCs sees, is not a digest of the Secret's data that
// a short secret could be guessed from offline, but an HMAC under a key
// of the namespace that dc-controller keeps in a Secret there. Two
// DeploymentConfigs still share one copy.
func TestConfigSnapshotsSecretNamesAreKeyed(t *testing.T) {
	ns := newNamespace(t)
	mustCreate(t, configMap(ns, "app", "v1"))
	creds := secret(ns, "creds", "1234")
	mustCreate(t, creds)
	mustCreate(t, snapshotDC(ns, "a", nil))
	mustCreate(t, snapshotDC(ns, "b", nil))
	a1, b1 := waitOwned(t, ns, "a-1"), waitOwned(t, ns, "b-1")
	name := a1.Spec.Template.Spec.Volumes[0].Secret.SecretName
	if got := b1.Spec.Template.Spec.Volumes[0].Secret.SecretName; got != name {
		t.Fatalf("a-1 reads %s, b-1 %s: equal data must share one copy", name, got)
	}
	content, err := json.Marshal(struct {
		Type corev1.SecretType `json:"type,omitempty"`
		Data map[string][]byte `json:"data,omitempty"`
	}{creds.Type, creds.Data})
	if err != nil {
		t.Fatal(err)
	}
	plain := sha256.Sum256(content)
	if name == configsnapshot.CopyName("creds", hex.EncodeToString(plain[:])) {
		t.Fatalf("copy %s is named by a plain digest of the Secret's data", name)
	}
	key := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: configsnapshot.SnapshotKeySecret}}
	if err := cluster.client.Get(context.Background(), client.ObjectKeyFromObject(key), key); err != nil {
		t.Fatalf("the namespace's key: %v", err)
	}
	if n := len(key.Data[configsnapshot.SnapshotKeyField]); n < configsnapshot.MinKeyLength {
		t.Fatalf("the key has %d bytes", n)
	}
}

// TestConfigSnapshotsMissingSources: a required source that does not exist
// stops the rollout with a condition that names it, and its creation lets
// the rollout go on; an optional one that does not exist leaves the
// reference as it is, as Kubernetes starts the pod without it.
func TestConfigSnapshotsMissingSources(t *testing.T) {
	ns := newNamespace(t)
	mustCreate(t, secret(ns, "creds", "x"))
	mustCreate(t, snapshotDC(ns, "web", func(dc *dcv1.DeploymentConfig) {
		optional := true
		dc.Spec.Template.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "EXTRA", ValueFrom: &corev1.EnvVarSource{
			ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "extra"}, Key: "k", Optional: &optional},
		}}}
	}))
	waitCondition(t, ns, "web", dcv1.DeploymentProgressing, corev1.ConditionFalse, dcv1.ConfigSnapshotMissingReason)
	mustCreate(t, configMap(ns, "app", "v1"))
	rc := waitOwned(t, ns, "web-1")
	if got := rc.Spec.Template.Spec.Containers[0].Env[0].ValueFrom.ConfigMapKeyRef.Name; got != "extra" {
		t.Fatalf("the optional reference became %q", got)
	}
	set, _, err := configsnapshot.Of(rc.Annotations)
	if err != nil || !slices.Contains(set, configsnapshot.Entry{Kind: "ConfigMap", Name: "extra"}) {
		t.Fatalf("snapshots %+v (%v) lack the absent optional source", set, err)
	}
}

// TestConfigSnapshotsStayInTheirNamespace: the controller copies with its
// own rights, so the rule is that a copy is made only of a source in the
// DeploymentConfig's own namespace, into that namespace, where whoever may
// read it could read the source. A user who may edit DeploymentConfigs but
// not read Secrets gets a Secret copied, and still cannot read the copy;
// the Secret of the same name in another namespace is never copied.
func TestConfigSnapshotsStayInTheirNamespace(t *testing.T) {
	ns, other := newNamespace(t), newNamespace(t)
	mustCreate(t, configMap(ns, "app", "v1"))
	mustCreate(t, secret(ns, "creds", "mine"))
	mustCreate(t, secret(other, "creds", "theirs"))
	user := "dc-editor"
	mustCreate(t, &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "dc-editor"},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{dcv1.GroupVersion.Group}, Resources: []string{"deploymentconfigs"}, Verbs: []string{"get", "list", "create", "update"}},
			{APIGroups: []string{""}, Resources: []string{"configmaps", "replicationcontrollers"}, Verbs: []string{"get", "list"}},
		},
	})
	mustCreate(t, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "dc-editor"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "dc-editor"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
	})
	cfg := rest.CopyConfig(cluster.cfg)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: []string{"system:authenticated"}}
	as, err := client.New(cfg, client.Options{Scheme: cluster.client.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := testContext(t, waitTimeout)
	if err := as.Create(ctx, snapshotDC(ns, "web", nil)); err != nil {
		t.Fatalf("create the DeploymentConfig as %s: %v", user, err)
	}
	rc := waitOwned(t, ns, "web-1")
	copyName := rc.Spec.Template.Spec.Volumes[0].Secret.SecretName
	got := &corev1.Secret{}
	if err := cluster.client.Get(ctx, types.NamespacedName{Namespace: ns, Name: copyName}, got); err != nil || string(got.Data["password"]) != "mine" {
		t.Fatalf("copy %s of this namespace's Secret: %v", copyName, err)
	}
	if err := as.Get(ctx, types.NamespacedName{Namespace: ns, Name: copyName}, &corev1.Secret{}); !apierrors.IsForbidden(err) {
		t.Fatalf("%s read the Secret's copy: %v; want Forbidden", user, err)
	}
	copies := &corev1.SecretList{}
	if err := cluster.client.List(ctx, copies, client.HasLabels{dcv1.ConfigSnapshotOfLabel}); err != nil {
		t.Fatal(err)
	}
	for _, s := range copies.Items {
		if s.Namespace == other || string(s.Data["password"]) == "theirs" {
			t.Fatalf("the other namespace's Secret was copied: %s/%s", s.Namespace, s.Name)
		}
	}
}

// TestConfigSnapshotsValidation: the CRD's rules on configSnapshots.
func TestConfigSnapshotsValidation(t *testing.T) {
	ns := newNamespace(t)
	tests := []struct {
		name      string
		snapshots dcv1.ConfigSnapshots
		wantError string
	}{
		{"referenced", dcv1.ConfigSnapshots{}, ""},
		{"named", dcv1.ConfigSnapshots{Follow: dcv1.ConfigSnapshotFollowNamed, Secrets: []string{"creds"}}, ""},
		{"named without names", dcv1.ConfigSnapshots{Follow: dcv1.ConfigSnapshotFollowNamed}, "follow Named needs at least one name"},
		{"names without named", dcv1.ConfigSnapshots{ConfigMaps: []string{"app"}}, "only used with follow Named"},
		{"unknown follow", dcv1.ConfigSnapshots{Follow: "Everything"}, "Unsupported value"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snapshots := tt.snapshots
			dc := newDC(ns, fmt.Sprintf("v%d", i), func(dc *dcv1.DeploymentConfig) { dc.Spec.ConfigSnapshots = &snapshots })
			err := cluster.client.Create(context.Background(), dc, client.DryRunAll)
			switch {
			case tt.wantError == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tt.wantError != "" && (err == nil || !strings.Contains(err.Error(), tt.wantError)):
				t.Fatalf("error %v, want one containing %q", err, tt.wantError)
			}
		})
	}
}

// configSnapshotCases break each schema rule of configSnapshots and of the
// ConfigData cause, for TestServerRefusesEveryBrokenRule.
func configSnapshotCases() []fieldCase {
	names := func(n, length int) string {
		out := ""
		for i := range n {
			out += fmt.Sprintf("    - %s%d\n", strings.Repeat("n", length), i)
		}
		return out
	}
	spec := func(rule, field, wantMessage, body string) fieldCase {
		return fieldCase{rule: rule, field: field, wantMessage: wantMessage, manifest: invalidCase{spec: "  configSnapshots:\n" + body}.manifest()}
	}
	changed := make([]string, 129)
	for i := range changed {
		changed[i] = fmt.Sprintf("%q", fmt.Sprintf("ConfigMap/c%d", i))
	}
	return []fieldCase{
		spec("cel", "spec.configSnapshots.follow", "follow Named needs at least one name", "    follow: Named\n"),
		spec("cel", "spec.configSnapshots.follow", "only used with follow Named", "    configMaps: [app]\n"),
		spec("enum", "spec.configSnapshots.follow", msgEnum, "    follow: Everything\n"),
		spec("maxItems", "spec.configSnapshots.configMaps", "must have at most 64 items", "    follow: Named\n    configMaps:\n"+names(65, 1)),
		spec("maxItems", "spec.configSnapshots.secrets", "must have at most 64 items", "    follow: Named\n    secrets:\n"+names(65, 1)),
		spec("maxLength", "spec.configSnapshots.configMaps[0]", "may not be more than 253", "    follow: Named\n    configMaps:\n"+names(1, 253)),
		spec("maxLength", "spec.configSnapshots.secrets[0]", "may not be more than 253", "    follow: Named\n    secrets:\n"+names(1, 253)),
		{rule: "maxItems", field: "status.details.causes[0].configData.changed", wantMessage: "must have at most 128 items",
			statusPatches: []string{`{"status":{"details":{"message":"m","causes":[{"type":"ConfigData","configData":{"changed":[` + strings.Join(changed, ",") + `]}}]}}}`}},
	}
}

// TestConfigSnapshotsOwnedByTheDCUntilADeploymentIs: when the deployment
// cannot be created (here its name is taken by an RC that is not the
// DeploymentConfig's), the copy made for it is owned by the DeploymentConfig,
// so it never outlives it.
func TestConfigSnapshotsOwnedByTheDCUntilADeploymentIs(t *testing.T) {
	ns := newNamespace(t)
	mustCreate(t, configMap(ns, "app", "v1"))
	mustCreate(t, secret(ns, "creds", "x"))
	mustCreate(t, &corev1.ReplicationController{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web-1"},
		Spec: corev1.ReplicationControllerSpec{
			Selector: map[string]string{"other": "app"},
			Template: &corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"other": "app"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.example.com/other:1"}}},
			},
		},
	})
	mustCreate(t, snapshotDC(ns, "web", nil))
	waitCondition(t, ns, "web", dcv1.DeploymentProgressing, corev1.ConditionFalse, dcv1.ReplicationControllerCreateErrorReason)
	copies := &corev1.ConfigMapList{}
	if err := cluster.client.List(context.Background(), copies, client.InNamespace(ns), client.MatchingLabels{dcv1.ConfigSnapshotOfLabel: "app"}); err != nil {
		t.Fatal(err)
	}
	if len(copies.Items) != 1 {
		t.Fatalf("%d copies of app, want 1", len(copies.Items))
	}
	if got := ownersOf(t, &copies.Items[0]); !slices.Equal(got, []string{"DeploymentConfig/web"}) {
		t.Fatalf("copy owners %v, want the DeploymentConfig", got)
	}
}

// TestConfigSnapshotsOfOneMebibyte: a ConfigMap at the API server's limit
// for its data (1 MiB) copies as it is.
func TestConfigSnapshotsOfOneMebibyte(t *testing.T) {
	ns := newNamespace(t)
	const limit = 1 << 20
	big := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "app"}, Data: map[string]string{"GREETING": strings.Repeat("x", limit-len("GREETING"))}}
	mustCreate(t, big)
	mustCreate(t, secret(ns, "creds", "x"))
	mustCreate(t, snapshotDC(ns, "web", nil))
	rc := waitOwned(t, ns, "web-1")
	copied := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: envFromName(rc)}}
	ownersOf(t, copied)
	if len(copied.Data["GREETING"]) != limit-len("GREETING") {
		t.Fatalf("copy holds %d bytes", len(copied.Data["GREETING"]))
	}
}
