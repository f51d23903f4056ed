package podruntime

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// fakeSource serves ConfigMaps and Secrets from maps.
type fakeSource struct {
	configMaps map[string]map[string]string
	secrets    map[string]map[string][]byte
}

func (f fakeSource) configMap(_ context.Context, _, name string) (*corev1.ConfigMap, error) {
	data, ok := f.configMaps[name]
	if !ok {
		return nil, apierrors.NewNotFound(corev1.Resource("configmaps"), name)
	}
	return &corev1.ConfigMap{Data: data}, nil
}

func (f fakeSource) secret(_ context.Context, _, name string) (*corev1.Secret, error) {
	data, ok := f.secrets[name]
	if !ok {
		return nil, apierrors.NewNotFound(corev1.Resource("secrets"), name)
	}
	return &corev1.Secret{Data: data}, nil
}

func TestContainerEnv(t *testing.T) {
	src := fakeSource{
		configMaps: map[string]map[string]string{"settings": {"COLOR": "blue", "SIZE": "2"}},
		secrets:    map[string]map[string][]byte{"creds": {"token": []byte("s3cret"), "9lives": []byte("x")}},
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: "web-1-hook-pre", Namespace: "shop", UID: "uid-1",
			Labels:      map[string]string{"app": "web"},
			Annotations: map[string]string{"note": "hi"},
		},
		Spec: corev1.PodSpec{NodeName: "kwok-node-0", ServiceAccountName: "deployer"},
	}
	yes := true
	tests := []struct {
		name      string
		env       []corev1.EnvVar
		envFrom   []corev1.EnvFromSource
		resources corev1.ResourceRequirements
		want      string
		wantNotes []string
	}{
		{
			name: "plain values, later ones win",
			env:  []corev1.EnvVar{{Name: "A", Value: "1"}, {Name: "B", Value: "2"}, {Name: "A", Value: "3"}},
			want: "A=3,B=2",
		},
		{
			name: "$(VAR) references to earlier variables",
			env:  []corev1.EnvVar{{Name: "HOST", Value: "db"}, {Name: "URL", Value: "postgres://$(HOST):$(PORT)/x"}, {Name: "LIT", Value: "$$(HOST)"}},
			want: "HOST=db,URL=postgres://db:$(PORT)/x,LIT=$(HOST)",
		},
		{
			name: "configMap and secret keys",
			env: []corev1.EnvVar{
				{Name: "COLOR", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "settings"}, Key: "COLOR"}}},
				{Name: "TOKEN", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "creds"}, Key: "token"}}},
			},
			want: "COLOR=blue,TOKEN=s3cret",
		},
		{
			name: "missing sources: optional ones unset, others left out with a note",
			env: []corev1.EnvVar{
				{Name: "OPT", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "nope"}, Key: "k", Optional: &yes}}},
				{Name: "OPTKEY", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "settings"}, Key: "nokey", Optional: &yes}}},
				{Name: "REQ", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "nope"}, Key: "k"}}},
				{Name: "REQKEY", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "settings"}, Key: "nokey"}}},
				{Name: "KEPT", Value: "yes"},
			},
			want:      "KEPT=yes",
			wantNotes: []string{`env REQ left out: secrets "nope" not found`, `env REQKEY left out: configmap settings has no key "nokey"`},
		},
		{
			name: "fieldRef",
			env: []corev1.EnvVar{
				{Name: "NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
				{Name: "NS", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}},
				{Name: "APP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels['app']"}}},
				{Name: "NOTE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.annotations['note']"}}},
				{Name: "NODE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}},
				{Name: "SA", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.serviceAccountName"}}},
				{Name: "IP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIP"}}},
				{Name: "ODD", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.schedulerName"}}},
			},
			want:      "NAME=web-1-hook-pre,NS=shop,APP=web,NOTE=hi,NODE=kwok-node-0,SA=deployer,IP=10.0.0.7",
			wantNotes: []string{`env ODD left out: unsupported fieldRef "spec.schedulerName"`},
		},
		{
			name: "resourceFieldRef from the container's own resources",
			env: []corev1.EnvVar{
				{Name: "CPU", ValueFrom: &corev1.EnvVarSource{ResourceFieldRef: &corev1.ResourceFieldSelector{Resource: "limits.cpu"}}},
				{Name: "MEM_MI", ValueFrom: &corev1.EnvVarSource{ResourceFieldRef: &corev1.ResourceFieldSelector{Resource: "requests.memory", Divisor: resource.MustParse("1Mi")}}},
				{Name: "NOLIMIT", ValueFrom: &corev1.EnvVarSource{ResourceFieldRef: &corev1.ResourceFieldSelector{Resource: "limits.memory"}}},
			},
			resources: corev1.ResourceRequirements{
				Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")},
				Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")},
			},
			want:      "CPU=1,MEM_MI=64",
			wantNotes: []string{"env NOLIMIT left out: the container sets no limits.memory"},
		},
		{
			name: "envFrom with a prefix, then env over it",
			envFrom: []corev1.EnvFromSource{
				{Prefix: "CFG_", ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "settings"}}},
				{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "creds"}}},
				{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "gone"}, Optional: &yes}},
				{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "missing"}}},
			},
			env:  []corev1.EnvVar{{Name: "CFG_SIZE", Value: "3"}},
			want: "CFG_COLOR=blue,CFG_SIZE=3,token=s3cret",
			wantNotes: []string{
				`envFrom secret creds: key "9lives" skipped: not a valid variable name`,
				`envFrom configmap missing left out: configmaps "missing" not found`,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &corev1.Container{Name: "lifecycle", Env: tt.env, EnvFrom: tt.envFrom, Resources: tt.resources}
			env, notes := containerEnv(t.Context(), pod, c, src, podFacts{podIP: "10.0.0.7"})
			var got []string
			for _, v := range env.vars {
				got = append(got, v.name+"="+v.value)
			}
			if strings.Join(got, ",") != tt.want {
				t.Errorf("env %s, want %s", strings.Join(got, ","), tt.want)
			}
			if strings.Join(notes, "\n") != strings.Join(tt.wantNotes, "\n") {
				t.Errorf("notes\n%s\nwant\n%s", strings.Join(notes, "\n"), strings.Join(tt.wantNotes, "\n"))
			}
		})
	}
}

