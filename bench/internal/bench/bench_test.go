package bench

import (
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/deployconfig/deployconfig/bench/internal/bench/audit"
	"github.com/deployconfig/deployconfig/bench/internal/bench/procstat"
	"github.com/deployconfig/deployconfig/bench/internal/bench/report"
)

func TestDeploymentComplete(t *testing.T) {
	three := int32(3)
	tests := []struct {
		name   string
		gen    int64
		status appsv1.DeploymentStatus
		want   bool
	}{
		{"done", 2, appsv1.DeploymentStatus{ObservedGeneration: 2, Replicas: 3, UpdatedReplicas: 3, AvailableReplicas: 3}, true},
		{"change not seen yet", 2, appsv1.DeploymentStatus{ObservedGeneration: 1, Replicas: 3, UpdatedReplicas: 3, AvailableReplicas: 3}, false},
		{"old pods left", 2, appsv1.DeploymentStatus{ObservedGeneration: 2, Replicas: 4, UpdatedReplicas: 3, AvailableReplicas: 3}, false},
		{"not all available", 2, appsv1.DeploymentStatus{ObservedGeneration: 2, Replicas: 3, UpdatedReplicas: 3, AvailableReplicas: 2}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Generation: tt.gen}, Spec: appsv1.DeploymentSpec{Replicas: &three}, Status: tt.status}
			if got := deploymentComplete(d); got != tt.want {
				t.Errorf("deploymentComplete = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestTracker(t *testing.T) {
	tr := newTracker()
	tr.expect(2)
	tr.observe("a", 1, false) // an older version: ignored
	tr.observe("a", 2, false)
	tr.observe("b", 2, true)
	tr.observe("b", 2, false) // already ended
	if n, all := tr.ended("a", "b", "c"); n != 2 || all {
		t.Errorf("ended = %d, %v; want 2, false", n, all)
	}
	done, failed := tr.results()
	if len(done) != 1 || len(failed) != 1 {
		t.Errorf("done %v, failed %v", done, failed)
	}
	tr.expect(3)
	if n, _ := tr.ended("a", "b"); n != 0 {
		t.Errorf("a new phase starts empty, got %d ended", n)
	}
}

func TestCurve(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	done := map[string]time.Time{
		"b": start.Add(3 * time.Second),
		"a": start.Add(time.Second),
		"c": start.Add(2 * time.Second),
	}
	want := []report.Point{{Seconds: 1, Count: 1}, {Seconds: 2, Count: 2}, {Seconds: 3, Count: 3}}
	if got := curve(start, done); !reflect.DeepEqual(got, want) {
		t.Errorf("curve = %v, want %v", got, want)
	}
}

func TestPhaseSeconds(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p := &phaseRecord{Start: start,
		Done:   map[string]time.Time{"a": start.Add(5 * time.Second)},
		Failed: map[string]time.Time{"b": start.Add(7 * time.Second)}}
	if got := p.Seconds(); got != 7 {
		t.Errorf("Seconds = %v, want 7 (a failed rollout ends the phase too)", got)
	}
	if got := (&phaseRecord{Start: start}).Seconds(); got != 0 {
		t.Errorf("empty phase: %v", got)
	}
}

func TestSameTemplateForBothSystems(t *testing.T) {
	dc := newDC("ns", "app-00001", 3)
	dep := newDeployment("ns", "app-00001", 3)
	if !reflect.DeepEqual(*dc.Spec.Template, dep.Spec.Template) {
		t.Errorf("templates differ:\nDC:         %+v\nDeployment: %+v", dc.Spec.Template, dep.Spec.Template)
	}
	if *dc.Spec.Strategy.RollingParams.MaxSurge != *dep.Spec.Strategy.RollingUpdate.MaxSurge ||
		*dc.Spec.Strategy.RollingParams.MaxUnavailable != *dep.Spec.Strategy.RollingUpdate.MaxUnavailable {
		t.Error("rolling parameters differ")
	}
	data, err := templateChange(2).Data(nil)
	if err != nil || string(data) != `{"spec":{"template":{"metadata":{"annotations":{"bench.deployconfig.io/revision":"2"}}}}}` {
		t.Errorf("template change patch = %s, %v", data, err)
	}
}

func TestOptions(t *testing.T) {
	o := DefaultOptions()
	o.Root, o.BinDir, o.OutDir = "/r", "/r/bin", "/r/out"
	o.Sizes = []int{1000, 200}
	if err := o.validate(); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(o.Sizes, []int{200, 1000}) || !reflect.DeepEqual(o.Scenarios, AllScenarios()) {
		t.Errorf("validate: sizes %v, scenarios %v", o.Sizes, o.Scenarios)
	}
	bad := o
	bad.Scenarios = []string{"nope"}
	if err := bad.validate(); err == nil {
		t.Error("unknown scenario accepted")
	}
	bad = o
	bad.ProbeInterval = 0
	if err := bad.validate(); err == nil {
		t.Error("probes without an interval accepted")
	}
	bad.Probes = 0
	if err := bad.validate(); err != nil {
		t.Errorf("no probes need no interval: %v", err)
	}
	for _, tc := range []struct {
		sizes, revisions []int
		wantErr          string
		wantAt           []int
	}{
		{sizes: []int{5000, 20000}, revisions: []int{10}, wantAt: []int{10, 10}},
		{sizes: []int{5000, 20000}, revisions: []int{10, 3}, wantAt: []int{10, 3}},
		{sizes: []int{5000, 20000}, revisions: []int{10, 3, 2}, wantErr: "one per footprint size (2), got 3"},
		{sizes: []int{5000, 20000}, revisions: []int{0}, wantErr: "at least 1, got 0"},
		{sizes: []int{20000, 5000}, revisions: []int{10, 3}, wantErr: "increasing order"},
	} {
		r := o
		r.FootprintSizes, r.FootprintRevisions = tc.sizes, tc.revisions
		err := r.validate()
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("revisions %v at %v: error %v, want one saying %q", tc.revisions, tc.sizes, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Fatalf("revisions %v at %v: %v", tc.revisions, tc.sizes, err)
		}
		for i, want := range tc.wantAt {
			if got := r.RevisionsAt(i); got != want {
				t.Errorf("revisions %v: RevisionsAt(%d) = %d, want %d", tc.revisions, i, got, want)
			}
		}
	}
	if args := o.kcmArgs(); len(args) != 0 {
		t.Errorf("kube-controller-manager's defaults pass arguments: %v", args)
	}
	k := o
	k.KCMQPS, k.KCMBurst = 100, 150
	if args := strings.Join(k.kcmArgs(), " "); args != "kube-controller-manager=kube-api-qps=100 kube-controller-manager=kube-api-burst=150" {
		t.Errorf("kcm args %q", args)
	}
	q := QuickOptions(DefaultOptions())
	if !q.Quick || q.Sizes[0] >= 200 || q.FootprintSizes[len(q.FootprintSizes)-1] >= 1000 {
		t.Errorf("quick options are not small: %+v", q)
	}
}

func TestTrackerStarted(t *testing.T) {
	tests := []struct {
		name      string
		events    func(tr *tracker)
		wantCount int
		wantAll   bool
	}{
		{"nothing seen", func(*tracker) {}, 0, false},
		{"an older version's start is ignored", func(tr *tracker) { tr.begin("a", 1) }, 0, false},
		{"started", func(tr *tracker) { tr.begin("a", 2); tr.begin("a", 2) }, 1, false},
		{"ended without a start seen", func(tr *tracker) { tr.begin("a", 2); tr.observe("b", 2, true) }, 2, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := newTracker()
			tr.expect(2)
			tt.events(tr)
			if n, all := tr.begun("a", "b"); n != tt.wantCount || all != tt.wantAll {
				t.Errorf("begun = %d, %v; want %d, %v", n, all, tt.wantCount, tt.wantAll)
			}
		})
	}
}

func TestTrackerWaitStarted(t *testing.T) {
	tr := newTracker()
	tr.expect(1)
	errs := make(chan error, 1)
	go func() { errs <- tr.waitStarted(t.Context(), time.Minute, io.Discard, "test", "a", "b") }()
	tr.begin("a", 1)
	tr.observe("b", 1, false)
	select {
	case err := <-errs:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Minute):
		t.Fatal("waitStarted did not return once both had started")
	}
	if err := tr.waitStarted(t.Context(), time.Millisecond, io.Discard, "test", "c"); err == nil {
		t.Error("waitStarted for a rollout that never starts returned no error")
	}
}

