package hook

import (
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
)

// testRC is a deployment whose template has an app container with env,
// envFrom, mounts, resources and security settings, and a sidecar.
func testRC() *corev1.ReplicationController {
	return &corev1.ReplicationController{
		ObjectMeta: metav1.ObjectMeta{Name: "web-3", Namespace: "shop", UID: "uid-web-3"},
		Spec: corev1.ReplicationControllerSpec{
			Template: &corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web", "deployment": "web-3"}},
				Spec: corev1.PodSpec{
					Containers: []corev1.Container{
						{
							Name:            "app",
							Image:           "registry/web:3",
							ImagePullPolicy: corev1.PullIfNotPresent,
							Command:         []string{"/serve"},
							WorkingDir:      "/srv",
							Env: []corev1.EnvVar{
								{Name: "A", Value: "base-a"},
								{Name: "SECRET", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
									LocalObjectReference: corev1.LocalObjectReference{Name: "db"}, Key: "password"}}},
								{Name: "B", Value: "base-b"},
								{Name: "DC_DEPLOYMENT_NAME", Value: "spoofed"},
							},
							EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{
								LocalObjectReference: corev1.LocalObjectReference{Name: "settings"}}}},
							Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{
								corev1.ResourceMemory: resource.MustParse("64Mi")}},
							VolumeMounts: []corev1.VolumeMount{
								{Name: "data", MountPath: "/data"},
								{Name: "cache", MountPath: "/cache"},
								{Name: "secret", MountPath: "/secret", ReadOnly: true},
							},
							SecurityContext: &corev1.SecurityContext{RunAsNonRoot: ptr.To(true)},
						},
						{Name: "sidecar", Image: "registry/sidecar:1"},
					},
					Volumes: []corev1.Volume{
						{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
						{Name: "cache", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
						{Name: "secret", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "tls"}}},
					},
					NodeSelector:       map[string]string{"zone": "a"},
					Tolerations:        []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpExists}},
					ImagePullSecrets:   []corev1.LocalObjectReference{{Name: "pull"}},
					ServiceAccountName: "web",
					SecurityContext:    &corev1.PodSecurityContext{RunAsUser: ptr.To[int64](1000)},
				},
			},
		},
	}
}

func execHook(policy dcv1.LifecycleHookFailurePolicy, container string, volumes []string, env ...corev1.EnvVar) *dcv1.LifecycleHook {
	return &dcv1.LifecycleHook{
		FailurePolicy: policy,
		ExecNewPod: &dcv1.ExecNewPodHook{
			Command:       []string{"/bin/migrate", "--up"},
			ContainerName: container,
			Volumes:       volumes,
			Env:           env,
		},
	}
}

func envNames(env []corev1.EnvVar) string {
	var names []string
	for _, v := range env {
		val := v.Value
		if v.ValueFrom != nil {
			val = "<from>"
		}
		names = append(names, v.Name+"="+val)
	}
	return strings.Join(names, ",")
}

func volumeNames(vols []corev1.Volume) string {
	var names []string
	for _, v := range vols {
		names = append(names, v.Name)
	}
	return strings.Join(names, ",")
}

func mountNames(mounts []corev1.VolumeMount) string {
	var names []string
	for _, m := range mounts {
		names = append(names, m.Name+":"+m.MountPath)
	}
	return strings.Join(names, ",")
}