func TestExpand(t *testing.T) {
	vars := map[string]string{"A": "1", "B": "two"}
	lookup := func(name string) (string, bool) { v, ok := vars[name]; return v, ok }
	tests := map[string]string{
		"plain":           "plain",
		"$(A)":            "1",
		"x$(A)y$(B)z":     "x1ytwoz",
		"$(UNKNOWN)":      "$(UNKNOWN)",
		"$$(A)":           "$(A)",
		"$$":              "$",
		"$A":              "$A",
		"cost: 5$":        "cost: 5$",
		"$(A":             "$(A",
		"$()":             "$()",
		"--until=$(B)%":   "--until=two%",
		"echo $HOME $(A)": "echo $HOME 1",
	}
	for in, want := range tests {
		if got := expand(in, lookup); got != want {
			t.Errorf("expand(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestProcessEnvironment(t *testing.T) {
	host := hostEnv{
		ownDirs:    []string{"/repo/bin", "/state/bin"},
		hostPath:   "/usr/bin:/bin",
		home:       "/state/pods/p/home",
		hostname:   "web-1-hook-pre",
		kubeconfig: "/state/pods/p/kubeconfig",
	}
	tests := []struct {
		name string
		pod  []envVar
		want string
	}{
		{
			name: "the runtime's defaults",
			pod:  []envVar{{"GREETING", "hi"}},
			want: "GREETING=hi HOSTNAME=web-1-hook-pre HOME=/state/pods/p/home PATH=/repo/bin:/state/bin:/usr/bin:/bin KUBECONFIG=/state/pods/p/kubeconfig",
		},
		{
			name: "the pod's HOME, HOSTNAME and PATH, after the runtime's directories; never its KUBECONFIG",
			pod:  []envVar{{"HOME", "/app"}, {"HOSTNAME", "h"}, {"PATH", "/opt/bin"}, {"KUBECONFIG", "/etc/kc"}},
			want: "HOME=/app HOSTNAME=h PATH=/repo/bin:/state/bin:/opt/bin KUBECONFIG=/state/pods/p/kubeconfig",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := &environment{}
			for _, v := range tt.pod {
				env.set(v.name, v.value)
			}
			if got := strings.Join(processEnvironment(env, host), " "); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}
