package e2e

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
)

const (
	// dashboardStartTimeout bounds the dashboard's start: its first lists.
	dashboardStartTimeout = time.Minute
	// dashboardViewer is the user bound to a read-only Role.
	dashboardViewer = "dashboard-viewer"
)

// The dashboard in a real browser (Debian's chromium, driven by chromedp),
// against the suite's kwok cluster: a canary's step and pods change on the
// page without a reload, promote and cancel clicked on the page do what the
// CLI does, a user bound to a read-only Role sees every action refused as
// Forbidden, and --read-only shows none. Each page's screenshot is written
// to the test's artifact directory (go test -artifacts keeps them).
func TestDashboardInBrowser(t *testing.T) {
	t.Parallel()
	browser := newBrowser(t)
	ns := dcNamespace(t)
	createDC(t, ns, newDC("web", 5, canary(setWeight(20), pauseStep(0))))
	requireComplete(t, ns, "web", 1)
	admin := startDashboard(t)
	page := admin + "dc/" + ns + "/web"

	t.Run("list", func(t *testing.T) {
		browse(t, browser, admin+"?namespace="+ns)
		row := `document.querySelector('tr[data-dc="` + ns + `/web"] td:nth-child(%d)')?.textContent`
		waitPage(t, browser, "web listed with its revision", fmt.Sprintf(row, 4)+` === "1"`)
		waitPage(t, browser, "web ready, as its status settles", fmt.Sprintf(row, 5)+` === "5 / 5" && `+fmt.Sprintf(row, 6)+` === "True"`)
		screenshot(t, browser, "list")
	})

	t.Run("rollout changes live", func(t *testing.T) {
		browse(t, browser, page)
		markPage(t, browser)
		rollNext(t, ns, 2)
		waitPage(t, browser, "step 2 of 2, paused", `document.querySelector('#rollout-step')?.textContent.startsWith("Step 2 of 2, weight 20%: paused")`)
		waitPage(t, browser, "one pod of web-2 and four of web-1", podCount("web-2", 1)+" && "+podCount("web-1", 4))
		waitPage(t, browser, "the deployer's log streamed", `document.querySelector('#log').textContent.includes("Step 2 of 2: paused until 'kubectl dc rollout promote web'")`)
		requireSamePage(t, browser)
		screenshot(t, browser, "canary-paused")
	})

	t.Run("promote", func(t *testing.T) {
		markPage(t, browser)
		act(t, browser, "promote")
		waitPage(t, browser, "the API's answer", `document.querySelector('#result.ok')?.textContent === "deploymentconfig.apps.deployconfig.io/web promoting rollout #2 (ending the pause of step 2 of 2)"`)
		waitPage(t, browser, "rollout #2 complete", `document.querySelector('#rollout-phase')?.textContent === "Complete"`)
		waitPage(t, browser, "five pods of web-2", podCount("web-2", 5))
		requireSamePage(t, browser)
		requireComplete(t, ns, "web", 2)
		screenshot(t, browser, "promoted")
	})

	t.Run("cancel falls back", func(t *testing.T) {
		markPage(t, browser)
		rollNext(t, ns, 3)
		waitPage(t, browser, "rollout #3 paused at step 2", `document.querySelector('#rollout-version')?.textContent === "Rollout #3" && document.querySelector('#rollout-step')?.textContent.startsWith("Step 2 of 2")`)
		act(t, browser, "cancel")
		waitPage(t, browser, "the API's answer", `document.querySelector('#result.ok')?.textContent.includes("cancelling rollout #3")`)
		waitPage(t, browser, "rollout #3 failed", `document.querySelector('#rollout-phase')?.textContent === "Failed"`)
		waitPage(t, browser, "web-2 back at five pods, web-3 at none", podCount("web-2", 5)+" && "+podCount("web-3", 0))
		requireSamePage(t, browser)
		requirePhase(t, ns, "web", 3, dcv1.DeploymentPhaseFailed)
		screenshot(t, browser, "cancelled")
	})

	t.Run("diff", func(t *testing.T) {
		browse(t, browser, page+"/diff?from=2&to=3")
		waitPage(t, browser, "the template's change", `[...document.querySelectorAll('.diff-add')].some(e => e.textContent.includes('value: "3"'))`)
		screenshot(t, browser, "diff")
	})

	t.Run("accessibility", func(t *testing.T) {
		browse(t, browser, page)
		unnamed := evaluate[[]string](t, browser, `[...document.querySelectorAll('input:not([type=hidden]), select, button, a[href]')]
			.filter(e => !(e.labels?.length || e.getAttribute('aria-label') || e.textContent.trim()))
			.map(e => e.outerHTML)`)
		if len(unnamed) > 0 {
			t.Errorf("controls without a label or text: %v", unnamed)
		}
		if err := chromedp.Do(browser, chromedp.KeyEvent("\t")); err != nil {
			t.Fatal(err)
		}
		if got := evaluate[string](t, browser, `document.activeElement.textContent`); got != "Skip to the content" {
			t.Errorf("the first Tab focuses %q, want the skip link", got)
		}
	})

	t.Run("cross-site post refused", func(t *testing.T) {
		browse(t, browser, page)
		got := evaluate[string](t, browser, `fetch(location.pathname + "/actions", {method: "POST", body: new URLSearchParams({action: "latest", token: "forged"})}).then(r => r.status + " " + r.statusText)`)
		if got != "403 Forbidden" {
			t.Errorf("a post without the page's token: %s, want 403 Forbidden", got)
		}
		if dc := getDC(t, ns, "web"); dc.Status.LatestVersion != 3 {
			t.Errorf("after the refused post, latestVersion is %d, want 3", dc.Status.LatestVersion)
		}
	})

	t.Run("analysis chart", func(t *testing.T) {
		ns := dcNamespace(t)
		suite.exporter.SetTraffic(ns, "web-2", 10, 1)
		waitRated(t, suite.prometheus.URL(), ns, "web-2")
		createDC(t, ns, inconclusiveCanary())
		requireComplete(t, ns, "web", 1)
		browse(t, browser, admin+"dc/"+ns+"/web")
		rollNext(t, ns, 2)
		waitPage(t, browser, "the step-2 analysis inconclusive, with its measurements charted",
			`document.querySelector('.analysis')?.textContent.includes("Outcome: Inconclusive") && document.querySelectorAll('figure.metric circle').length >= 1`)
		screenshot(t, browser, "analysis")
	})

	t.Run("read-only role", func(t *testing.T) {
		bindDashboardViewer(t, ns)
		viewer := startDashboard(t, "--as", dashboardViewer, "--namespace", ns)
		browse(t, browser, viewer+"dc/"+ns+"/web")
		actions := evaluate[[]string](t, browser, `[...document.querySelectorAll('button[data-action]')].map(b => b.dataset.action)`)
		if len(actions) == 0 {
			t.Fatal("the viewer's dashboard shows no action to try")
		}
		for _, name := range actions {
			act(t, browser, name)
			waitPage(t, browser, name+" refused as Forbidden", `document.querySelector('#result.forbidden')?.textContent.includes('User "`+dashboardViewer+`" cannot')`)
			if name == actions[0] {
				screenshot(t, browser, "forbidden")
			}
			evaluate[bool](t, browser, `(document.querySelector('#result').textContent = '', true)`)
		}
		dc := getDC(t, ns, "web")
		if dc.Status.LatestVersion != 3 || dc.Spec.Paused {
			t.Errorf("after the viewer's actions %v, latestVersion is %d and paused %t, want 3 and false", actions, dc.Status.LatestVersion, dc.Spec.Paused)
		}
	})

	t.Run("the namespaces a user may list", func(t *testing.T) {
		other := newNamespace(t)
		createIdleDCs(t, other, 1)
		user := bindNamespacedReader(t, ns, other)
		lister := startDashboard(t, "--as", user)
		browse(t, browser, lister)
		waitPage(t, browser, "web and app-000, and nothing else",
			`[...document.querySelectorAll('table.dcs tbody tr')].map(r => r.dataset.dc).sort().join(" ") === "`+strings.Join(sortedPair(ns+"/web", other+"/app-000"), " ")+`"`)
		options := evaluate[[]string](t, browser, `[...document.querySelectorAll('#filter-namespace option')].map(o => o.value).filter(v => v)`)
		if want := sortedPair(ns, other); strings.Join(options, " ") != strings.Join(want, " ") {
			t.Errorf("the namespace filter offers %v, want %v", options, want)
		}
		// The user may not list RolloutPolicies: the list says so.
		waitPage(t, browser, "the policies left out", `document.querySelector('#live').textContent.includes("rolloutpolicies in namespace `+ns+`")`)
	})

	t.Run("read-only flag", func(t *testing.T) {
		readOnly := startDashboard(t, "--read-only")
		browse(t, browser, readOnly+"dc/"+ns+"/web")
		waitPage(t, browser, "the page", `document.querySelector('#rollout-phase')?.textContent === "Failed"`)
		if n := evaluate[int](t, browser, `document.querySelectorAll('form.action').length`); n != 0 {
			t.Errorf("--read-only shows %d action forms, want none", n)
		}
		got := evaluate[string](t, browser, `fetch(location.pathname + "/actions", {method: "POST", body: new URLSearchParams({action: "latest", token: document.querySelector('meta[name="dc-token"]').content})}).then(r => r.json()).then(r => r.message)`)
		if !strings.Contains(got, "read-only") {
			t.Errorf("an action posted to a --read-only dashboard: %q, want a read-only refusal", got)
		}
		screenshot(t, browser, "read-only")
	})

	t.Run("undo", func(t *testing.T) { testUndo(t, browser, page, ns) })
}