func TestBuildPod(t *testing.T) {
	deploymentEnv := "DC_DEPLOYMENT_NAME=web-3,DC_DEPLOYMENT_NAMESPACE=shop,OPENSHIFT_DEPLOYMENT_NAME=web-3,OPENSHIFT_DEPLOYMENT_NAMESPACE=shop"
	tests := []struct {
		name        string
		hook        *dcv1.LifecycleHook
		hookType    string
		strategy    *dcv1.DeploymentStrategy
		wantErr     string
		wantEnv     string
		wantVolumes string
		wantMounts  string
		wantRestart corev1.RestartPolicy
		wantLabels  map[string]string
		wantAnnots  map[string]string
	}{
		{
			name:        "hook env wins in place, new hook env appended, deployment env last",
			hook:        execHook(dcv1.LifecycleHookFailurePolicyAbort, "app", nil, corev1.EnvVar{Name: "NEW", Value: "n"}, corev1.EnvVar{Name: "B", Value: "hook-b"}),
			hookType:    Pre,
			wantEnv:     "A=base-a,SECRET=<from>,B=hook-b,NEW=n," + deploymentEnv,
			wantRestart: corev1.RestartPolicyNever,
		},
		{
			name:        "hook cannot override the deployment env",
			hook:        execHook(dcv1.LifecycleHookFailurePolicyAbort, "app", nil, corev1.EnvVar{Name: "DC_DEPLOYMENT_NAMESPACE", Value: "x"}),
			hookType:    Mid,
			wantEnv:     "A=base-a,SECRET=<from>,B=base-b," + deploymentEnv,
			wantRestart: corev1.RestartPolicyNever,
		},
		{
			name:        "listed volumes and their mounts; unknown names ignored",
			hook:        execHook(dcv1.LifecycleHookFailurePolicyIgnore, "app", []string{"secret", "missing", "data"}),
			hookType:    Post,
			wantEnv:     "A=base-a,SECRET=<from>,B=base-b," + deploymentEnv,
			wantVolumes: "data,secret",
			wantMounts:  "data:/data,secret:/secret",
			wantRestart: corev1.RestartPolicyNever,
		},
		{
			name:        "Retry restarts on failure",
			hook:        execHook(dcv1.LifecycleHookFailurePolicyRetry, "app", nil),
			hookType:    Pre,
			wantEnv:     "A=base-a,SECRET=<from>,B=base-b," + deploymentEnv,
			wantRestart: corev1.RestartPolicyOnFailure,
		},
		{
			name:     "strategy labels and annotations never override ours",
			hook:     execHook(dcv1.LifecycleHookFailurePolicyAbort, "app", nil),
			hookType: Pre,
			strategy: &dcv1.DeploymentStrategy{
				Labels:      map[string]string{"team": "a", dcv1.DeployerPodTypeLabel: "evil"},
				Annotations: map[string]string{"note": "x", dcv1.DeploymentAnnotation: "evil"},
			},
			wantEnv:     "A=base-a,SECRET=<from>,B=base-b," + deploymentEnv,
			wantRestart: corev1.RestartPolicyNever,
			wantLabels: map[string]string{
				dcv1.DeployerPodForDeploymentLabel: "web-3", dcv1.DeployerPodTypeLabel: "hook-pre", "team": "a",
			},
			wantAnnots: map[string]string{dcv1.DeploymentAnnotation: "web-3", "note": "x"},
		},
		{
			name:     "unknown container",
			hook:     execHook(dcv1.LifecycleHookFailurePolicyAbort, "nope", nil),
			hookType: Pre,
			wantErr:  `no container named "nope"`,
		},
		{
			name:     "no container name with two containers",
			hook:     execHook(dcv1.LifecycleHookFailurePolicyAbort, "", nil),
			hookType: Pre,
			wantErr:  `no container named ""`,
		},
		{
			name:     "tagImages only",
			hook:     &dcv1.LifecycleHook{FailurePolicy: dcv1.LifecycleHookFailurePolicyAbort},
			hookType: Post,
			wantErr:  "has no execNewPod",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rc := testRC()
			pod, err := BuildPod(tt.hook, rc, tt.strategy, tt.hookType, 300)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if pod.Name != "web-3-hook-"+tt.hookType || pod.Namespace != "shop" {
				t.Errorf("pod %s/%s", pod.Namespace, pod.Name)
			}
			if len(pod.Spec.Containers) != 1 {
				t.Fatalf("%d containers, want 1", len(pod.Spec.Containers))
			}
			c := pod.Spec.Containers[0]
			if c.Name != "lifecycle" || c.Image != "registry/web:3" || c.WorkingDir != "/srv" || c.ImagePullPolicy != corev1.PullIfNotPresent {
				t.Errorf("container %s image %s workingDir %s pull %s", c.Name, c.Image, c.WorkingDir, c.ImagePullPolicy)
			}
			if strings.Join(c.Command, " ") != "/bin/migrate --up" || c.Args != nil {
				t.Errorf("command %q args %q", c.Command, c.Args)
			}
			if got := envNames(c.Env); got != tt.wantEnv {
				t.Errorf("env\n got %s\nwant %s", got, tt.wantEnv)
			}
			if got := volumeNames(pod.Spec.Volumes); got != tt.wantVolumes {
				t.Errorf("volumes %q, want %q", got, tt.wantVolumes)
			}
			if got := mountNames(c.VolumeMounts); got != tt.wantMounts {
				t.Errorf("mounts %q, want %q", got, tt.wantMounts)
			}
			if pod.Spec.RestartPolicy != tt.wantRestart {
				t.Errorf("restartPolicy %s, want %s", pod.Spec.RestartPolicy, tt.wantRestart)
			}
			wantLabels := tt.wantLabels
			if wantLabels == nil {
				wantLabels = map[string]string{dcv1.DeployerPodForDeploymentLabel: "web-3", dcv1.DeployerPodTypeLabel: "hook-" + tt.hookType}
			}
			if !apiequality.Semantic.DeepEqual(pod.Labels, wantLabels) {
				t.Errorf("labels %v, want %v", pod.Labels, wantLabels)
			}
			wantAnnots := tt.wantAnnots
			if wantAnnots == nil {
				wantAnnots = map[string]string{dcv1.DeploymentAnnotation: "web-3"}
			}
			if !apiequality.Semantic.DeepEqual(pod.Annotations, wantAnnots) {
				t.Errorf("annotations %v, want %v", pod.Annotations, wantAnnots)
			}
		})
	}
}

