package cli

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/configsnapshot"
	"github.com/deployconfig/deployconfig/internal/deployment"
)

// snapshotPin is the version undo pins a DeploymentConfig's configuration
// snapshots to when it restores target: target's own, when target ran on
// snapshots; "" otherwise.
func snapshotPin(target *corev1.ReplicationController) string {
	if _, ok := target.Annotations[dcv1.ConfigSnapshotsAnnotation]; !ok {
		return ""
	}
	return strconv.FormatInt(deployment.Version(target), 10)
}

// pinSnapshots makes the next deployments of a DeploymentConfig with
// snapshots run on the pinned version's configuration, as undo restores
// that version's template: rolling back the code without its
// configuration is what snapshots exist to prevent.
func pinSnapshots(dc *dcv1.DeploymentConfig, pin string) {
	if pin == "" || dc.Spec.ConfigSnapshots == nil {
		return
	}
	if dc.Annotations == nil {
		dc.Annotations = map[string]string{}
	}
	dc.Annotations[dcv1.ConfigSnapshotPinAnnotation] = pin
}

// warnPinnedSnapshots says that undo pinned the configuration, and how to
// follow the current data again.
func (a *app) warnPinnedSnapshots(dc *dcv1.DeploymentConfig) {
	pin, ok := dc.Annotations[dcv1.ConfigSnapshotPinAnnotation]
	if !ok || dc.Spec.ConfigSnapshots == nil {
		return
	}
	fmt.Fprintf(a.Streams.ErrOut, "Warning: the configuration is pinned to the snapshots of revision %s: changes of its ConfigMaps and Secrets do not roll out until you remove the pin.\n", pin)
	fmt.Fprintf(a.Streams.ErrOut, "  Follow them again with: kubectl annotate dc/%s %s-\n", dc.Name, dcv1.ConfigSnapshotPinAnnotation)
}

// writeSnapshots writes which configuration a revision runs on: each
// followed source and the snapshot its pods read. Nothing of the data.
func writeSnapshots(w io.Writer, rc *corev1.ReplicationController) {
	set, ok, err := configsnapshot.Of(rc.Annotations)
	switch {
	case !ok:
		return
	case err != nil:
		fmt.Fprintf(w, "Config snapshots: <unreadable: %v>\n", err)
		return
	case len(set) == 0:
		fmt.Fprintln(w, "Config snapshots: <none>")
		return
	}
	fmt.Fprintln(w, "Config snapshots:")
	for _, e := range set {
		fmt.Fprintf(w, "  %s\n", snapshotLine(e))
	}
}

// describeConfigSnapshots says what the DeploymentConfig's snapshots
// follow, and whether a rollback pinned them.
func describeConfigSnapshots(d *describer, dc *dcv1.DeploymentConfig) {
	cs := dc.Spec.ConfigSnapshots
	if cs == nil {
		return
	}
	what := "every ConfigMap and Secret the template references"
	if cs.Follow == dcv1.ConfigSnapshotFollowNamed {
		what = "the named ones the template references: " + orNone(strings.Join(append(prefixed("ConfigMap/", cs.ConfigMaps), prefixed("Secret/", cs.Secrets)...), ", "))
	}
	d.line(0, "Config Snapshots", what)
	if pin, ok := dc.Annotations[dcv1.ConfigSnapshotPinAnnotation]; ok {
		d.line(1, "Pinned", "to the snapshots of revision "+pin+"; data changes do not roll out")
	}
}

func prefixed(prefix string, names []string) []string {
	out := make([]string, 0, len(names))
	for _, n := range names {
		out = append(out, prefix+n)
	}
	return out
}

// describeDeploymentSnapshots writes the snapshots a deployment runs on,
// one line per source: "ConfigMap app -> app-0123456789".
func describeDeploymentSnapshots(d *describer, rc *corev1.ReplicationController) {
	set, ok, err := configsnapshot.Of(rc.Annotations)
	if !ok {
		return
	}
	if err != nil {
		d.line(1, "Config", "<unreadable: "+err.Error()+">")
		return
	}
	items := make([]string, 0, len(set))
	for _, e := range set {
		items = append(items, snapshotLine(e))
	}
	d.line(1, "Config", orNone(strings.Join(items, ", ")))
}

// snapshotLine is one source and the snapshot a deployment reads of it.
func snapshotLine(e configsnapshot.Entry) string {
	if e.Copy == "" {
		return fmt.Sprintf("%s %s (absent, optional)", e.Kind, e.Name)
	}
	return fmt.Sprintf("%s %s -> %s", e.Kind, e.Name, e.Copy)
}

// configDiff writes how the configuration of revision `to` differs from
// that of revision `from`: per source, the keys added, removed and changed.
// ConfigMap values are shown; Secret values never are, only their keys.
func (a *app) configDiff(ctx context.Context, name string, from, to int64) error {
	if from < 1 || to < 1 {
		return fmt.Errorf("--config-diff needs --revision: expected two revision numbers of 1 or more, got %d and %d", from, to)
	}
	c, err := a.clients()
	if err != nil {
		return err
	}
	dc, err := getDC(ctx, c, name)
	if err != nil {
		return err
	}
	rcs, err := listDeployments(ctx, c, dc)
	if err != nil {
		return err
	}
	sets := make([]configsnapshot.Set, 2)
	for i, v := range []int64{from, to} {
		rc := findVersion(rcs, v)
		if rc == nil {
			return fmt.Errorf("deploymentconfig %q has no revision %d (see 'kubectl dc rollout history %s')", dc.Name, v, dc.Name)
		}
		set, ok, err := configsnapshot.Of(rc.Annotations)
		if err != nil {
			return fmt.Errorf("revision %d: %w", v, err)
		}
		if !ok {
			return fmt.Errorf("revision %d of deploymentconfig %q has no config snapshots (spec.configSnapshots was not set when it rolled out)", v, dc.Name)
		}
		sets[i] = set
	}
	w := a.Streams.Out
	fmt.Fprintf(w, "deploymentconfig.%s/%s: config of revision %d -> revision %d\n", dcv1.GroupVersion.Group, dc.Name, from, to)
	for _, pair := range pairSources(sets[0], sets[1]) {
		if err := a.diffSource(ctx, c, dc.Namespace, pair); err != nil {
			return err
		}
	}
	return nil
}