// undo is last: it starts rollout #4, which the subtests above do not
// expect.
func testUndo(t *testing.T, browser context.Context, page, ns string) {
	browse(t, browser, page)
	inLive(t, browser, "choosing revision 1", `document.querySelector('#undo-revision')?.value === "1"`, chromedp.SetValue(chromedp.CSS(`#undo-revision`), "1"))
	act(t, browser, "undo")
	waitPage(t, browser, "the API's answer", `document.querySelector('#result.ok')?.textContent === "deploymentconfig.apps.deployconfig.io/web rolled back to revision 1"`)
	waitPage(t, browser, "rollout #4", `document.querySelector('#rollout-version')?.textContent === "Rollout #4"`)
	if got := getDC(t, ns, "web").Spec.Template.Spec.Containers[0].Env; len(got) != 0 {
		t.Errorf("after undo to revision 1, the template's env is %v, want none (revision 1's)", got)
	}
}

// chromium finds Debian's chromium, which hack/browser-deps.sh installs
// (make test-e2e runs it); without it the test fails, saying so.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if path, err := exec.LookPath(name); err == nil {
			return path
		}
	}
	t.Fatal("the dashboard's browser test needs Debian's chromium, which is not installed: run hack/browser-deps.sh as root (apt-get install chromium)")
	return ""
}