func TestBuildPodInherits(t *testing.T) {
	rc := testRC()
	pod, err := BuildPod(execHook(dcv1.LifecycleHookFailurePolicyAbort, "app", nil), rc, nil, Pre, 120)
	if err != nil {
		t.Fatal(err)
	}
	base := rc.Spec.Template.Spec
	c := pod.Spec.Containers[0]
	checks := []struct {
		what string
		ok   bool
	}{
		{"valueFrom kept", c.Env[1].ValueFrom != nil && c.Env[1].ValueFrom.SecretKeyRef.Name == "db"},
		{"envFrom kept", len(c.EnvFrom) == 1 && c.EnvFrom[0].ConfigMapRef.Name == "settings"},
		{"resources", apiequality.Semantic.DeepEqual(c.Resources, base.Containers[0].Resources)},
		{"container security context", c.SecurityContext != nil && *c.SecurityContext.RunAsNonRoot},
		{"pod security context", pod.Spec.SecurityContext != nil && *pod.Spec.SecurityContext.RunAsUser == 1000},
		{"active deadline", pod.Spec.ActiveDeadlineSeconds != nil && *pod.Spec.ActiveDeadlineSeconds == 120},
		{"node selector", pod.Spec.NodeSelector["zone"] == "a"},
		{"tolerations", len(pod.Spec.Tolerations) == 1},
		{"pull secrets", len(pod.Spec.ImagePullSecrets) == 1 && pod.Spec.ImagePullSecrets[0].Name == "pull"},
		{"service account", pod.Spec.ServiceAccountName == "web"},
		{"no app labels", pod.Labels["app"] == "" && pod.Labels["deployment"] == ""},
		{"owner", len(pod.OwnerReferences) == 1 && pod.OwnerReferences[0].UID == "uid-web-3" &&
			pod.OwnerReferences[0].Kind == "ReplicationController" && pod.OwnerReferences[0].Controller == nil},
	}
	for _, c := range checks {
		if !c.ok {
			t.Errorf("%s: not as expected", c.what)
		}
	}
	// The pod must not share memory with the RC: the caller may change it.
	pod.Spec.Containers[0].Env[1].ValueFrom.SecretKeyRef.Name = "changed"
	pod.Spec.NodeSelector["zone"] = "changed"
	if base.Containers[0].Env[1].ValueFrom.SecretKeyRef.Name != "db" || base.NodeSelector["zone"] != "a" {
		t.Error("the hook pod shares memory with the RC's template")
	}
}

func TestBuildPodSingleContainerDefault(t *testing.T) {
	rc := testRC()
	rc.Spec.Template.Spec.Containers = rc.Spec.Template.Spec.Containers[:1]
	pod, err := BuildPod(execHook(dcv1.LifecycleHookFailurePolicyAbort, "", nil), rc, nil, Pre, 60)
	if err != nil {
		t.Fatal(err)
	}
	if pod.Spec.Containers[0].Image != "registry/web:3" {
		t.Errorf("image %s", pod.Spec.Containers[0].Image)
	}
}

func TestActiveDeadline(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		deadline time.Time
		want     int64
		wantErr  bool
	}{
		{deadline: now.Add(21600 * time.Second), want: 21600},
		{deadline: now.Add(90*time.Second + 900*time.Millisecond), want: 90},
		{deadline: now.Add(1 * time.Second), want: 1},
		{deadline: now.Add(999 * time.Millisecond), wantErr: true},
		{deadline: now.Add(-time.Minute), wantErr: true},
	}
	for _, tt := range tests {
		got, err := ActiveDeadline(tt.deadline, now)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("ActiveDeadline(now+%s) = %d, %v; want %d, error %t", tt.deadline.Sub(now), got, err, tt.want, tt.wantErr)
		}
	}
}

