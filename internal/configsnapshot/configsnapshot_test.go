package configsnapshot

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
)

func ptr[T any](v T) *T { return &v }

// podReadingEverything reads ConfigMaps and Secrets every way a pod can.
func podReadingEverything() *corev1.PodSpec {
	ref := func(name string) corev1.LocalObjectReference { return corev1.LocalObjectReference{Name: name} }
	return &corev1.PodSpec{
		InitContainers: []corev1.Container{{Name: "init", EnvFrom: []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: ref("init-secret")}}}}},
		Containers: []corev1.Container{{
			Name:    "app",
			EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: ref("env-cm")}}},
			Env: []corev1.EnvVar{
				{Name: "A", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: ref("key-cm"), Key: "a", Optional: ptr(true)}}},
				{Name: "B", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: ref("key-secret"), Key: "b"}}},
				{Name: "C", Value: "plain"},
			},
		}},
		Volumes: []corev1.Volume{
			{Name: "v1", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: ref("key-cm")}}},
			{Name: "v2", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "vol-secret", Optional: ptr(true)}}},
			{Name: "v3", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
				{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: ref("proj-cm")}},
				{Secret: &corev1.SecretProjection{LocalObjectReference: ref("proj-secret")}},
			}}}},
		},
		ImagePullSecrets: []corev1.LocalObjectReference{ref("pull")},
	}
}

func TestReferences(t *testing.T) {
	got := References(podReadingEverything())
	want := []Ref{
		{Kind: KindConfigMap, Name: "env-cm"},
		// Optional in env, required as a volume: required.
		{Kind: KindConfigMap, Name: "key-cm"},
		{Kind: KindConfigMap, Name: "proj-cm"},
		{Kind: KindSecret, Name: "init-secret"},
		{Kind: KindSecret, Name: "key-secret"},
		{Kind: KindSecret, Name: "proj-secret"},
		{Kind: KindSecret, Name: "vol-secret", Optional: true},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("References:\n got %+v\nwant %+v", got, want)
	}
}