// newBrowser starts a headless chromium for the test.
func newBrowser(t *testing.T) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium(t)),
		// The suite runs as root, where chromium's sandbox cannot start.
		chromedp.NoSandbox,
		chromedp.WindowSize(1280, 900),
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancelAlloc)
	ctx, cancel := chromedp.NewContext(allocCtx)
	t.Cleanup(cancel)
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	return ctx
}

// startDashboard runs `kubectl dc dashboard --port 0 ARGS` against the
// suite's cluster until the test ends and returns its URL.
func startDashboard(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, filepath.Join(suite.binDir, "kubectl-dc"), append([]string{"dashboard", "--port", "0"}, args...)...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+suite.cluster.Kubeconfig)
	// The dashboard goes with the test binary, should it die.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr syncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("starting the dashboard: %v", err)
	}
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("dashboard %v stderr:\n%s", args, stderr.String())
		}
	})
	urls := make(chan string, 1)
	go func() {
		scanner := bufio.NewScanner(stdout)
		for scanner.Scan() {
			if rest, ok := strings.CutPrefix(scanner.Text(), "Serving the dashboard at "); ok {
				urls <- strings.Fields(rest)[0]
			}
		}
	}()
	select {
	case url := <-urls:
		return url
	case <-time.After(dashboardStartTimeout):
		t.Fatalf("the dashboard %v did not print its URL within %s; stderr:\n%s", args, dashboardStartTimeout, stderr.String())
	}
	return ""
}

// syncBuffer is a bytes.Buffer that a process writes while the test reads.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// browse opens a page.
func browse(t *testing.T, ctx context.Context, url string) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.Navigate(url)); err != nil {
		t.Fatalf("opening %s: %v", url, err)
	}
}

// waitPage waits until a JavaScript condition holds on the page, checking
// it on every change of the page.
func waitPage(t *testing.T, ctx context.Context, what, condition string) {
	t.Helper()
	_, err := chromedp.Run(ctx, chromedp.Poll[bool](condition, chromedp.WithPollingMutation(), chromedp.WithPollingTimeout(rolloutTimeout)))
	if err != nil {
		screenshot(t, ctx, "failed-"+strings.Map(fileChar, what))
		text, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.innerText`))
		t.Fatalf("waiting for the page to show %s: %v; the page:\n%s", what, err, text)
	}
}

// fileChar keeps a character in a file name, or replaces it.
func fileChar(r rune) rune {
	if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' {
		return r
	}
	return '-'
}

// evaluate runs JavaScript on the page (awaiting a promise) and returns its
// value.
func evaluate[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("evaluating %s: %v", js, err)
	}
	return v
}

// markPage marks the loaded page; requireSamePage checks the mark is still
// there, which it would not be after a reload.
func markPage(t *testing.T, ctx context.Context) {
	t.Helper()
	evaluate[bool](t, ctx, `(window.dashboardTestMark = true)`)
}

func requireSamePage(t *testing.T, ctx context.Context) {
	t.Helper()
	if !evaluate[bool](t, ctx, `window.dashboardTestMark === true`) {
		t.Fatal("the page was reloaded; live updates must not need a reload")
	}
}

// podCount is a condition: the version rc shows n pods.
func podCount(rc string, n int) string {
	return `document.querySelector('[data-version="` + rc + `"] .pod-count')?.textContent === "` + strconv.Itoa(n) + `"`
}

// act clicks an action's button and confirms it in the dialog.
func act(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	inLive(t, ctx, "clicking "+name, `document.querySelector('#confirm').open`, chromedp.Click(chromedp.CSS(`#act-`+name)))
	err := chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`#confirm-yes`)),
		chromedp.WaitNotVisible(chromedp.CSS(`#confirm`)),
	)
	if err != nil {
		t.Fatalf("confirming %s: %v", name, err)
	}
}

