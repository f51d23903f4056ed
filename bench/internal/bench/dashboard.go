package bench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/bench/internal/bench/procstat"
	"github.com/deployconfig/deployconfig/bench/internal/bench/report"
	"github.com/deployconfig/deployconfig/internal/dev/playground"
)

const (
	// dashboardNamespace holds the dashboard scenario's DCs; the other
	// workloads' pods are in otherNamespaces namespaces of their own.
	dashboardNamespace = "bench-dashboard"
	otherNamespaces    = 10
	// dashboardReadyTimeout bounds a dashboard's start and first sync;
	// dashboardQuiet is how long its requests must stop for it to count
	// as synced.
	dashboardReadyTimeout = 10 * time.Minute
	dashboardQuiet        = 10 * time.Second
	// podChurn and dcChurn are how often the cluster changes during the
	// windows: a pod of another workload, and the DC that the tabs show.
	podChurn = 500 * time.Millisecond
	dcChurn  = 5 * time.Second
	// churnAnnotation is what the churn changes.
	churnAnnotation = "bench.deployconfig.io/churn"
	// tabWarmUp is counted apart after the tabs open: their first
	// renders and the reads they start, so that the window with tabs
	// counts what open tabs cost as they stay open.
	tabWarmUp = 10 * time.Second
)

// countingProxy forwards a dashboard's requests to the API server with
// dc-bench's credentials and counts them.
type countingProxy struct {
	url      string
	srv      *http.Server
	requests atomic.Int64
	logs     atomic.Int64
	bytes    atomic.Int64
	// log records each request's method and URL.
	log   io.Writer
	logMu sync.Mutex
}

// proxyCounts is what a proxy has counted up to one moment: requests,
// pod-log requests, and bytes of responses (watch events included).
type proxyCounts struct{ requests, logs, bytes int }

func (p *countingProxy) counts() proxyCounts {
	return proxyCounts{requests: int(p.requests.Load()), logs: int(p.logs.Load()), bytes: int(p.bytes.Load())}
}

// sub is c less an earlier count.
func (c proxyCounts) sub(earlier proxyCounts) proxyCounts {
	return proxyCounts{requests: c.requests - earlier.requests, logs: c.logs - earlier.logs, bytes: c.bytes - earlier.bytes}
}

// countingWriter counts the bytes of a response.
type countingWriter struct {
	http.ResponseWriter
	n *atomic.Int64
}

func (w countingWriter) Write(b []byte) (int, error) {
	n, err := w.ResponseWriter.Write(b)
	w.n.Add(int64(n))
	return n, err
}

// Flush passes a watch's events on.
func (w countingWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// startProxy listens on loopback and forwards to the API server of cfg.
func startProxy(cfg *rest.Config, log io.Writer) (*countingProxy, error) {
	target, err := url.Parse(cfg.Host)
	if err != nil {
		return nil, fmt.Errorf("parsing the API server's address: %w", err)
	}
	transport, err := rest.TransportFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("making the counting proxy's transport: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listening for the counting proxy: %w", err)
	}
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.Transport = transport
	// Watches stream: pass every event on at once.
	rp.FlushInterval = -1
	p := &countingProxy{url: "http://" + ln.Addr().String(), log: log}
	p.srv = &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		p.requests.Add(1)
		if strings.HasSuffix(req.URL.Path, "/log") {
			p.logs.Add(1)
		}
		p.logMu.Lock()
		fmt.Fprintf(p.log, "%s %s %s\n", time.Now().Format(time.StampMilli), req.Method, req.URL.RequestURI())
		p.logMu.Unlock()
		rp.ServeHTTP(countingWriter{ResponseWriter: w, n: &p.bytes}, req)
	})}
	go func() { _ = p.srv.Serve(ln) }()
	return p, nil
}

// kubeconfig writes a kubeconfig that reaches the API server through the
// proxy, with no credentials of its own.
func (p *countingProxy) kubeconfig(path string) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["bench"] = &clientcmdapi.Cluster{Server: p.url}
	cfg.AuthInfos["bench"] = &clientcmdapi.AuthInfo{}
	cfg.Contexts["bench"] = &clientcmdapi.Context{Cluster: "bench", AuthInfo: "bench"}
	cfg.CurrentContext = "bench"
	return clientcmd.WriteToFile(*cfg, path)
}

