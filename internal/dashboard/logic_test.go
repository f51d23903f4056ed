package dashboard

import (
	"math"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
)

func TestDiffLines(t *testing.T) {
	tests := []struct {
		name, a, b string
		want       []diffLine
	}{
		{name: "same", a: "x\ny\n", b: "x\ny\n", want: []diffLine{{" ", "x"}, {" ", "y"}}},
		{name: "changed line", a: "x\ny\nz\n", b: "x\nY\nz\n", want: []diffLine{{" ", "x"}, {"-", "y"}, {"+", "Y"}, {" ", "z"}}},
		{name: "added at the end", a: "x\n", b: "x\ny\n", want: []diffLine{{" ", "x"}, {"+", "y"}}},
		{name: "removed at the start", a: "w\nx\n", b: "x\n", want: []diffLine{{"-", "w"}, {" ", "x"}}},
		{name: "from nothing", a: "", b: "x\n", want: []diffLine{{"+", "x"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := diffLines(tt.a, tt.b)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("diffLines:\n got %v\nwant %v", got, tt.want)
			}
		})
	}
}

func TestDiffLinesRefusesHugeTexts(t *testing.T) {
	huge := strings.Repeat("x\n", maxDiffLines+1)
	if _, err := diffLines(huge, "x\n"); err == nil {
		t.Error("diffLines compared a text over the limit")
	}
}

func TestParseMeasurements(t *testing.T) {
	log := strings.Join([]string{
		"--> Step 2 of 3: analysis",
		`--> step-2: analysis started: 1 metric(s), 2 measurement(s) 1s apart`,
		`--> step-2: analysis "error-rate" measurement #1: Successful: result [0.02] met successCondition result[0] < 0.05`,
		`--> step-2: analysis "error-rate" measurement #2: Error (1 in a row, consecutiveErrorLimit 4): query http://127.0.0.1:9090: refused`,
		`--> step-2: analysis "latency" (dry run) measurement #1: Failed: result [1.5e+00] met failureCondition result[0] > 1`,
		`--> analysis "error-rate" measurement #1: Inconclusive: result [0.2] met neither successCondition a nor failureCondition b`,
	}, "\n")
	want := map[string]map[string][]point{
		"step-2": {
			"error-rate": {
				{N: 1, Value: 0.02, HasValue: true, Phase: "Successful", Detail: "result [0.02] met successCondition result[0] < 0.05"},
				{N: 2, Phase: "Error", Detail: "query http://127.0.0.1:9090: refused"},
			},
			"latency": {{N: 1, Value: 1.5, HasValue: true, Phase: "Failed", Detail: "result [1.5e+00] met failureCondition result[0] > 1"}},
		},
		"": {"error-rate": {{N: 1, Value: 0.2, HasValue: true, Phase: "Inconclusive", Detail: "result [0.2] met neither successCondition a nor failureCondition b"}}},
	}
	if got := parseMeasurements(log); !reflect.DeepEqual(got, want) {
		t.Errorf("parseMeasurements:\n got %+v\nwant %+v", got, want)
	}
}

func TestChart(t *testing.T) {
	tests := []struct {
		name             string
		success, failure string
		points           []point
		wantMin, wantMax string
		wantY            []float64
		wantThresholds   []float64
	}{
		{
			name:    "values only",
			points:  []point{{N: 1, Value: 1, HasValue: true}, {N: 2, Value: 3, HasValue: true}, {N: 3, Phase: "Error"}},
			wantMin: "1", wantMax: "3",
			wantY: []float64{chartHeight - chartPad, chartPad, chartHeight - chartPad},
		},
		{
			name:    "thresholds widen the range",
			success: "result[0] <= 0.05", failure: "result[0] > 0.5",
			points:  []point{{N: 1, Value: 0.1, HasValue: true}},
			wantMin: "0.05", wantMax: "0.5",
			wantY:          []float64{chartHeight - chartPad - (0.1-0.05)/0.45*(chartHeight-2*chartPad)},
			wantThresholds: []float64{chartHeight - chartPad, chartPad},
		},
		{
			name:    "a condition that is not a threshold",
			success: "result[0] < result[1]",
			points:  []point{{N: 1, Value: 2, HasValue: true}},
			wantMin: "2", wantMax: "2",
			wantY: []float64{chartHeight - chartPad},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := chart("m", tt.success, tt.failure, tt.points)
			if c.Min != tt.wantMin || c.Max != tt.wantMax {
				t.Errorf("range %s..%s, want %s..%s", c.Min, c.Max, tt.wantMin, tt.wantMax)
			}
			for i, want := range tt.wantY {
				if got := c.Points[i].Y; math.Abs(got-want) > 0.01 {
					t.Errorf("point %d at y %v, want %v", i, got, want)
				}
			}
			if len(c.Thresholds) != len(tt.wantThresholds) {
				t.Fatalf("thresholds %+v, want y %v", c.Thresholds, tt.wantThresholds)
			}
			for i, want := range tt.wantThresholds {
				if got := c.Thresholds[i].Y; math.Abs(got-want) > 0.01 {
					t.Errorf("threshold %d at y %v, want %v", i, got, want)
				}
			}
		})
	}
}

