package dashboard

import (
	"bufio"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
)

// fleetChange is the change the fleet's rollouts belong to.
const fleetChange = "ConfigData ConfigMap/shared"

// fleetUnderWaves is a policy of shop, fleet, over web (whose rollout #2
// runs in wave 1 of a ConfigMap's change) and api and db, which wait for
// that wave; its breaker counts one failure and the windows are closed
// until the next one.
func fleetUnderWaves() []any {
	size := func(v string) *intstr.IntOrString { s := intstr.Parse(v); return &s }
	since := metav1.NewTime(testNow.Add(-time.Minute))
	next := metav1.NewTime(testNow.Add(2 * time.Hour))
	policy := &dcv1.RolloutPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "fleet", Namespace: "shop"},
		Spec: dcv1.RolloutPolicySpec{
			Selector:      metav1.LabelSelector{MatchLabels: map[string]string{"fleet": "a"}},
			MaxConcurrent: size("2"),
			Waves:         []dcv1.RolloutWave{{Size: size("1"), Soak: &metav1.Duration{Duration: 10 * time.Minute}}, {Size: size("50%")}, {}},
			TimeZone:      "Europe/Berlin",
			Windows:       []dcv1.RolloutWindow{{Days: []dcv1.Weekday{"Monday", "Tuesday"}, Start: "09:00", End: "17:00"}},
			Freezes: []dcv1.RolloutFreeze{{Name: "year-end", Start: metav1.NewTime(time.Date(2026, 12, 21, 0, 0, 0, 0, time.UTC)),
				End: metav1.NewTime(time.Date(2027, 1, 4, 0, 0, 0, 0, time.UTC))}},
			CircuitBreaker: &dcv1.RolloutCircuitBreaker{MaxFailures: intstr.FromInt32(3)},
		},
		Status: dcv1.RolloutPolicyStatus{
			Selected: 3, Running: 1, Waiting: 2,
			Line: []dcv1.RolloutPolicyWaiter{
				{Name: "api", Version: 4, Change: fleetChange, Since: since, Reason: dcv1.AwaitingWaveReason},
				{Name: "db", Version: 7, Change: fleetChange, Since: since, Reason: dcv1.AwaitingWaveReason},
			},
			Changes:    []dcv1.RolloutPolicyChange{{Name: fleetChange, Wave: 1, Started: []dcv1.RolloutPolicyStarted{{Name: "web", Version: 2, Wave: 1}}}},
			Failures:   []dcv1.RolloutPolicyFailure{{Name: "cart", Version: 3, At: since}},
			NextWindow: &next,
		},
	}
	objs := canaryAtStep()
	objs[0].(*dcv1.DeploymentConfig).Labels = map[string]string{"fleet": "a"}
	for _, name := range []string{"api", "db"} {
		objs = append(objs, &dcv1.DeploymentConfig{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "shop", Labels: map[string]string{"fleet": "a"}},
			Spec:       dcv1.DeploymentConfigSpec{Replicas: 1},
			Status: dcv1.DeploymentConfigStatus{Conditions: []dcv1.DeploymentCondition{{
				Type: dcv1.DeploymentProgressing, Status: corev1.ConditionUnknown, Reason: dcv1.AwaitingWaveReason,
				Message: "Rollout waits for RolloutPolicy fleet: wave 1 of change \"" + fleetChange + "\" is full; the next starts once it completes",
			}}},
		})
	}
	return append(objs, policy)
}

func TestPolicyPage(t *testing.T) {
	s := testServer(t, false, nil, fleetUnderWaves()...)
	body := get(t, s, "/policy/shop/fleet")
	for _, w := range []string{
		`Selects fleet=a: <strong>3</strong> DeploymentConfig(s), <strong>1</strong> rollout(s) running, <strong>2</strong> waiting; at most <strong>2</strong> at once.`,
		// The line, in order: who waits, why and since when.
		`<tr data-waiter="api"><td>1</td><td><a href="/dc/shop/api">api</a></td><td>#4</td><td class="reason">AwaitingWave</td><td>2026-12-02 09:59:00</td><td>ConfigData ConfigMap/shared</td><td>Rollout waits for RolloutPolicy fleet: wave 1 of change &#34;ConfigData ConfigMap/shared&#34; is full; the next starts once it completes</td></tr>`,
		`<tr data-waiter="db"><td>2</td>`,
		// The waves of the change, and the rules they follow.
		`Waves: 1 (1 rollout(s)), soak 10m0s; 50% (2 rollout(s)); the rest.`,
		`data-wave="1" data-state="running" aria-current="step">Wave 1 (1): <span class="state">running</span>: web #2</li>`,
		`data-wave="2" data-state="to come">Wave 2 (2): <span class="state">to come</span></li>`,
		`data-wave="3" data-state="to come">Wave 3 (the rest)`,
		// The breaker and the next window.
		`<p id="breaker">Closed: opens at 3 failed rollout(s) within 1h0m0s.</p>`,
		`<li>cart #3 at 2026-12-02 09:59:00</li>`,
		`Rollouts may next start at <strong>2026-12-02 12:00:00</strong> UTC.`,
		`<li>Monday, Tuesday, 09:00 to 17:00 (Europe/Berlin)</li>`,
		`<li>year-end: 2026-12-21 00:00:00 to 2027-01-04 00:00:00 UTC</li>`,
		`data-stream="/events/policy/shop/fleet?shown=`,
	} {
		if !strings.Contains(body, w) {
			t.Errorf("the policy page lacks %s", w)
		}
	}
	if t.Failed() {
		t.Log(body)
	}
}