// dashboardProcess is one build's `kubectl dc dashboard`, reading the
// cluster through a counting proxy.
type dashboardProcess struct {
	build string
	url   string
	proxy *countingProxy
	cmd   *exec.Cmd
}

// startDashboard starts binary's dashboard behind a proxy of its own and
// waits until it serves.
func (r *runner) startDashboard(ctx context.Context, binary, build string) (*dashboardProcess, error) {
	requests, err := os.Create(filepath.Join(r.e.dir, "dashboard-"+build+"-requests.log"))
	if err != nil {
		return nil, err
	}
	p, err := startProxy(r.e.cluster.Config, requests)
	if err != nil {
		return nil, err
	}
	kubeconfig := filepath.Join(r.e.dir, "dashboard-"+build+".kubeconfig")
	if err := p.kubeconfig(kubeconfig); err != nil {
		return nil, fmt.Errorf("writing the %s dashboard's kubeconfig: %w", build, err)
	}
	logFile, err := os.Create(filepath.Join(r.e.dir, "dashboard-"+build+".log"))
	if err != nil {
		return nil, err
	}
	defer logFile.Close()
	cmd := exec.Command(binary, "dashboard", "--kubeconfig", kubeconfig, "--port", "0", "--read-only")
	cmd.Stderr = logFile
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the %s dashboard: %w", build, err)
	}
	d := &dashboardProcess{build: build, proxy: p, cmd: cmd}
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if u, ok := servingURL(sc.Text()); ok {
				found <- u
			}
		}
	}()
	select {
	case d.url = <-found:
	case <-time.After(dashboardReadyTimeout):
		d.stop()
		return nil, fmt.Errorf("the %s dashboard printed no URL within %s", build, dashboardReadyTimeout)
	case <-ctx.Done():
		d.stop()
		return nil, ctx.Err()
	}
	return d, nil
}

// servingURL finds the dashboard's URL in the line it prints once it
// listens.
func servingURL(line string) (string, bool) {
	const prefix = "Serving the dashboard at "
	i := strings.Index(line, prefix)
	if i < 0 {
		return "", false
	}
	u, _, _ := strings.Cut(line[i+len(prefix):], " ")
	return strings.TrimSuffix(u, "/"), u != ""
}

// stop ends the dashboard and its proxy, and closes the proxy's request
// log.
func (d *dashboardProcess) stop() {
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = d.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(controllerStopTimeout):
		_ = d.cmd.Process.Kill()
		<-done
	}
	_ = d.proxy.srv.Close()
	if c, ok := d.proxy.log.(io.Closer); ok {
		_ = c.Close()
	}
}

// waitSynced waits until the list page names the last DC and the
// dashboard's requests have stopped for dashboardQuiet.
func (d *dashboardProcess) waitSynced(ctx context.Context, lastDC string) error {
	err := wait.PollUntilContextTimeout(ctx, time.Second, dashboardReadyTimeout, true, func(ctx context.Context) (bool, error) {
		body, err := get(ctx, d.url+"/")
		return err == nil && strings.Contains(body, lastDC), nil
	})
	if err != nil {
		return fmt.Errorf("the %s dashboard's list page did not show %s: %w", d.build, lastDC, err)
	}
	last, quietSince := d.proxy.counts().requests, time.Now()
	return wait.PollUntilContextTimeout(ctx, time.Second, dashboardReadyTimeout, true, func(context.Context) (bool, error) {
		if n := d.proxy.counts().requests; n != last {
			last, quietSince = n, time.Now()
		}
		return time.Since(quietSince) >= dashboardQuiet, nil
	})
}

// get reads a page.
func get(ctx context.Context, u string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	return string(b), err
}

// openTabs opens n tabs on the dashboard, each the DC page and the event
// streams of the list page and of the DC page, read until ctx ends. It
// returns once every stream has answered.
func (d *dashboardProcess) openTabs(ctx context.Context, n int, namespace, name string) error {
	page := fmt.Sprintf("/dc/%s/%s", namespace, name)
	streams := []string{"/events/list", "/events/dc/" + namespace + "/" + name}
	errs := make(chan error, n*len(streams))
	for range n {
		if _, err := get(ctx, d.url+page); err != nil {
			return fmt.Errorf("the %s dashboard's DC page: %w", d.build, err)
		}
		for _, s := range streams {
			go func() { errs <- stream(ctx, d.url+s) }()
		}
	}
	for range n * len(streams) {
		if err := <-errs; err != nil {
			return fmt.Errorf("the %s dashboard's event stream: %w", d.build, err)
		}
	}
	return nil
}