func TestActionArgs(t *testing.T) {
	tests := []struct {
		action   string
		revision int64
		want     []string
	}{
		{"latest", 0, []string{"rollout", "latest", "web", "--namespace", "shop"}},
		{"promote", 0, []string{"rollout", "promote", "web", "--namespace", "shop"}},
		{"promote-full", 0, []string{"rollout", "promote", "web", "--full", "--namespace", "shop"}},
		{"cancel", 0, []string{"rollout", "cancel", "web", "--namespace", "shop"}},
		{"retry", 0, []string{"rollout", "retry", "web", "--namespace", "shop"}},
		{"pause", 0, []string{"rollout", "pause", "web", "--namespace", "shop"}},
		{"resume", 0, []string{"rollout", "resume", "web", "--namespace", "shop"}},
		{"undo", 2, []string{"rollout", "undo", "web", "--to-revision", "2", "--namespace", "shop"}},
		{"undo", 0, nil},
		{"delete", 0, nil},
	}
	for _, tt := range tests {
		got, ok := actionArgs(tt.action, "shop", "web", tt.revision)
		if ok != (tt.want != nil) || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("actionArgs(%s, %d) = %v, %t; want %v", tt.action, tt.revision, got, ok, tt.want)
		}
	}
}

func TestCheckOrigin(t *testing.T) {
	tests := []struct {
		name, origin, site string
		ok                 bool
	}{
		{name: "same origin", origin: "http://127.0.0.1:8990", site: "same-origin", ok: true},
		{name: "same origin without fetch metadata", origin: "http://127.0.0.1:8990", ok: true},
		{name: "no origin", origin: ""},
		{name: "another site", origin: "http://evil.example", site: "cross-site"},
		{name: "another port", origin: "http://127.0.0.1:8991"},
		{name: "https", origin: "https://127.0.0.1:8990"},
		{name: "same origin but cross-site fetch", origin: "http://127.0.0.1:8990", site: "cross-site"},
		{name: "opaque origin", origin: "null"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:8990/dc/shop/web/actions", nil)
			if tt.origin != "" {
				r.Header.Set("Origin", tt.origin)
			}
			if tt.site != "" {
				r.Header.Set("Sec-Fetch-Site", tt.site)
			}
			if err := checkOrigin(r); (err == nil) != tt.ok {
				t.Errorf("checkOrigin: %v, want ok %t", err, tt.ok)
			}
		})
	}
}

func TestTokens(t *testing.T) {
	now := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	tk := newTokens(func() time.Time { return now })
	token, err := tk.issue()
	if err != nil {
		t.Fatal(err)
	}
	other, _ := tk.issue()
	if token == other {
		t.Error("two page loads got the same token")
	}
	for _, tt := range []struct {
		name  string
		token string
		after time.Duration
		ok    bool
	}{
		{"issued", token, 0, true},
		{"empty", "", 0, false},
		{"forged", strings.Repeat("0", 64), 0, false},
		{"expired", token, tokenLifetime + time.Second, false},
	} {
		now = now.Add(tt.after)
		if got := tk.valid(tt.token); got != tt.ok {
			t.Errorf("%s: valid %t, want %t", tt.name, got, tt.ok)
		}
	}
}

func TestTokensAreBounded(t *testing.T) {
	now := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	tk := newTokens(func() time.Time { return now })
	first, _ := tk.issue()
	for range maxTokens {
		now = now.Add(time.Millisecond)
		if _, err := tk.issue(); err != nil {
			t.Fatal(err)
		}
	}
	if len(tk.issued) > maxTokens {
		t.Errorf("%d tokens kept, want at most %d", len(tk.issued), maxTokens)
	}
	if tk.valid(first) {
		t.Error("the oldest token is still valid after the limit")
	}
}

func TestLoopbackHost(t *testing.T) {
	for host, want := range map[string]bool{
		"127.0.0.1:8990": true, "localhost:8990": true, "[::1]:8990": true, "127.0.0.1": true,
		"rebound.example:8990": false, "10.0.0.1:8990": false, "": false,
	} {
		if got := loopbackHost(host); got != want {
			t.Errorf("loopbackHost(%q) = %t, want %t", host, got, want)
		}
	}
}

// TestBuildRolloutOfARoutedCanary: a routed canary's weight is a share of
// the requests, and its traffic steps say what they do.
func TestBuildRolloutOfARoutedCanary(t *testing.T) {
	dc := &dcv1.DeploymentConfig{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop"},
		Spec: dcv1.DeploymentConfigSpec{
			Replicas: 2,
			Selector: map[string]string{"app": "web"},
			Template: &corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "web:2"}}},
			},
			Strategy: dcv1.DeploymentStrategy{Type: dcv1.DeploymentStrategyTypeRolling, RollingParams: &dcv1.RollingDeploymentStrategyParams{
				TrafficRouting: &dcv1.TrafficRouting{StableService: "s", CanaryService: "c", GatewayAPI: &dcv1.GatewayAPIRouting{HTTPRoute: "web"}, ManagedRoutes: []dcv1.ManagedRoute{{Name: "beta"}}},
				Steps: []dcv1.RollingStep{
					{SetHeaderRoute: &dcv1.SetHeaderRoute{Name: "beta", Match: []dcv1.HeaderRoutingMatch{{HeaderName: "X-Beta", HeaderValue: dcv1.StringMatch{Exact: new("1")}}}}},
					{SetCanaryScale: &dcv1.SetCanaryScale{Replicas: new(int32(1))}},
					{SetWeight: new(int32(10))},
				},
			}},
		},
		Status: dcv1.DeploymentConfigStatus{LatestVersion: 2},
	}
	rc, err := deployment.New(dc)
	if err != nil {
		t.Fatal(err)
	}
	deployment.SetProgress(rc, deployment.Progress{Stage: deployment.StageSteps, Step: 3, Steps: 3,
		Runner: deployment.Runner{Kind: deployment.RunnerPod, Holder: deployment.DeployerPodName(rc.Name)}})
	v := buildRollout(rc)
	if !v.Routed {
		t.Errorf("a canary with trafficRouting is not shown as routed")
	}
	var got []string
	for _, s := range v.StepList {
		got = append(got, s.Description)
	}
	want := []string{"setHeaderRoute beta", "setCanaryScale 1 pods", "setWeight 10%"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("steps %q, want %q", got, want)
	}
}
