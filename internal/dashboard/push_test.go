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

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
)

// pushTimeout bounds the wait for a pushed update.
const pushTimeout = 10 * time.Second

// A page's event stream pushes its live part when a watched change alters
// it, and not what the page already shows.
func TestPushSendsWhatChanged(t *testing.T) {
	s := testServer(t, false, nil, canaryAtStep()...)
	shown, err := s.fragmentHash("dc", s.dcData(t.Context(), "shop", "web"))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	defer srv.Close()
	ctx, cancel := context.WithTimeout(t.Context(), pushTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/events/dc/shop/web?shown="+shown, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if got := resp.Header.Get("Content-Type"); got != "text/event-stream" {
		t.Fatalf("Content-Type %q, want text/event-stream", got)
	}

	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web-2-fghij", Namespace: "shop", Labels: map[string]string{dcv1.DeploymentSelectorLabel: "web-2"}},
		Status:     corev1.PodStatus{Phase: corev1.PodPending},
	}
	if err := s.store.scopes[""].pods.GetIndexer().Add(pod); err != nil {
		t.Fatal(err)
	}
	s.store.hub.notify("other-namespace", "")
	s.store.hub.notify("shop", "web")

	event, data := readEvent(t, bufio.NewScanner(resp.Body))
	if event != "update" {
		t.Fatalf("event %q, want update", event)
	}
	if !strings.Contains(data, "web-2-fghij") {
		t.Errorf("the first update lacks the new pod: the page's own content was pushed again:\n%s", data)
	}
}

// readEvent reads one server-sent event, skipping comments.
func readEvent(t *testing.T, sc *bufio.Scanner) (string, string) {
	t.Helper()
	var event string
	var data []string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "" && event != "":
			return event, strings.Join(data, "\n")
		case strings.HasPrefix(line, "event: "):
			event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			data = append(data, strings.TrimPrefix(line, "data: "))
		}
	}
	t.Fatalf("the stream ended without an event: %v", sc.Err())
	return "", ""
}

// TestStreamFramesUserText: whatever user text a pushed event carries
// (an annotation or an event's message in an update, a log line), a
// client that parses the stream as the SSE specification says, where a
// line ends at "\r\n", "\r" or "\n", gets one event of the type sent with
// that text, never an event cut short or one whose type the text chose.
func TestStreamFramesUserText(t *testing.T) {
	for _, text := range []string{
		"msg\revent: end\rdata: forged",
		"a\r\n\r\nb",
		"ends with a carriage return\r",
		"two\n\nblank lines\r\rbetween",
	} {
		rec := httptest.NewRecorder()
		st, ok := openStream(rec)
		if !ok {
			t.Fatal("no stream")
		}
		if err := st.send("line", text); err != nil {
			t.Fatal(err)
		}
		events := parseSSE(rec.Body.String())
		want := strings.NewReplacer("\r\n", "\n", "\r", "\n").Replace(text)
		if len(events) != 1 || events[0][0] != "line" || events[0][1] != want {
			t.Errorf("%q arrives as %q, want one line event with %q", text, events, want)
		}
	}
}

// parseSSE parses a stream as a browser's EventSource does: it returns
// each dispatched event's type and data.
func parseSSE(s string) [][2]string {
	var out [][2]string
	event, data, has := "", "", false
	lines := strings.Split(strings.NewReplacer("\r\n", "\n", "\r", "\n").Replace(s), "\n")
	for _, line := range lines {
		if line == "" {
			if has {
				out = append(out, [2]string{event, strings.TrimSuffix(data, "\n")})
			}
			event, data, has = "", "", false
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "event":
			event = value
		case "data":
			data += value + "\n"
			has = true
		}
	}
	return out
}

// TestWakeUpsPerDeploymentConfig: a change of one DeploymentConfig's
// objects wakes the pages of that DeploymentConfig and the lists of its
// namespace, not the pages of the others.
func TestWakeUpsPerDeploymentConfig(t *testing.T) {
	h := newHub()
	web, cancelWeb := h.subscribe("shop", "web")
	defer cancelWeb()
	api, cancelAPI := h.subscribe("shop", "api")
	defer cancelAPI()
	list, cancelList := h.subscribe("shop", "")
	defer cancelList()
	woken := func(s *subscription) bool {
		select {
		case <-s.changed:
			return true
		default:
			return false
		}
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-2-abcde", Labels: map[string]string{dcv1.DeploymentConfigSelectorLabel: "web"}}}
	deployer := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-2-deploy", Labels: map[string]string{dcv1.DeployerPodForDeploymentLabel: "web-2"}}}
	event := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: "shop"}, InvolvedObject: corev1.ObjectReference{Kind: "ReplicationController", Name: "web-12"}}
	for _, obj := range []any{pod, deployer, event} {
		h.handler().OnAdd(obj, false)
		if !woken(web) || !woken(list) || woken(api) {
			t.Errorf("%T: web woken %v, list %v, api %v; want web and the list only", obj, woken(web), woken(list), woken(api))
		}
	}
	h.notify("shop", "")
	if !woken(web) || !woken(api) || !woken(list) {
		t.Error("a change of no known DeploymentConfig did not wake every page of the namespace")
	}
}

// TestStripManagedFields: the watches keep no managedFields.
func TestStripManagedFields(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubelet"}}}}
	obj, err := stripManagedFields(pod)
	if err != nil || obj.(*corev1.Pod).ManagedFields != nil {
		t.Errorf("stripManagedFields = %v, %v", obj, err)
	}
}
