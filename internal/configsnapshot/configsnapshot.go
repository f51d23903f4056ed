// Package configsnapshot knows configuration snapshots
// (docs/config-snapshots.md): which ConfigMaps and Secrets a pod template
// reads, the content-named immutable copies a deployment runs on, the pod
// template that points at them, and the record of them kept on the
// deployment. It does no I/O; dc-controller reads and writes the objects.
package configsnapshot

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
)

// Kinds of the objects a snapshot copies.
const (
	KindConfigMap = "ConfigMap"
	KindSecret    = "Secret"
)

// hashLength is how many hex digits of the content digest name a copy: 40
// bits, so that two contents of one source in one namespace practically
// never meet; should they, the controller finds the copy's data differs and
// refuses it (it never serves another content under a name).
const hashLength = 10

// maxNameLength is the longest name of a ConfigMap or Secret.
const maxNameLength = 253

// Ref is one ConfigMap or Secret a pod template reads.
type Ref struct {
	// Kind is ConfigMap or Secret.
	Kind string `json:"kind"`
	// Name is the object's name, in the pod's namespace.
	Name string `json:"name"`
	// Optional is true when every reference to it is optional: a pod
	// starts without it, as Kubernetes starts one.
	Optional bool `json:"optional,omitempty"`
}

// String is Kind/name, as causes and the CLI show a source.
func (r Ref) String() string { return r.Kind + "/" + r.Name }

// Entry records one followed source of a deployment.
type Entry struct {
	// Kind is ConfigMap or Secret.
	Kind string `json:"kind"`
	// Name is the source's name.
	Name string `json:"name"`
	// Copy is the name of the snapshot the pod template points at, or ""
	// when an optional source did not exist (the template keeps its name).
	Copy string `json:"copy,omitempty"`
}

// Set is the snapshots of a deployment, sorted by kind and name.
type Set []Entry

// Encode returns the set as stored in dcv1.ConfigSnapshotsAnnotation.
func (s Set) Encode() (string, error) {
	if s == nil {
		s = Set{}
	}
	data, err := json.Marshal(s)
	if err != nil {
		return "", fmt.Errorf("encode config snapshots: %w", err)
	}
	return string(data), nil
}

// Decode reads a set from dcv1.ConfigSnapshotsAnnotation's value.
func Decode(value string) (Set, error) {
	var s Set
	if err := json.Unmarshal([]byte(value), &s); err != nil {
		return nil, fmt.Errorf("decode config snapshots: %w", err)
	}
	sortSet(s)
	return s, nil
}

// Of returns the snapshots recorded on a deployment, and whether it has
// any record (a deployment made without configSnapshots has none).
func Of(annotations map[string]string) (Set, bool, error) {
	value, ok := annotations[dcv1.ConfigSnapshotsAnnotation]
	if !ok {
		return nil, false, nil
	}
	s, err := Decode(value)
	return s, true, err
}

// Copies returns the copy names of a set by kind and source name.
func (s Set) Copies() map[Ref]string {
	out := map[Ref]string{}
	for _, e := range s {
		if e.Copy != "" {
			out[Ref{Kind: e.Kind, Name: e.Name}] = e.Copy
		}
	}
	return out
}

// Changed returns the sources, as Kind/name, whose snapshot differs between
// two sets: changed data, or a source that one set has and the other lacks.
func Changed(old, current Set) []string {
	before := map[string]string{}
	for _, e := range old {
		before[e.Kind+"/"+e.Name] = e.Copy
	}
	var out []string
	seen := map[string]bool{}
	for _, e := range current {
		key := e.Kind + "/" + e.Name
		seen[key] = true
		if c, ok := before[key]; !ok || c != e.Copy {
			out = append(out, key)
		}
	}
	for key := range before {
		if !seen[key] {
			out = append(out, key)
		}
	}
	slices.Sort(out)
	return out
}