// sourcePair is one source's snapshots in two revisions ("" when absent).
type sourcePair struct {
	kind, name string
	from, to   string
}

// pairSources lines up the sources of two sets, sorted by kind and name.
func pairSources(from, to configsnapshot.Set) []sourcePair {
	byKey := map[configsnapshot.Ref]*sourcePair{}
	var keys []configsnapshot.Ref
	get := func(e configsnapshot.Entry) *sourcePair {
		key := configsnapshot.Ref{Kind: e.Kind, Name: e.Name}
		if p, ok := byKey[key]; ok {
			return p
		}
		p := &sourcePair{kind: e.Kind, name: e.Name}
		byKey[key] = p
		keys = append(keys, key)
		return p
	}
	for _, e := range from {
		get(e).from = e.Copy
	}
	for _, e := range to {
		get(e).to = e.Copy
	}
	slices.SortFunc(keys, func(a, b configsnapshot.Ref) int {
		return strings.Compare(a.String(), b.String())
	})
	out := make([]sourcePair, 0, len(keys))
	for _, k := range keys {
		out = append(out, *byKey[k])
	}
	return out
}

// diffSource writes one source's difference.
func (a *app) diffSource(ctx context.Context, c *Clients, namespace string, p sourcePair) error {
	w := a.Streams.Out
	if p.from == p.to {
		fmt.Fprintf(w, "%s %s: unchanged (%s)\n", p.kind, p.name, orAbsent(p.from))
		return nil
	}
	fmt.Fprintf(w, "%s %s: %s -> %s\n", p.kind, p.name, orAbsent(p.from), orAbsent(p.to))
	before, err := readSnapshot(ctx, c, namespace, p.kind, p.from)
	if err != nil {
		return err
	}
	after, err := readSnapshot(ctx, c, namespace, p.kind, p.to)
	if err != nil {
		return err
	}
	for _, line := range diffData(before, after, p.kind == configsnapshot.KindSecret) {
		fmt.Fprintf(w, "  %s\n", line)
	}
	return nil
}

func orAbsent(s string) string {
	if s == "" {
		return "<absent>"
	}
	return s
}

// snapshotData is what a diff compares of a copy: its values by key, and
// for a Secret its type (kept under a key no data key can have).
type snapshotData map[string]string

// secretTypeKey holds a Secret's type in snapshotData; data keys cannot
// contain a space.
const secretTypeKey = "type (Secret)"

// readSnapshot reads a copy's data; "" (an absent optional source) and a
// copy that is gone read as nothing, the latter said so.
func readSnapshot(ctx context.Context, c *Clients, namespace, kind, name string) (snapshotData, error) {
	data := snapshotData{}
	if name == "" {
		return data, nil
	}
	if kind == configsnapshot.KindConfigMap {
		cm, err := c.Kube.CoreV1().ConfigMaps(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, fmt.Errorf("read config snapshot %s/%s: %w", namespace, name, err)
		}
		for k, v := range cm.Data {
			data[k] = v
		}
		for k, v := range cm.BinaryData {
			data[k] = fmt.Sprintf("<%d bytes of binary data, sha256 %x>", len(v), sha256.Sum256(v))
		}
		return data, nil
	}
	secret, err := c.Kube.CoreV1().Secrets(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("read config snapshot %s/%s: %w", namespace, name, err)
	}
	data[secretTypeKey] = string(secret.Type)
	for k, v := range secret.Data {
		// Compared by digest, so that the value is not even held as text.
		data[k] = fmt.Sprintf("%x", sha256.Sum256(v))
	}
	return data, nil
}

// diffData lists the differences of two copies' data, by key: "+ key: v"
// added, "- key: v" removed, "~ key: old -> new" changed. Secret values
// are never shown: "(value hidden)" stands for them.
func diffData(before, after snapshotData, secret bool) []string {
	keys := slices.Sorted(maps.Keys(before))
	for k := range after {
		if _, ok := before[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	show := func(k, v string) string {
		if secret && k != secretTypeKey {
			return "(value hidden)"
		}
		return strconv.Quote(v)
	}
	var lines []string
	for _, k := range keys {
		old, had := before[k]
		cur, has := after[k]
		switch {
		case had && !has:
			lines = append(lines, fmt.Sprintf("- %s: %s", k, show(k, old)))
		case !had && has:
			lines = append(lines, fmt.Sprintf("+ %s: %s", k, show(k, cur)))
		case old != cur && secret && k != secretTypeKey:
			lines = append(lines, fmt.Sprintf("~ %s: changed (value hidden)", k))
		case old != cur:
			lines = append(lines, fmt.Sprintf("~ %s: %s -> %s", k, show(k, old), show(k, cur)))
		}
	}
	if len(lines) == 0 {
		lines = append(lines, "(same data)")
	}
	return lines
}