func TestFollowed(t *testing.T) {
	tests := []struct {
		name      string
		snapshots *dcv1.ConfigSnapshots
		want      []string
	}{
		{"off", nil, nil},
		{"referenced", &dcv1.ConfigSnapshots{Follow: dcv1.ConfigSnapshotFollowReferenced},
			[]string{"ConfigMap/env-cm", "ConfigMap/key-cm", "ConfigMap/proj-cm", "Secret/init-secret", "Secret/key-secret", "Secret/proj-secret", "Secret/vol-secret"}},
		{"named, unreferenced names ignored", &dcv1.ConfigSnapshots{Follow: dcv1.ConfigSnapshotFollowNamed, ConfigMaps: []string{"env-cm", "nowhere"}, Secrets: []string{"key-secret"}},
			[]string{"ConfigMap/env-cm", "Secret/key-secret"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dc := &dcv1.DeploymentConfig{Spec: dcv1.DeploymentConfigSpec{ConfigSnapshots: tt.snapshots, Template: &corev1.PodTemplateSpec{Spec: *podReadingEverything()}}}
			var got []string
			for _, r := range Followed(dc) {
				got = append(got, r.String())
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestRewritePointsAtCopiesOnly(t *testing.T) {
	spec := podReadingEverything()
	Rewrite(spec, NewSet(
		Entry{Kind: KindConfigMap, Name: "key-cm", Copy: "key-cm-1"},
		Entry{Kind: KindSecret, Name: "proj-secret", Copy: "proj-secret-2"},
		Entry{Kind: KindSecret, Name: "vol-secret"}, // absent, optional
		// A Secret's copy must not rename a ConfigMap of the same name.
		Entry{Kind: KindSecret, Name: "env-cm", Copy: "wrong"},
	))
	checks := []struct{ what, got, want string }{
		{"env key ref", spec.Containers[0].Env[0].ValueFrom.ConfigMapKeyRef.Name, "key-cm-1"},
		{"configMap volume", spec.Volumes[0].ConfigMap.Name, "key-cm-1"},
		{"projected secret", spec.Volumes[2].Projected.Sources[1].Secret.Name, "proj-secret-2"},
		{"absent optional secret", spec.Volumes[1].Secret.SecretName, "vol-secret"},
		{"envFrom configMap", spec.Containers[0].EnvFrom[0].ConfigMapRef.Name, "env-cm"},
		{"pull secret", spec.ImagePullSecrets[0].Name, "pull"},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s: %q, want %q", c.what, c.got, c.want)
		}
	}
}

func TestCopyName(t *testing.T) {
	long := strings.Repeat("a", 250)
	tests := []struct {
		source, hash, want string
	}{
		{"app", "0123456789abcdef", "app-0123456789"},
		{long, "0123456789abcdef", strings.Repeat("a", 242) + "-0123456789"},
		{strings.Repeat("a", 241) + ".b", "0123456789abcdef", strings.Repeat("a", 241) + "-0123456789"},
	}
	for _, tt := range tests {
		got := CopyName(tt.source, tt.hash)
		if got != tt.want || len(got) > maxNameLength {
			t.Errorf("CopyName(%d chars) = %q (%d chars), want %q", len(tt.source), got, len(got), tt.want)
		}
	}
}

func TestHashesFollowContent(t *testing.T) {
	cm := func(data map[string]string) *corev1.ConfigMap { return &corev1.ConfigMap{Data: data} }
	secret := func(typ corev1.SecretType, v string) *corev1.Secret {
		return &corev1.Secret{Type: typ, Data: map[string][]byte{"k": []byte(v)}}
	}
	tests := []struct {
		name  string
		a, b  string
		equal bool
	}{
		{"same data, keys in any order", ConfigMapHash(cm(map[string]string{"a": "1", "b": "2"})), ConfigMapHash(cm(map[string]string{"b": "2", "a": "1"})), true},
		{"changed value", ConfigMapHash(cm(map[string]string{"a": "1"})), ConfigMapHash(cm(map[string]string{"a": "2"})), false},
		{"binary data counts", ConfigMapHash(&corev1.ConfigMap{BinaryData: map[string][]byte{"a": {1}}}), ConfigMapHash(cm(nil)), false},
		{"secret value", SecretHash(secret(corev1.SecretTypeOpaque, "x"), testKey), SecretHash(secret(corev1.SecretTypeOpaque, "y"), testKey), false},
		{"secret type", SecretHash(secret(corev1.SecretTypeOpaque, "x"), testKey), SecretHash(secret(corev1.SecretTypeBasicAuth, "x"), testKey), false},
		{"same secret, same key", SecretHash(secret(corev1.SecretTypeOpaque, "x"), testKey), SecretHash(secret(corev1.SecretTypeOpaque, "x"), testKey), true},
		{"same secret, another key", SecretHash(secret(corev1.SecretTypeOpaque, "x"), testKey), SecretHash(secret(corev1.SecretTypeOpaque, "x"), []byte(strings.Repeat("k", 32))), false},
	}
	for _, tt := range tests {
		if (tt.a == tt.b) != tt.equal {
			t.Errorf("%s: equal %v, want %v", tt.name, tt.a == tt.b, tt.equal)
		}
	}
}

// testKey is a key of Secret copy names.
var testKey = []byte("0123456789abcdef0123456789abcdef")

// TestSecretCopyNamesRevealNothing: the digits of a Secret copy's name are
// not those of a plain digest of its content, which anyone reading RCs
// could test guesses against offline; they come from the key.
func TestSecretCopyNamesRevealNothing(t *testing.T) {
	src := &corev1.Secret{Type: corev1.SecretTypeOpaque, Data: map[string][]byte{"pin": []byte("1234")}}
	src.Name = "pin"
	plain := CopyName("pin", digest(struct {
		Type corev1.SecretType `json:"type,omitempty"`
		Data map[string][]byte `json:"data,omitempty"`
	}{src.Type, src.Data}))
	if got := SecretCopy(src, testKey).Name; got == plain {
		t.Fatalf("copy name %s is the plain digest of the data", got)
	}
}

func TestCopies(t *testing.T) {
	src := &corev1.Secret{Type: corev1.SecretTypeTLS, Data: map[string][]byte{"tls.crt": []byte("c"), "tls.key": []byte("k")}}
	src.Name, src.Namespace = "cert", "ns"
	c := SecretCopy(src, testKey)
	if c.Type != corev1.SecretTypeTLS || !*c.Immutable || c.Namespace != "ns" || !strings.HasPrefix(c.Name, "cert-") || !IsCopyOf(c, "cert") {
		t.Fatalf("secret copy %+v", c.ObjectMeta)
	}
	if IsCopyOf(c, "other") {
		t.Fatal("a copy of cert claims to copy other")
	}
}

func TestChangedAndEncoding(t *testing.T) {
	old := NewSet(Entry{Kind: KindConfigMap, Name: "a", Copy: "a-1"}, Entry{Kind: KindSecret, Name: "s", Copy: "s-1"}, Entry{Kind: KindConfigMap, Name: "gone", Copy: "gone-1"})
	current := NewSet(Entry{Kind: KindSecret, Name: "s", Copy: "s-2"}, Entry{Kind: KindConfigMap, Name: "a", Copy: "a-1"}, Entry{Kind: KindConfigMap, Name: "new"})
	if got, want := Changed(old, current), []string{"ConfigMap/gone", "ConfigMap/new", "Secret/s"}; !slices.Equal(got, want) {
		t.Fatalf("Changed = %v, want %v", got, want)
	}
	value, err := current.Encode()
	if err != nil {
		t.Fatal(err)
	}
	back, ok, err := Of(map[string]string{dcv1.ConfigSnapshotsAnnotation: value})
	if err != nil || !ok || !slices.Equal(back, current) || len(Changed(back, current)) != 0 {
		t.Fatalf("round trip: %v %v %v", back, ok, err)
	}
	if _, ok, _ := Of(nil); ok {
		t.Fatal("a deployment without the annotation has snapshots")
	}
}