// TestPolicyPageWaveStates: each wave of a change says whether it is
// done, running, soaking (until when), stopped or to come.
func TestPolicyPageWaveStates(t *testing.T) {
	completed := metav1.NewTime(testNow.Add(-time.Minute))
	tests := []struct {
		name   string
		change dcv1.RolloutPolicyChange
		want   []string
	}{
		{"soaking", dcv1.RolloutPolicyChange{Name: fleetChange, Wave: 1, WaveCompleted: &completed},
			[]string{`data-state="soaking" aria-current="step">Wave 1 (1): <span class="state">soaking until 2026-12-02 10:09:00</span>`}},
		{"second wave", dcv1.RolloutPolicyChange{Name: fleetChange, Wave: 2, Started: []dcv1.RolloutPolicyStarted{{Name: "web", Version: 2, Wave: 1}, {Name: "api", Version: 4, Wave: 2}}},
			[]string{`data-state="done">Wave 1 (1): <span class="state">done</span>: web #2`, `data-state="running" aria-current="step">Wave 2 (2): <span class="state">running</span>: api #4`}},
		{"stopped", dcv1.RolloutPolicyChange{Name: fleetChange, Wave: 1, Stopped: "web #2", Started: []dcv1.RolloutPolicyStarted{{Name: "web", Version: 2, Wave: 1}}},
			[]string{`wave 1, stopped by the failure of web #2`, `data-state="stopped" aria-current="step">Wave 1 (1): <span class="state">stopped</span>: web #2`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs := fleetUnderWaves()
			objs[len(objs)-1].(*dcv1.RolloutPolicy).Status.Changes = []dcv1.RolloutPolicyChange{tt.change}
			body := get(t, testServer(t, false, nil, objs...), "/policy/shop/fleet")
			for _, w := range tt.want {
				if !strings.Contains(body, w) {
					t.Errorf("the page lacks %s:\n%s", w, body)
				}
			}
		})
	}
}

// TestDCPageNamesItsPolicy: a DeploymentConfig's page names the policy that
// governs it and, while its rollout waits, its place in line and why; the
// list marks it waiting and lists the namespace's policies.
func TestDCPageNamesItsPolicy(t *testing.T) {
	s := testServer(t, false, nil, fleetUnderWaves()...)
	api := get(t, s, "/dc/shop/api")
	want := `<p id="dc-policy">Governed by RolloutPolicy <a href="/policy/shop/fleet">fleet</a>: rollout #4 <strong class="hold">waits</strong>, 1 of 2 in line, <span class="reason">AwaitingWave</span> since 2026-12-02 09:59:00. Rollout waits for RolloutPolicy fleet: wave 1 of change &#34;ConfigData ConfigMap/shared&#34; is full; the next starts once it completes.</p>`
	if !strings.Contains(api, want) {
		t.Errorf("api's page lacks %s:\n%s", want, api)
	}
	if web := get(t, s, "/dc/shop/web"); !strings.Contains(web, `<p id="dc-policy">Governed by RolloutPolicy <a href="/policy/shop/fleet">fleet</a>.</p>`) {
		t.Errorf("web's page does not name its policy, or says it waits:\n%s", web)
	}
	list := get(t, s, "/?namespace=shop")
	for _, w := range []string{`<a href="/dc/shop/db">db</a> <span class="badge waits"`, `>waits: AwaitingWave</span>`,
		`<tr data-policy="shop/fleet"><td>shop</td><td><a href="/policy/shop/fleet">fleet</a></td><td>2</td><td>3</td><td>1</td><td>2</td><td>—</td></tr>`} {
		if !strings.Contains(list, w) {
			t.Errorf("the list lacks %s:\n%s", w, list)
		}
	}
	if strings.Contains(list, `<a href="/dc/shop/web">web</a> <span class="badge waits"`) {
		t.Error("the list marks web, whose rollout runs, as waiting")
	}
}

func TestPolicyPageNotFound(t *testing.T) {
	s := testServer(t, false, nil, canaryAtStep()...)
	w := httptest.NewRecorder()
	s.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "http://127.0.0.1:8990/policy/shop/none", nil))
	if w.Code != http.StatusNotFound || !strings.Contains(w.Body.String(), `rolloutpolicy &#34;none&#34; not found in namespace &#34;shop&#34;`) {
		t.Errorf("GET an unknown policy: %d\n%s", w.Code, w.Body)
	}
}

// TestPolicyPagePushesTheLine: the policy page's stream pushes the line
// when the policy's status changes.
func TestPolicyPagePushesTheLine(t *testing.T) {
	objs := fleetUnderWaves()
	s := testServer(t, false, nil, objs...)
	shown, err := s.fragmentHash("policy", buildPolicyView(s.store, "shop", "fleet", testNow))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	defer srv.Close()
	ctx, cancel := context.WithTimeout(t.Context(), pushTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/events/policy/shop/fleet?shown="+shown, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()

	p := objs[len(objs)-1].(*dcv1.RolloutPolicy).DeepCopy()
	p.Status.Line, p.Status.Waiting = p.Status.Line[1:], 1
	if err := s.store.scopes[""].policies.GetIndexer().Update(p); err != nil {
		t.Fatal(err)
	}
	s.store.hub.notify("shop", dcOf(p))

	event, data := readEvent(t, bufio.NewScanner(resp.Body))
	if event != "update" || strings.Contains(data, `data-waiter="api"`) || !strings.Contains(data, `<tr data-waiter="db"><td>1</td>`) {
		t.Errorf("pushed %s, want the line with db first and api gone:\n%s", event, data)
	}
}