// stream opens an event stream and, once it has answered 200, reads it
// in the background until ctx ends.
func stream(ctx context.Context, u string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	go func() {
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
	}()
	return nil
}

// dashboardReading is what one window counted on one dashboard.
type dashboardReading struct {
	// opening counts from the tabs' opening to the end of tabWarmUp.
	without, opening, with proxyCounts
	usage                  procstat.Usage
}

// dashboard measures the baseline's dashboard and this one side by side
// on one cluster: DashboardDCs DCs (each with a post-hook analysis, so
// that its page shows measurements from the deployer log) among
// DashboardPods pods, most of them other workloads'. Both dashboards run
// at once against the same cluster while it changes (a pod of another
// workload every podChurn, the DC the tabs show every dcChurn); each
// counts its API requests through a proxy of its own, over a window
// without tabs and one with DashboardTabs tabs.
func (r *runner) dashboard(ctx context.Context, rep *report.Report) error {
	if err := r.populateDashboard(ctx); err != nil {
		return err
	}
	builds := []struct{ name, binary string }{
		{"before", filepath.Join(r.o.BaselineBin, "kubectl-dc")},
		{"after", filepath.Join(r.o.BinDir, "kubectl-dc")},
	}
	var dashboards []*dashboardProcess
	defer func() {
		for _, d := range dashboards {
			d.stop()
		}
	}()
	for _, b := range builds {
		d, err := r.startDashboard(ctx, b.binary, b.name)
		if err != nil {
			return err
		}
		dashboards = append(dashboards, d)
	}
	last := objectName(r.o.DashboardDCs - 1)
	for _, d := range dashboards {
		if err := d.waitSynced(ctx, last); err != nil {
			return err
		}
	}
	fmt.Fprintf(r.o.Log, "Dashboard: both synced; %s without tabs, then %s with %d tabs each...\n", r.o.DashboardWindow, r.o.DashboardWindow, r.o.DashboardTabs)
	churnCtx, stopChurn := context.WithCancel(ctx)
	var churning sync.WaitGroup
	churning.Go(func() { r.churn(churnCtx) })
	defer func() { stopChurn(); churning.Wait() }()
	readings := make([]dashboardReading, len(dashboards))
	without, err := r.countWindow(ctx, dashboards, r.o.DashboardWindow)
	if err != nil {
		return err
	}
	tabsCtx, closeTabs := context.WithCancel(ctx)
	defer closeTabs()
	opened := make([]proxyCounts, len(dashboards))
	for i, d := range dashboards {
		before := d.proxy.counts()
		if err := d.openTabs(tabsCtx, r.o.DashboardTabs, dashboardNamespace, objectName(0)); err != nil {
			return err
		}
		opened[i] = before
	}
	if _, err := r.countWindow(ctx, dashboards, tabWarmUp); err != nil {
		return err
	}
	for i, d := range dashboards {
		opened[i] = d.proxy.counts().sub(opened[i])
	}
	with, err := r.countWindow(ctx, dashboards, r.o.DashboardWindow)
	if err != nil {
		return err
	}
	for i, d := range dashboards {
		u, err := procstat.Read(d.cmd.Process.Pid)
		if err != nil {
			return fmt.Errorf("reading the %s dashboard's memory: %w", d.build, err)
		}
		readings[i] = dashboardReading{without: without[i], opening: opened[i], with: with[i], usage: u}
	}
	m := dashboardFigures(r.o, readings[0], readings[1])
	rep.BeforeAfter = append(rep.BeforeAfter, m)
	fmt.Fprintln(r.o.Log, "  "+m.Line())
	return nil
}