// TestBuildPodGetsWhatTheTemplateGrants: each setting of the template that
// limits or places its pods reaches the hook pod as it is, and a template
// that sets none gives a hook pod that sets none either.
func TestBuildPodGetsWhatTheTemplateGrants(t *testing.T) {
	tests := []struct {
		name string
		set  func(*corev1.PodSpec)
		got  func(*corev1.Pod) any
		want any
	}{
		{"automountServiceAccountToken", func(s *corev1.PodSpec) { s.AutomountServiceAccountToken = ptr.To(false) },
			func(p *corev1.Pod) any { return p.Spec.AutomountServiceAccountToken }, ptr.To(false)},
		{"runtimeClassName", func(s *corev1.PodSpec) { s.RuntimeClassName = ptr.To("gvisor") },
			func(p *corev1.Pod) any { return p.Spec.RuntimeClassName }, ptr.To("gvisor")},
		{"priorityClassName", func(s *corev1.PodSpec) { s.PriorityClassName = "low" },
			func(p *corev1.Pod) any { return p.Spec.PriorityClassName }, "low"},
		{"hostUsers", func(s *corev1.PodSpec) { s.HostUsers = ptr.To(false) },
			func(p *corev1.Pod) any { return p.Spec.HostUsers }, ptr.To(false)},
		{"affinity", func(s *corev1.PodSpec) {
			s.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a"}}}}}}}}
		}, func(p *corev1.Pod) any { return p.Spec.Affinity },
			&corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a"}}}}}}}}},
		{"pod securityContext", func(s *corev1.PodSpec) {
			s.SecurityContext = &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}}
		}, func(p *corev1.Pod) any { return p.Spec.SecurityContext },
			&corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}}},
		{"container securityContext", func(s *corev1.PodSpec) {
			s.Containers[0].SecurityContext = &corev1.SecurityContext{AllowPrivilegeEscalation: ptr.To(false), ReadOnlyRootFilesystem: ptr.To(true),
				Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}}
		}, func(p *corev1.Pod) any { return p.Spec.Containers[0].SecurityContext },
			&corev1.SecurityContext{AllowPrivilegeEscalation: ptr.To(false), ReadOnlyRootFilesystem: ptr.To(true),
				Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}}},
		// Host namespaces and ports: never, whatever the template says.
		{"hostNetwork", func(s *corev1.PodSpec) { s.HostNetwork = true },
			func(p *corev1.Pod) any { return p.Spec.HostNetwork }, false},
		{"hostPID and hostIPC", func(s *corev1.PodSpec) { s.HostPID, s.HostIPC = true, true },
			func(p *corev1.Pod) any { return p.Spec.HostPID || p.Spec.HostIPC }, false},
		{"hostPort", func(s *corev1.PodSpec) {
			s.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 80, HostPort: 80}}
		},
			func(p *corev1.Pod) any { return p.Spec.Containers[0].Ports }, []corev1.ContainerPort(nil)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bare := testRC()
			bare.Spec.Template.Spec.SecurityContext = nil
			bare.Spec.Template.Spec.Containers[0].SecurityContext = nil
			pod, err := BuildPod(execHook(dcv1.LifecycleHookFailurePolicyAbort, "app", nil), bare, nil, Pre, 60)
			if err != nil {
				t.Fatal(err)
			}
			if got := tt.got(pod); !apiequality.Semantic.DeepEqual(got, reflectZero(tt.want)) {
				t.Errorf("from a template without it: %#v, want none", got)
			}
			rc := bare.DeepCopy()
			tt.set(&rc.Spec.Template.Spec)
			pod, err = BuildPod(execHook(dcv1.LifecycleHookFailurePolicyAbort, "app", nil), rc, nil, Pre, 60)
			if err != nil {
				t.Fatal(err)
			}
			if got := tt.got(pod); !apiequality.Semantic.DeepEqual(got, tt.want) {
				t.Errorf("got %#v, want %#v", got, tt.want)
			}
		})
	}
}

// reflectZero returns the zero value of v's type.
func reflectZero(v any) any {
	return reflect.Zero(reflect.TypeOf(v)).Interface()
}