// inLive runs a browser action on the page's live part until condition
// holds: a change pushed by the server replaces the part, and an element
// found just before may be gone when the action reaches it.
func inLive(t *testing.T, ctx context.Context, what, condition string, action chromedp.Action[chromedp.Void]) {
	t.Helper()
	var last error
	err := poll(t, time.Minute, func(context.Context) (bool, error) {
		if last = chromedp.Do(ctx, action); last != nil {
			return false, nil
		}
		done, err := chromedp.Run(ctx, chromedp.Evaluate[bool](condition))
		return done, err
	})
	if err != nil {
		t.Fatalf("%s: %v (last: %v)", what, err, last)
	}
}

// screenshot writes the page's screenshot as NAME.png into the test's
// artifact directory.
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Errorf("screenshot %s: %v", name, err)
		return
	}
	path := filepath.Join(t.ArtifactDir(), name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Errorf("screenshot %s: %v", name, err)
		return
	}
	t.Logf("screenshot: %s", path)
}

// bindDashboardViewer gives dashboardViewer a Role that reads
// DeploymentConfigs and RolloutPolicies, and Kubernetes' view ClusterRole,
// in ns: it may look at everything the dashboard shows and change nothing.
func bindDashboardViewer(t *testing.T, ns string) {
	t.Helper()
	rbac := clientset().RbacV1()
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "dc-reader"},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{dcv1.GroupVersion.Group}, Resources: []string{"deploymentconfigs", "rolloutpolicies"}, Verbs: []string{"get", "list", "watch"}},
		},
	}
	if _, err := rbac.Roles(ns).Create(t.Context(), role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	subjects := []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: dashboardViewer}}
	for _, b := range []*rbacv1.RoleBinding{
		{ObjectMeta: metav1.ObjectMeta{Name: "dc-reader"}, Subjects: subjects, RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name}},
		{ObjectMeta: metav1.ObjectMeta{Name: "viewer-view"}, Subjects: subjects, RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "view"}},
	} {
		if _, err := rbac.RoleBindings(ns).Create(t.Context(), b, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// sortedPair is a and b in order.
func sortedPair(a, b string) []string {
	if b < a {
		return []string{b, a}
	}
	return []string{a, b}
}

// bindNamespacedReader makes a user who may list namespaces and read
// DeploymentConfigs, RCs, pods and events in the given namespaces only, and
// returns its name.
func bindNamespacedReader(t *testing.T, namespaces ...string) string {
	t.Helper()
	rbac := clientset().RbacV1()
	user := "dashboard-lister-" + namespaces[0]
	read := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: user + "-read"},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{dcv1.GroupVersion.Group}, Resources: []string{"deploymentconfigs"}, Verbs: []string{"get", "list", "watch"}},
			{APIGroups: []string{""}, Resources: []string{"replicationcontrollers", "pods", "pods/log", "events"}, Verbs: []string{"get", "list", "watch"}},
		},
	}
	list := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: user + "-namespaces"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: []string{"list"}}},
	}
	subjects := []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}}
	listBinding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: list.Name}, Subjects: subjects,
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: list.Name}}
	for _, role := range []*rbacv1.ClusterRole{read, list} {
		if _, err := rbac.ClusterRoles().Create(t.Context(), role, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = rbac.ClusterRoles().Delete(context.Background(), role.Name, metav1.DeleteOptions{}) })
	}
	if _, err := rbac.ClusterRoleBindings().Create(t.Context(), listBinding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = rbac.ClusterRoleBindings().Delete(context.Background(), listBinding.Name, metav1.DeleteOptions{})
	})
	for _, ns := range namespaces {
		b := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: read.Name}, Subjects: subjects,
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: read.Name}}
		if _, err := rbac.RoleBindings(ns).Create(t.Context(), b, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	return user
}
