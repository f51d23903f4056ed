package v1

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func template(containers ...string) *corev1.PodTemplateSpec {
	t := &corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}}}
	for _, c := range containers {
		t.Spec.Containers = append(t.Spec.Containers, corev1.Container{Name: c, Image: "img"})
	}
	return t
}

func intOrStr(s string) *intstr.IntOrString {
	v := intstr.Parse(s)
	return &v
}

func TestSetDefaults(t *testing.T) {
	cases := []struct {
		name  string
		in    DeploymentConfigSpec
		check func(t *testing.T, s DeploymentConfigSpec)
	}{{
		name: "empty spec gets Rolling, a ConfigChange trigger and history limit",
		in:   DeploymentConfigSpec{Template: template("web")},
		check: func(t *testing.T, s DeploymentConfigSpec) {
			p := s.Strategy.RollingParams
			if s.Strategy.Type != DeploymentStrategyTypeRolling || p == nil {
				t.Fatalf("strategy = %+v, want Rolling with params", s.Strategy)
			}
			if *p.IntervalSeconds != 1 || *p.UpdatePeriodSeconds != 1 || *p.TimeoutSeconds != 600 {
				t.Errorf("rolling timings = %d/%d/%d", *p.IntervalSeconds, *p.UpdatePeriodSeconds, *p.TimeoutSeconds)
			}
			if p.MaxSurge.String() != "25%" || p.MaxUnavailable.String() != "25%" {
				t.Errorf("surge/unavailable = %s/%s, want 25%%/25%%", p.MaxSurge, p.MaxUnavailable)
			}
			if *s.Strategy.ActiveDeadlineSeconds != 21600 || *s.RevisionHistoryLimit != 10 {
				t.Errorf("deadline/history = %d/%d", *s.Strategy.ActiveDeadlineSeconds, *s.RevisionHistoryLimit)
			}
			if len(s.Triggers) != 1 || s.Triggers[0].Type != DeploymentTriggerOnConfigChange {
				t.Errorf("triggers = %+v, want one ConfigChange", s.Triggers)
			}
			if s.Selector["app"] != "web" || len(s.Selector) != 1 {
				t.Errorf("selector = %v, want the template labels", s.Selector)
			}
		},
	}, {
		name: "explicit empty triggers stay empty",
		in:   DeploymentConfigSpec{Template: template("web"), Triggers: []DeploymentTriggerPolicy{}},
		check: func(t *testing.T, s DeploymentConfigSpec) {
			if s.Triggers == nil || len(s.Triggers) != 0 {
				t.Errorf("triggers = %#v, want an empty list", s.Triggers)
			}
		},
	}, {
		name: "Recreate gets recreateParams with a timeout and no rollingParams",
		in:   DeploymentConfigSpec{Template: template("web"), Strategy: DeploymentStrategy{Type: DeploymentStrategyTypeRecreate}},
		check: func(t *testing.T, s DeploymentConfigSpec) {
			if s.Strategy.RecreateParams == nil || *s.Strategy.RecreateParams.TimeoutSeconds != 600 || s.Strategy.RollingParams != nil {
				t.Errorf("strategy = %+v", s.Strategy)
			}
		},
	}, {
		name: "only maxSurge set: maxUnavailable is 0",
		in:   DeploymentConfigSpec{Template: template("web"), Strategy: DeploymentStrategy{RollingParams: &RollingDeploymentStrategyParams{MaxSurge: intOrStr("3")}}},
		check: func(t *testing.T, s DeploymentConfigSpec) {
			p := s.Strategy.RollingParams
			if p.MaxSurge.String() != "3" || p.MaxUnavailable.String() != "0" {
				t.Errorf("surge/unavailable = %s/%s, want 3/0", p.MaxSurge, p.MaxUnavailable)
			}
		},
	}, {
		name: "maxSurge 0 alone: maxUnavailable takes the default",
		in:   DeploymentConfigSpec{Template: template("web"), Strategy: DeploymentStrategy{RollingParams: &RollingDeploymentStrategyParams{MaxSurge: intOrStr("0%")}}},
		check: func(t *testing.T, s DeploymentConfigSpec) {
			if got := s.Strategy.RollingParams.MaxUnavailable.String(); got != "25%" {
				t.Errorf("maxUnavailable = %s, want 25%%", got)
			}
		},
	}, {
		name: "maxUnavailable 0 alone: maxSurge takes the default",
		in:   DeploymentConfigSpec{Template: template("web"), Strategy: DeploymentStrategy{RollingParams: &RollingDeploymentStrategyParams{MaxUnavailable: intOrStr("0")}}},
		check: func(t *testing.T, s DeploymentConfigSpec) {
			if got := s.Strategy.RollingParams.MaxSurge.String(); got != "25%" {
				t.Errorf("maxSurge = %s, want 25%%", got)
			}
		},
	}, {
		name: "hook containerName defaults to the only container",
		in: DeploymentConfigSpec{Template: template("web"), Strategy: DeploymentStrategy{RollingParams: &RollingDeploymentStrategyParams{
			Pre: &LifecycleHook{FailurePolicy: LifecycleHookFailurePolicyAbort, ExecNewPod: &ExecNewPodHook{Command: []string{"true"}}},
		}}},
		check: func(t *testing.T, s DeploymentConfigSpec) {
			if got := s.Strategy.RollingParams.Pre.ExecNewPod.ContainerName; got != "web" {
				t.Errorf("containerName = %q, want web", got)
			}
		},
	}, {
		name: "hook containerName stays empty with two containers",
		in: DeploymentConfigSpec{Template: template("web", "side"), Strategy: DeploymentStrategy{Type: DeploymentStrategyTypeRecreate, RecreateParams: &RecreateDeploymentStrategyParams{
			Mid: &LifecycleHook{FailurePolicy: LifecycleHookFailurePolicyAbort, ExecNewPod: &ExecNewPodHook{Command: []string{"true"}}},
		}}},
		check: func(t *testing.T, s DeploymentConfigSpec) {
			if got := s.Strategy.RecreateParams.Mid.ExecNewPod.ContainerName; got != "" {
				t.Errorf("containerName = %q, want empty", got)
			}
		},
	}, {
		name: "container ports without a protocol are TCP, as the CRD's schema defaults them",
		in: func() DeploymentConfigSpec {
			tmpl := template("web")
			tmpl.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 8080}, {ContainerPort: 53, Protocol: corev1.ProtocolUDP}}
			tmpl.Spec.InitContainers = []corev1.Container{{Name: "init", Image: "img", Ports: []corev1.ContainerPort{{ContainerPort: 9000}}}}
			return DeploymentConfigSpec{Template: tmpl}
		}(),
		check: func(t *testing.T, s DeploymentConfigSpec) {
			ports := s.Template.Spec.Containers[0].Ports
			if ports[0].Protocol != corev1.ProtocolTCP || ports[1].Protocol != corev1.ProtocolUDP {
				t.Errorf("container ports = %+v, want TCP then UDP", ports)
			}
			if got := s.Template.Spec.InitContainers[0].Ports[0].Protocol; got != corev1.ProtocolTCP {
				t.Errorf("init container port protocol = %q, want TCP", got)
			}
		},
	}, {
		name: "a selector the user set is kept",
		in:   DeploymentConfigSpec{Template: template("web"), Selector: map[string]string{"app": "web"}},
		check: func(t *testing.T, s DeploymentConfigSpec) {
			if len(s.Selector) != 1 {
				t.Errorf("selector = %v", s.Selector)
			}
		},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dc := &DeploymentConfig{Spec: tc.in}
			SetDefaults(dc)
			tc.check(t, dc.Spec)
			again := dc.DeepCopy()
			SetDefaults(again)
			if !equality.Semantic.DeepEqual(dc, again) {
				t.Errorf("SetDefaults is not idempotent")
			}
		})
	}
}

func TestScaleSelector(t *testing.T) {
	dc := &DeploymentConfig{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: DeploymentConfigSpec{Template: template("web")}}
	if got, want := dc.ScaleSelector(), "app=web,deploymentconfig=web"; got != want {
		t.Errorf("ScaleSelector() = %q, want %q", got, want)
	}
}