func TestProbeNames(t *testing.T) {
	first, second := probeNames(0, 2), probeNames(1, 2)
	if !reflect.DeepEqual(first, []string{"probe1-00000", "probe1-00001"}) || !reflect.DeepEqual(second, []string{"probe2-00000", "probe2-00001"}) {
		t.Errorf("probe names %v, %v", first, second)
	}
	for _, name := range append(first, second...) {
		if slices.Contains(objectNames(100), name) {
			t.Errorf("probe %s has a throughput object's name", name)
		}
	}
}

// auditEvent is a successful request as the audit log records it.
func auditEvent(agent, verb, resource, namespace, name string, at time.Time) audit.Event {
	return audit.Event{Stage: "ResponseComplete", Verb: verb, UserAgent: agent, Completed: at,
		ObjectRef: &audit.ObjectRef{Resource: resource, Namespace: namespace, Name: name}, ResponseStatus: &audit.Status{Code: 200}}
}

// statusWrite is the pod runtime's write of a pod's status.
func statusWrite(namespace, name string, at time.Time) audit.Event {
	e := auditEvent("dc-local-runtime", "update", "pods", namespace, name, at)
	e.ObjectRef.Subresource = "status"
	return e
}

func TestLatencyOfProbes(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return start.Add(time.Duration(s * float64(time.Second))) }
	l := newLedger()
	for _, e := range []audit.Event{
		auditEvent("dc-bench", "patch", "deploymentconfigs", "probes", "probe1-00000", at(1)),
		auditEvent("dc-controller", "create", "pods", "probes", "probe1-00000-2-deploy", at(1.5)),
		auditEvent("dc-bench", "patch", "deploymentconfigs", "probes", "probe1-00001", at(2)),
		auditEvent("dc-controller", "create", "pods", "probes", "probe1-00001-2-deploy", at(2.25)),
		// Another namespace's pod of the same name is not the probe's.
		auditEvent("dc-controller", "create", "pods", "elsewhere", "probe1-00001-2-deploy", at(2.1)),
	} {
		l.add(e)
	}
	p := &phaseRecord{System: report.SystemDC, Mode: ModePod, Phase: probePhase(report.PhaseChange), N: 2, Namespace: "probes", Version: probeVersion,
		TriggerVerb: "patch", Names: []string{"probe1-00000", "probe1-00001"}, InFlight: 200, Probe: true, StillInFlight: 190,
		Load:  probeLoad(200, 190, report.PhaseChange),
		Done:  map[string]time.Time{"probe1-00000": at(11), "probe1-00001": at(22)},
		Start: at(1)}
	got := (&runner{}).latencyOf(l, p)
	if !got.Probes || got.InFlight != 200 || got.StillInFlight != 190 {
		t.Errorf("probe row %+v", got)
	}
	if got.ToDeployerPod.Count != 2 || got.ToDeployerPod.Max != 0.5 || got.ToDeployerPod.Min != 0.25 {
		t.Errorf("to deployer pod %+v, want 0.25 and 0.5", got.ToDeployerPod)
	}
	if got.ToComplete.Max != 20 || got.ToComplete.Min != 10 {
		t.Errorf("to complete %+v, want 10 and 20", got.ToComplete)
	}
	if want := "probes while 200 in flight (template change; ≥ 190 still in flight at each probe)"; got.Load != want {
		t.Errorf("load %q, want %q", got.Load, want)
	}
}

