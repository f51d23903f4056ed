package nodebench

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
)

// inControllerReport has 4 rollouts of each system, the DC's run by
// dc-controller.
func inControllerReport() *Report {
	r := &Report{
		Started:  time.Date(2026, 12, 2, 15, 0, 0, 0, time.UTC),
		Duration: 90,
		Settings: Settings{Rollouts: 4, Replicas: 3, MaxSurge: "25%", MaxUnavailable: "25%",
			UpdatePeriodSeconds: 1, IntervalSeconds: 1, PrescribedPauseSeconds: 5, DeployerMode: dcv1.DeployerModeControllerWhenPossible},
	}
	for i, v := range []struct{ dc, dep float64 }{{7, 3}, {8, 4}, {9, 5}, {10, 6}} {
		r.Samples = append(r.Samples,
			Sample{System: SystemDC, Iteration: i + 1, Complete: v.dc, InController: true},
			Sample{System: SystemDeployment, Iteration: i + 1, Complete: v.dep})
	}
	return r
}

// TestSummarizeInController: without a deployer pod there is no pod row,
// breakdown or memory; the rest is judged against the Deployment alone.
func TestSummarizeInController(t *testing.T) {
	s := inControllerReport().Summarize()
	if running := s.Rows[0].DC; running.Count != 0 {
		t.Errorf("deployer pod Running row has %d samples, want none", running.Count)
	}
	if complete := s.Rows[1]; complete.DC.P50 != 8 || complete.Deployment.P50 != 4 || complete.RatioP50 != 2 {
		t.Errorf("Complete row = %+v, want p50 8 vs 4 (ratio 2)", complete)
	}
	for _, row := range s.Breakdown {
		if row.DC.Count != 0 {
			t.Errorf("breakdown row %q has %d samples, want none", row.Measure, row.DC.Count)
		}
	}
	if s.PodPeakMiB.Count != 0 {
		t.Errorf("deployer pod memory has %d samples, want none", s.PodPeakMiB.Count)
	}
	// Rest 2, 3, 4, 5 against the Deployment's 3, 4, 5, 6: p50 3 ≤ 4 and
	// p99 5 ≤ 6.
	if s.Rest.P50 != 3 || s.Rest.P99 != 5 || !s.RestWithinDeployment || !s.RestMet {
		t.Errorf("rest %+v, within the Deployment's %v, the full-cost targets' %v; want p50 3, p99 5, both met", s.Rest, s.RestWithinDeployment, s.RestMet)
	}
}

// TestRestWithinDeploymentInPodMode: the deployer-mode targets' row gives a deployer pod
// no allowance for its start, unlike the full-cost targets'.
func TestRestWithinDeploymentInPodMode(t *testing.T) {
	r := sampleReport()
	for i := range r.Samples {
		if r.Samples[i].System == SystemDC && r.Samples[i].Err == "" {
			r.Samples[i].Complete -= 4
		}
	}
	s := r.Summarize()
	// Complete 4, 6, 8, 16 less the 5 s prescribed: rest -1, 1, 3, 11.
	// Against the Deployment's p50 5 and p99 8, the p99 fails; the full-cost targets'
	// limits add the deployer pod's start (2, 4): 7 and 12, which hold.
	if s.RestWithinDeployment || !s.RestMet {
		t.Errorf("rest %+v: within the Deployment %v (want false), the full-cost targets' %v (want true)", s.Rest, s.RestWithinDeployment, s.RestMet)
	}
}