func sortSet(s Set) {
	slices.SortFunc(s, func(a, b Entry) int {
		if c := strings.Compare(a.Kind, b.Kind); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
}

// NewSet returns the entries sorted, as Encode stores and Changed compares them.
func NewSet(entries ...Entry) Set {
	s := append(Set(nil), entries...)
	sortSet(s)
	return s
}

// Followed returns the sources a DeploymentConfig's snapshots follow: those
// its template references, of the names listed with follow Named. Names
// listed but not referenced are ignored: no pod reads them.
func Followed(dc *dcv1.DeploymentConfig) []Ref {
	cs := dc.Spec.ConfigSnapshots
	if cs == nil || dc.Spec.Template == nil {
		return nil
	}
	refs := References(&dc.Spec.Template.Spec)
	if cs.Follow != dcv1.ConfigSnapshotFollowNamed {
		return refs
	}
	var out []Ref
	for _, r := range refs {
		names := cs.ConfigMaps
		if r.Kind == KindSecret {
			names = cs.Secrets
		}
		if slices.Contains(names, r.Name) {
			out = append(out, r)
		}
	}
	return out
}

// References returns the ConfigMaps and Secrets a pod reads through env,
// envFrom, volumes and projected volumes, sorted by kind and name. A source
// is optional only when every reference to it is. Image pull secrets are
// not configuration: the kubelet reads them, and they are left alone.
func References(spec *corev1.PodSpec) []Ref {
	optional := map[Ref]bool{}
	add := func(kind, name string, opt *bool) {
		if name == "" {
			return
		}
		key := Ref{Kind: kind, Name: name}
		isOpt := opt != nil && *opt
		if prev, ok := optional[key]; ok {
			optional[key] = prev && isOpt
			return
		}
		optional[key] = isOpt
	}
	visit(spec, func(kind string, name *string, opt *bool) { add(kind, *name, opt) })
	out := make([]Ref, 0, len(optional))
	for r, opt := range optional {
		r.Optional = opt
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b Ref) int {
		if c := strings.Compare(a.Kind, b.Kind); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out
}

// Rewrite points every reference of the pod at the copies of the set;
// references to sources the set has no copy of are left as they are.
func Rewrite(spec *corev1.PodSpec, s Set) {
	copies := s.Copies()
	visit(spec, func(kind string, name *string, _ *bool) {
		if c, ok := copies[Ref{Kind: kind, Name: *name}]; ok {
			*name = c
		}
	})
}

// visit calls fn with the kind, a pointer to the name and the optional flag
// of every ConfigMap and Secret reference of a pod.
func visit(spec *corev1.PodSpec, fn func(kind string, name *string, optional *bool)) {
	for _, list := range [][]corev1.Container{spec.InitContainers, spec.Containers} {
		for i := range list {
			visitContainer(&list[i], fn)
		}
	}
	for i := range spec.Volumes {
		v := &spec.Volumes[i].VolumeSource
		if v.ConfigMap != nil {
			fn(KindConfigMap, &v.ConfigMap.Name, v.ConfigMap.Optional)
		}
		if v.Secret != nil {
			fn(KindSecret, &v.Secret.SecretName, v.Secret.Optional)
		}
		if v.Projected == nil {
			continue
		}
		for j := range v.Projected.Sources {
			p := &v.Projected.Sources[j]
			if p.ConfigMap != nil {
				fn(KindConfigMap, &p.ConfigMap.Name, p.ConfigMap.Optional)
			}
			if p.Secret != nil {
				fn(KindSecret, &p.Secret.Name, p.Secret.Optional)
			}
		}
	}
}

func visitContainer(c *corev1.Container, fn func(kind string, name *string, optional *bool)) {
	for i := range c.EnvFrom {
		e := &c.EnvFrom[i]
		if e.ConfigMapRef != nil {
			fn(KindConfigMap, &e.ConfigMapRef.Name, e.ConfigMapRef.Optional)
		}
		if e.SecretRef != nil {
			fn(KindSecret, &e.SecretRef.Name, e.SecretRef.Optional)
		}
	}
	for i := range c.Env {
		from := c.Env[i].ValueFrom
		if from == nil {
			continue
		}
		if from.ConfigMapKeyRef != nil {
			fn(KindConfigMap, &from.ConfigMapKeyRef.Name, from.ConfigMapKeyRef.Optional)
		}
		if from.SecretKeyRef != nil {
			fn(KindSecret, &from.SecretKeyRef.Name, from.SecretKeyRef.Optional)
		}
	}
}

// CopyName names the copy of a source with content digest hash: the
// source's name, shortened if need be, a dash and the digest's first
// hashLength digits.
func CopyName(source, hash string) string {
	suffix := "-" + hash[:min(hashLength, len(hash))]
	if len(source)+len(suffix) > maxNameLength {
		source = strings.TrimRight(source[:maxNameLength-len(suffix)], "-.")
	}
	return source + suffix
}

// ConfigMapHash digests what a ConfigMap's copy keeps: its data and binary
// data.
func ConfigMapHash(cm *corev1.ConfigMap) string {
	return digest(struct {
		Data       map[string]string `json:"data,omitempty"`
		BinaryData map[string][]byte `json:"binaryData,omitempty"`
	}{cm.Data, cm.BinaryData})
}

// SecretHash digests what a Secret's copy keeps, its type and data
// (stringData never comes back from the API server), keyed with key: an
// HMAC-SHA256, not a plain digest. A copy's name is on every RC that uses
// it, for anyone who may read RCs; unkeyed, its digits would let them
// test guesses of a short secret (a PIN, a password) offline. Without the
// key, which is a Secret of the namespace (SnapshotKeySecret), they tell
// nothing. Equal contents under one key still digest alike, so
// DeploymentConfigs of the namespace share copies.
func SecretHash(s *corev1.Secret, key []byte) string {
	mac := hmac.New(sha256.New, key)
	mac.Write(canonical(struct {
		Type corev1.SecretType `json:"type,omitempty"`
		Data map[string][]byte `json:"data,omitempty"`
	}{s.Type, s.Data}))
	return hex.EncodeToString(mac.Sum(nil))
}

// SnapshotKeySecret names the Secret of each namespace that holds the key
// of its Secret copies' names (SecretHash), which dc-controller creates
// the first time it copies a Secret there. Whoever may read it may read
// the namespace's Secrets anyway. Deleting it changes the names of later
// copies, not what runs: dc-controller tells a copy whose data is the
// source's by its data.
const SnapshotKeySecret = "deployconfig-snapshot-key"

// SnapshotKeyField is the key's field in SnapshotKeySecret's data.
const SnapshotKeyField = "key"

// MinKeyLength is the shortest key SecretHash is given.
const MinKeyLength = 32

// digest is the hex SHA-256 of v's JSON.
func digest(v any) string {
	sum := sha256.Sum256(canonical(v))
	return hex.EncodeToString(sum[:])
}

// canonical is v's JSON; maps encode with sorted keys, so equal contents
// encode alike.
func canonical(v any) []byte {
	data, err := json.Marshal(v)
	if err != nil {
		// Maps of strings and bytes always encode.
		panic(fmt.Sprintf("encode snapshot content: %v", err))
	}
	return data
}

// ConfigMapCopy returns the immutable snapshot of a ConfigMap.
func ConfigMapCopy(src *corev1.ConfigMap) *corev1.ConfigMap {
	immutable := true
	return &corev1.ConfigMap{
		ObjectMeta: copyMeta(src.ObjectMeta, CopyName(src.Name, ConfigMapHash(src))),
		Immutable:  &immutable,
		Data:       src.Data,
		BinaryData: src.BinaryData,
	}
}

// SecretCopy returns the immutable snapshot of a Secret, of the same type,
// named with key (SecretHash).
func SecretCopy(src *corev1.Secret, key []byte) *corev1.Secret {
	immutable := true
	return &corev1.Secret{
		ObjectMeta: copyMeta(src.ObjectMeta, CopyName(src.Name, SecretHash(src, key))),
		Immutable:  &immutable,
		Type:       src.Type,
		Data:       src.Data,
	}
}

func copyMeta(src metav1.ObjectMeta, name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name:      name,
		Namespace: src.Namespace,
		Labels:    map[string]string{dcv1.ConfigSnapshotOfLabel: labelValue(src.Name)},
	}
}

// labelValue is a source's name as a label value (at most 63 characters):
// ConfigMap and Secret names may be longer, and the label is for people.
func labelValue(name string) string {
	if len(name) <= 63 {
		return name
	}
	return strings.TrimRight(name[:63], "-.")
}

// IsCopyOf reports whether an existing object of a copy's name is a copy of
// the same source.
func IsCopyOf(existing metav1.Object, source string) bool {
	return existing.GetLabels()[dcv1.ConfigSnapshotOfLabel] == labelValue(source)
}