func TestFloorsCountProbes(t *testing.T) {
	tests := []struct {
		name       string
		probes     *phaseRecord
		wantPods   int
		wantProbes int
	}{
		{"no probes", nil, 200 * 3 * 2, 0},
		{"probes of the phase", &phaseRecord{System: report.SystemDC, Mode: ModePod, Phase: probePhase(report.PhaseChange), InFlight: 200, Probe: true, Repeat: 1,
			Triggers: map[string]time.Time{"probe2-00000": {}, "probe2-00001": {}}}, 200*3*2 + 2*3*2, 2},
		{"probes of another size", &phaseRecord{System: report.SystemDC, Mode: ModePod, Phase: probePhase(report.PhaseChange), InFlight: 400, Probe: true, Repeat: 1,
			Triggers: map[string]time.Time{"probe2-00000": {}}}, 200 * 3 * 2, 0},
		{"probes of another repeat", &phaseRecord{System: report.SystemDC, Mode: ModePod, Phase: probePhase(report.PhaseChange), InFlight: 200, Probe: true, Repeat: 2,
			Triggers: map[string]time.Time{"probe2-00000": {}}}, 200 * 3 * 2, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Two repeats, of which only the first ran.
			r := &runner{o: Options{Sizes: []int{200}, Replicas: 3, Repeat: 2}}
			r.records = []*phaseRecord{{System: report.SystemDC, Mode: ModePod, Phase: report.PhaseChange, N: 200, Repeat: 1}}
			if tt.probes != nil {
				r.records = append(r.records, tt.probes)
			}
			floors := r.floors(newLedger(make([]audit.Window, len(r.records))...))
			if len(floors) != 1 || floors[0].PodWrites != tt.wantPods || floors[0].Probes != tt.wantProbes || floors[0].Repeat != 1 {
				t.Errorf("floors %+v, want %d pod writes with %d probes", floors, tt.wantPods, tt.wantProbes)
			}
		})
	}
}