// countWindow counts each dashboard's requests over one window.
func (r *runner) countWindow(ctx context.Context, dashboards []*dashboardProcess, window time.Duration) ([]proxyCounts, error) {
	start := make([]proxyCounts, len(dashboards))
	for i, d := range dashboards {
		start[i] = d.proxy.counts()
	}
	select {
	case <-time.After(window):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	out := make([]proxyCounts, len(dashboards))
	for i, d := range dashboards {
		out[i] = d.proxy.counts().sub(start[i])
	}
	return out, nil
}

// dashboardFigures compares the two dashboards' readings.
func dashboardFigures(o Options, before, after dashboardReading) report.BeforeAfter {
	secs := o.DashboardWindow.Seconds()
	tabs := 2 * o.DashboardTabs
	perTab := func(d dashboardReading) float64 {
		return report.PerTabPerMinute(d.with.requests, d.without.requests, secs, tabs)
	}
	return report.BeforeAfter{
		Scenario: ScenarioDashboard, Size: fmt.Sprintf("%d DCs among %d pods", o.DashboardDCs, o.DashboardPods), Baseline: o.Baseline,
		Detail: fmt.Sprintf("Both dashboards (`kubectl dc dashboard --read-only`) ran at once against the same kwok cluster, each through a counting proxy of its own, "+
			"while a pod of another workload changed every %s and the DC shown every %s. Requests were counted over %s without tabs, then %d tabs of the DC page were opened "+
			"(each an event stream of the list page and one of the DC page: %d streams), their opening and first %s counted apart, then %s with them open; "+
			"per tab = (with − without) / streams / minutes. Bytes are the responses' through the proxy, watch events included. "+
			"Each DC has one Complete revision with a post-hook analysis, one pod and its deployer pod; the other pods are bare pods of %d other namespaces. "+
			"Memory is the process's (no pprof there), read at the end.",
			podChurn, dcChurn, o.DashboardWindow, o.DashboardTabs, tabs, tabWarmUp, o.DashboardWindow, otherNamespaces),
		Figures: []report.Versus{
			{Figure: "RSS", Unit: report.UnitBytes, Before: float64(before.usage.RSSBytes), After: float64(after.usage.RSSBytes)},
			{Figure: "anonymous RSS", Unit: report.UnitBytes, Before: float64(before.usage.AnonBytes), After: float64(after.usage.AnonBytes)},
			{Figure: "peak RSS", Unit: report.UnitBytes, Before: float64(before.usage.PeakRSSBytes), After: float64(after.usage.PeakRSSBytes)},
			{Figure: "API requests, no tab", Unit: report.UnitPerMinute, Before: report.PerMinute(before.without.requests, secs), After: report.PerMinute(after.without.requests, secs)},
			{Figure: "API bytes received, no tab", Unit: report.UnitBytesPerMin, Before: report.PerMinute(before.without.bytes, secs), After: report.PerMinute(after.without.bytes, secs)},
			{Figure: "API requests to open a tab (and its first " + tabWarmUp.String() + ")", Unit: report.UnitRequests,
				Before: float64(before.opening.requests) / float64(tabs), After: float64(after.opening.requests) / float64(tabs)},
			{Figure: "API requests per open tab", Unit: report.UnitPerTabMin, Before: perTab(before), After: perTab(after)},
			{Figure: "pod-log GETs per open tab", Unit: report.UnitPerTabMin,
				Before: report.PerTabPerMinute(before.with.logs, before.without.logs, secs, tabs), After: report.PerTabPerMinute(after.with.logs, after.without.logs, secs, tabs)},
		},
	}
}

// churn changes the cluster until ctx ends: a pod of another workload
// every podChurn, the DC the tabs show every dcChurn.
func (r *runner) churn(ctx context.Context) {
	pods, dcs := time.NewTicker(podChurn), time.NewTicker(dcChurn)
	defer pods.Stop()
	defer dcs.Stop()
	others := r.o.DashboardPods - 2*r.o.DashboardDCs
	for i := 0; ; i++ {
		patch := fmt.Appendf(nil, `{"metadata":{"annotations":{%q:"%d"}}}`, churnAnnotation, i)
		var err error
		select {
		case <-ctx.Done():
			return
		case <-pods.C:
			if others == 0 {
				continue
			}
			k := i % others
			_, err = r.e.kube.CoreV1().Pods(otherNamespace(k)).Patch(ctx, otherPod(k), types.MergePatchType, patch, metav1.PatchOptions{})
		case <-dcs.C:
			dc := &dcv1.DeploymentConfig{}
			dc.Namespace, dc.Name = dashboardNamespace, objectName(0)
			err = r.e.client.Patch(ctx, dc, client.RawPatch(types.MergePatchType, patch))
		}
		if err != nil && ctx.Err() == nil && !errors.Is(err, context.Canceled) {
			r.warnings = append(r.warnings, fmt.Sprintf("dashboard churn: %v", err))
			return
		}
	}
}

// otherNamespace and otherPod name the k-th pod of another workload.
func otherNamespace(k int) string { return fmt.Sprintf("bench-other-%d", k%otherNamespaces) }
func otherPod(k int) string       { return fmt.Sprintf("other-%05d", k/otherNamespaces) }

// populateDashboard makes the dashboard scenario's DCs and other pods.
func (r *runner) populateDashboard(ctx context.Context) error {
	for _, ns := range append([]string{dashboardNamespace}, otherNamespaceNames()...) {
		if err := r.e.createNamespace(ctx, ns); err != nil {
			return err
		}
	}
	if err := r.ensureDeployerAccount(ctx, dashboardNamespace); err != nil {
		return err
	}
	makers, err := r.e.makers(r.o.FootprintClients)
	if err != nil {
		return err
	}
	others := r.o.DashboardPods - 2*r.o.DashboardDCs
	fmt.Fprintf(r.o.Log, "Dashboard: making %d DCs and %d pods of other workloads...\n", r.o.DashboardDCs, others)
	start := time.Now()
	var created atomic.Int64
	err = parallel(ctx, r.o.DashboardDCs, 2*createWorkers, func(ctx context.Context, i int) error {
		return r.populateAnalysedDC(ctx, makers[i%len(makers)], objectName(i), i%r.o.Nodes, &created)
	})
	if err != nil {
		return err
	}
	err = parallel(ctx, others, 2*createWorkers, func(ctx context.Context, k int) error {
		m := makers[k%len(makers)]
		pod := otherWorkloadPod(otherNamespace(k), otherPod(k), playground.NodeName(k%r.o.Nodes))
		if _, err := m.kube.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("creating pod %s/%s: %w", pod.Namespace, pod.Name, err)
		}
		created.Add(1)
		return nil
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(r.o.Log, "  made %d objects in %.0f s\n", created.Load(), time.Since(start).Seconds())
	return nil
}

// otherNamespaceNames are the other workloads' namespaces.
func otherNamespaceNames() []string {
	out := make([]string, otherNamespaces)
	for k := range out {
		out[k] = otherNamespace(k)
	}
	return out
}

// otherWorkloadPod is a pod of a workload that is no DC's, bound to node.
func otherWorkloadPod(ns, name, node string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{"app": "other"}},
		Spec:       corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "app", Image: appImage}}},
	}
}