// TestWriteMarkdownInController: the report says which mode ran, has no
// deployer pod parts and gives the deployer-mode targets' row.
func TestWriteMarkdownInController(t *testing.T) {
	var b bytes.Buffer
	if err := inControllerReport().WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	for _, want := range []string{
		"Deployer mode: **controller-when-possible** (dc-controller ran each DC rollout itself",
		"| trigger → Complete (s) | 8.00 | 10.00 | 4.00 | 6.00 | 2.00 | 1.67 | 4 / 4 |",
		"No deployer pod to split the DC's time at",
		"The deployer-mode target (controller-when-possible mode): the same rest (p50 3.00 s, p99 5.00 s) ≤ the Deployment's trigger → Complete alone: 4.00 s, 6.00 s. Met: yes.",
		"None: no deployer pod ran.",
		"| 2 | DeploymentConfig |  |  |  | 8.00 |  |  |",
		"| real node | 1 | DC, controller mode | template change | — | — | 8.00 s | 10.00 s | 4 (first pod: 0) |",
		"| deployer mode | controller-when-possible (dc-controller's --deployer-mode) |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
	for _, unwanted := range []string{"The full-cost target", "Where the DC's time goes", "| cgroup v1 figure"} {
		if strings.Contains(md, unwanted) {
			t.Errorf("an in-controller report has %q:\n%s", unwanted, md)
		}
	}
}

// TestWriteMarkdownPodModeSaysSo: a pod-mode report, and one from before
// the mode existed, say pod mode and keep the deployer pod's parts.
func TestWriteMarkdownPodModeSaysSo(t *testing.T) {
	for _, mode := range []string{"", dcv1.DeployerModePod} {
		r := sampleReport()
		r.Settings.DeployerMode = mode
		var b bytes.Buffer
		if err := r.WriteMarkdown(&b); err != nil {
			t.Fatal(err)
		}
		md := b.String()
		for _, want := range []string{"Deployer mode: **pod**", "Where the DC's time goes", "The full-cost target", "The deployer-mode target (pod mode)", "| deployer mode | pod (dc-controller's --deployer-mode) |"} {
			if !strings.Contains(md, want) {
				t.Errorf("mode %q: report lacks %q", mode, want)
			}
		}
	}
}

// TestControllerArgs: pod mode, dc-controller's default, adds nothing.
func TestControllerArgs(t *testing.T) {
	if got := controllerArgs(dcv1.DeployerModePod); got != nil {
		t.Errorf("pod mode: %q, want none", got)
	}
	want := []string{"--deployer-mode=controller-when-possible"}
	if got := controllerArgs(dcv1.DeployerModeControllerWhenPossible); !slices.Equal(got, want) {
		t.Errorf("controller mode: %q, want %q", got, want)
	}
}

// TestInControllerDone: Complete ends the sample only when the controller
// ran the rollout; Failed ends it with the reason; other phases go on.
func TestInControllerDone(t *testing.T) {
	rc := func(phase dcv1.DeploymentPhase, extra map[string]string) *corev1.ReplicationController {
		a := map[string]string{dcv1.DeploymentPhaseAnnotation: string(phase)}
		for k, v := range extra {
			a[k] = v
		}
		return &corev1.ReplicationController{ObjectMeta: metav1.ObjectMeta{Annotations: a}}
	}
	inController := deployment.NewProgress("web-dc-2")
	inController.Runner = deployment.Runner{Kind: deployment.RunnerController, Holder: "dc-controller"}
	runner := map[string]string{dcv1.RolloutProgressAnnotation: inController.Encode()}
	cases := []struct {
		name    string
		rc      *corev1.ReplicationController
		done    bool
		errLike string
	}{
		{"running", rc(dcv1.DeploymentPhaseRunning, runner), false, ""},
		{"complete in the controller", rc(dcv1.DeploymentPhaseComplete, runner), true, ""},
		{"complete by a pod", rc(dcv1.DeploymentPhaseComplete, map[string]string{dcv1.RolloutProgressAnnotation: deployment.NewProgress("web-dc-2").Encode()}), true, "did not run in the controller"},
		{"failed", rc(dcv1.DeploymentPhaseFailed, map[string]string{dcv1.DeploymentStatusReasonAnnotation: "timed out"}), true, "failed: timed out"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			done, err := inControllerDone(c.rc, "web-dc-2")
			if done != c.done {
				t.Errorf("done = %v, want %v", done, c.done)
			}
			switch {
			case c.errLike == "" && err != nil:
				t.Errorf("error %v, want none", err)
			case c.errLike != "" && (err == nil || !strings.Contains(err.Error(), c.errLike)):
				t.Errorf("error %v, want one saying %q", err, c.errLike)
			}
		})
	}
}