func TestRepeatOrder(t *testing.T) {
	both := []system{dcSystem(), deploymentSystem()}
	var got []string
	for k := 1; k <= 4; k++ {
		order := repeatOrder(both, k)
		got = append(got, order[0].name+","+order[1].name)
	}
	dcFirst := report.SystemDC + "," + report.SystemDeployment
	depFirst := report.SystemDeployment + "," + report.SystemDC
	if want := []string{dcFirst, depFirst, dcFirst, depFirst}; !slices.Equal(got, want) {
		t.Errorf("orders %v, want %v", got, want)
	}
	if both[0].name != report.SystemDC {
		t.Errorf("repeatOrder changed its input: %s first", both[0].name)
	}
	if one := repeatOrder(both[:1], 2); len(one) != 1 || one[0].name != report.SystemDC {
		t.Errorf("one system: %v", one)
	}
}

func TestLatencyAtIdleSplit(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return start.Add(time.Duration(s * float64(time.Second))) }
	l := newLedger()
	for _, e := range []audit.Event{
		auditEvent("dc-bench", "patch", "deploymentconfigs", "lat", "dc-00000", at(1)),
		auditEvent("dc-controller", "create", "pods", "lat", "dc-00000-2-deploy", at(1.1)),
		statusWrite("lat", "dc-00000-2-deploy", at(1.4)),
		// A later status write (Running, Succeeded) is not the start.
		statusWrite("lat", "dc-00000-2-deploy", at(3)),
	} {
		l.add(e)
	}
	p := &phaseRecord{System: report.SystemDC, Phase: "idle", N: 1, Namespace: "lat", Version: 2, TriggerVerb: "patch",
		Names: []string{"dc-00000"}, InFlight: 1, Load: "idle (one at a time)", Done: map[string]time.Time{"dc-00000": at(7.5)}}
	got := (&runner{o: Options{Replicas: 3}}).latencyOf(l, p)
	// 3 replicas, maxSurge 25% (1), maxUnavailable 25% (0): three
	// scale-ups with updatePeriodSeconds 1 (intervalSeconds is never slept).
	if got.PrescribedSeconds != 3 {
		t.Errorf("prescribed %v s, want 3", got.PrescribedSeconds)
	}
	if got.ToComplete.P50 != 6.5 || got.Rest.P50 != 3.5 {
		t.Errorf("to complete %v, rest %v; want 6.5 and 3.5", got.ToComplete.P50, got.Rest.P50)
	}
	if got.ToDeployerStart.Count != 1 || math.Abs(got.ToDeployerStart.P50-0.4) > 1e-9 {
		t.Errorf("to deployer start %+v, want 0.4 s", got.ToDeployerStart)
	}
	dep := &phaseRecord{System: report.SystemDeployment, Phase: "idle", N: 1, Namespace: "lat", Version: 2, TriggerVerb: "patch",
		Names: []string{"dc-00000"}, InFlight: 1, Done: map[string]time.Time{"dc-00000": at(2)}, Triggers: map[string]time.Time{"dc-00000": at(1)}}
	if got := (&runner{o: Options{Replicas: 3}}).latencyOf(l, dep); got.PrescribedSeconds != 0 || got.Rest.Count != 0 {
		t.Errorf("a Deployment has no prescribed pauses: %+v", got)
	}
}

func TestCorpusTemplates(t *testing.T) {
	dir := compatDir(filepath.Join("..", "..", ".."))
	templates, err := corpusTemplates(dir)
	if err != nil {
		t.Fatal(err)
	}
	// The corpus has more than 20 DeploymentConfigs (the compat tests
	// check that); every template kept has containers with images.
	if len(templates) < 20 {
		t.Errorf("%d templates from %s, want at least 20", len(templates), dir)
	}
	multi := 0
	for i, tm := range templates {
		if len(tm.Spec.Containers) > 1 {
			multi++
		}
		for _, c := range tm.Spec.Containers {
			if c.Image == "" || c.Image == " " {
				t.Errorf("template %d: container %s has no image", i, c.Name)
			}
		}
	}
	if multi == 0 {
		t.Error("no template with several containers: the corpus's weight is lost")
	}
	if _, err := corpusTemplates(t.TempDir()); err == nil || !strings.Contains(err.Error(), "DC_COMPAT_DIR") {
		t.Errorf("an empty corpus: err = %v, want one naming DC_COMPAT_DIR", err)
	}
}