// populateAnalysedDC makes one DC of the dashboard scenario as it stands
// after one rollout: a Rolling DC with a post-hook analysis, one pod.
func (r *runner) populateAnalysedDC(ctx context.Context, m maker, name string, node int, created *atomic.Int64) error {
	dc := newDC(dashboardNamespace, name, 1)
	dc.Spec.Strategy.RollingParams.Post = &dcv1.LifecycleHook{
		FailurePolicy: dcv1.LifecycleHookFailurePolicyAbort,
		Analysis:      hostileAnalysis(`sum(rate(app_requests_total{code="500"}[1m])) / sum(rate(app_requests_total[1m]))`),
	}
	if err := m.client.Create(ctx, dc); err != nil {
		return fmt.Errorf("creating deploymentconfig %s/%s: %w", dc.Namespace, name, err)
	}
	created.Add(1)
	if err := r.populateRevision(ctx, m, dc, 1, 1, node, created); err != nil {
		return err
	}
	dc.Status.LatestVersion = 1
	dc.Status.ObservedGeneration = dc.Generation
	dc.Status.Details = &dcv1.DeploymentDetails{Message: "config change"}
	if err := m.client.Status().Update(ctx, dc); err != nil {
		return fmt.Errorf("updating the status of deploymentconfig %s/%s: %w", dc.Namespace, name, err)
	}
	created.Add(1)
	return nil
}