func TestWithTemplateAndReferenced(t *testing.T) {
	dc := newDC("ns", "dc-00001", 3)
	corpus := corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "theirs", "tier": "web"}},
		Spec: corev1.PodSpec{
			ServiceAccountName: "grafana",
			Containers: []corev1.Container{{Name: "web", Image: "example/web",
				EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}}}},
				Env:     []corev1.EnvVar{{Name: "PW", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "db"}, Key: "pw"}}}}}},
			Volumes: []corev1.Volume{
				{Name: "a", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}}}},
				{Name: "b", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "tls"}}},
				{Name: "c", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}},
			},
		},
	}
	ours := maps.Clone(dc.Spec.Template.Labels)
	withTemplate(dc, corpus)
	if dc.Spec.Template.Spec.Containers[0].Name != "web" || len(dc.Spec.Template.Spec.Volumes) != 3 {
		t.Errorf("template spec not the corpus's: %+v", dc.Spec.Template.Spec)
	}
	for k, v := range ours {
		if dc.Spec.Template.Labels[k] != v {
			t.Errorf("label %s = %q, want the benchmark's %q (the selector's)", k, dc.Spec.Template.Labels[k], v)
		}
	}
	if dc.Spec.Template.Labels["tier"] != "web" {
		t.Errorf("the corpus's own label was dropped: %v", dc.Spec.Template.Labels)
	}
	cms, secrets, accounts := referenced(dc.Spec.Template.Spec)
	if !slices.Equal(cms, []string{"cfg"}) || !slices.Equal(secrets, []string{"tls", "db"}) || !slices.Equal(accounts, []string{"grafana"}) {
		t.Errorf("referenced %v %v %v, want [cfg], [tls db] and [grafana]", cms, secrets, accounts)
	}
}

// A saved report's Markdown is written again with this build's targets:
// a row added since the run says met or not from the saved figures.
func TestRenderRewritesTheMarkdown(t *testing.T) {
	dir := t.TempDir()
	rep := &report.Report{
		Started: time.Date(2026, 12, 6, 6, 0, 0, 0, time.UTC),
		Footprint: []report.Footprint{
			{Mode: ModePod, DCs: 20000, Usage: procstat.Usage{PeakRSSBytes: 150 << 20}},
			{Mode: ModeController, DCs: 20000, Usage: procstat.Usage{PeakRSSBytes: 230 << 20}},
		},
	}
	path := filepath.Join(dir, "2026-12-06-x.json")
	if err := rep.WriteJSON(path); err != nil {
		t.Fatal(err)
	}
	out, err := Render(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "2026-12-06-x.md"); out != want {
		t.Errorf("rendered to %s, want %s", out, want)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| pod mode: dc-controller peak RSS | ≤ 200 MB at 20000 DCs | 150.0 MB at 20000 DCs | yes |",
		"| controller mode: dc-controller peak RSS | ≤ 200 MB at 20000 DCs | 230.0 MB at 20000 DCs | **no** |",
		"| 20000 | controller |",
	} {
		if !strings.Contains(string(data), want) {
			t.Errorf("rendered report lacks %q:\n%s", want, data)
		}
	}
	if _, err := Render(filepath.Join(dir, "missing.json")); err == nil || !strings.Contains(err.Error(), "missing.json") {
		t.Errorf("rendering a missing report: %v, want an error naming it", err)
	}
}

func TestCPUSince(t *testing.T) {
	cases := []struct {
		name          string
		before, after map[string]float64
		want          map[string]float64
	}{
		{"each process's use", map[string]float64{"etcd": 1, "kube-apiserver": 10}, map[string]float64{"etcd": 3, "kube-apiserver": 25}, map[string]float64{"etcd": 2, "kube-apiserver": 15}},
		{"a process read once is left out", map[string]float64{"etcd": 1}, map[string]float64{"etcd": 3, "kube-apiserver": 25}, map[string]float64{"etcd": 2}},
		{"a restarted process is left out", map[string]float64{"etcd": 5}, map[string]float64{"etcd": 1}, nil},
		{"nothing read", nil, nil, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := cpuSince(tc.before, tc.after); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("cpuSince = %v, want %v", got, tc.want)
			}
		})
	}
}
