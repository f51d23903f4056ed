package imagetrigger

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	clocktesting "k8s.io/utils/clock/testing"
)

// fakeRegistry answers lookups from a table and counts them.
type fakeRegistry struct {
	mu      sync.Mutex
	answers map[string]answerOf
	calls   map[string]int
	// release, when set, holds every lookup until it is closed.
	release chan struct{}
}

type answerOf struct {
	digest v1.Hash
	err    error
}

func newFakeRegistry() *fakeRegistry {
	return &fakeRegistry{answers: map[string]answerOf{}, calls: map[string]int{}}
}

func (f *fakeRegistry) set(tag string, digest v1.Hash, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.answers[mustTag(tag).Name()] = answerOf{digest: digest, err: err}
}

func (f *fakeRegistry) lookup(ctx context.Context, tag name.Tag, auth authn.Authenticator) (v1.Hash, error) {
	f.mu.Lock()
	f.calls[tag.Name()]++
	release := f.release
	a := f.answers[tag.Name()]
	f.mu.Unlock()
	if release != nil {
		select {
		case <-release:
		case <-ctx.Done():
			return v1.Hash{}, ctx.Err()
		}
	}
	return a.digest, a.err
}

func (f *fakeRegistry) callCount(tag string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[mustTag(tag).Name()]
}

// notifications collects what a resolver tells its subscribers.
type notifications struct {
	mu  sync.Mutex
	got []types.NamespacedName
	ch  chan struct{}
}

func newNotifications() *notifications { return &notifications{ch: make(chan struct{}, 100)} }

func (n *notifications) notify(_ context.Context, dcs []types.NamespacedName) {
	n.mu.Lock()
	n.got = append(n.got, dcs...)
	n.mu.Unlock()
	n.ch <- struct{}{}
}

// take returns and forgets the DeploymentConfigs notified so far, sorted.
func (n *notifications) take() []types.NamespacedName {
	n.mu.Lock()
	defer n.mu.Unlock()
	got := n.got
	n.got = nil
	slices.SortFunc(got, func(a, b types.NamespacedName) int { return strings.Compare(a.String(), b.String()) })
	return got
}

func mustTag(s string) name.Tag {
	t, err := name.NewTag(s)
	if err != nil {
		panic(err) // test input only
	}
	return t
}

func hashOf(c string) v1.Hash { return v1.Hash{Algorithm: "sha256", Hex: strings.Repeat(c, 64)} }

func sub(tag, credential string) Subscription {
	return Subscription{Tag: mustTag(tag), Auth: authn.Anonymous, Credential: credential}
}

func dcKey(name string) types.NamespacedName {
	return types.NamespacedName{Namespace: "ns", Name: name}
}

var epoch = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

func newTestResolver(f *fakeRegistry, n *notifications, clk *clocktesting.FakeClock) *Resolver {
	return NewResolver(ResolverOptions{
		Interval: time.Minute,
		Lookup:   f.lookup,
		Notify:   n.notify,
		Clock:    clk,
		Rand:     func() float64 { return 0 },
	})
}

// pollDue runs every due lookup, as Start would, and waits for them.
func pollDue(t *testing.T, r *Resolver) int {
	t.Helper()
	due := r.takeDue(r.opts.Clock.Now())
	for _, e := range due {
		r.lookup(context.Background(), e)
	}
	return len(due)
}

func TestResolverSharesOneLookupPerTagAndCredential(t *testing.T) {
	f, n := newFakeRegistry(), newNotifications()
	r := newTestResolver(f, n, clocktesting.NewFakeClock(epoch))
	f.set("r.example.com/app:1", hashOf("a"), nil)
	f.set("r.example.com/db:1", hashOf("b"), nil)

	r.Subscribe(dcKey("one"), []Subscription{sub("r.example.com/app:1", "anonymous"), sub("r.example.com/db:1", "anonymous")})
	r.Subscribe(dcKey("two"), []Subscription{sub("r.example.com/app:1", "anonymous")})
	r.Subscribe(dcKey("three"), []Subscription{sub("r.example.com/app:1", "secret-x")})

	if got := pollDue(t, r); got != 3 {
		t.Fatalf("%d lookups due, want 3 (app anonymous, app with a credential, db)", got)
	}
	if got := f.callCount("r.example.com/app:1"); got != 2 {
		t.Errorf("app looked up %d times, want 2 (one per credential)", got)
	}
	if got := f.callCount("r.example.com/db:1"); got != 1 {
		t.Errorf("db looked up %d times, want 1", got)
	}
	want := []types.NamespacedName{dcKey("one"), dcKey("one"), dcKey("three"), dcKey("two")}
	if got := n.take(); !slices.Equal(got, want) {
		t.Errorf("notified %v, want %v", got, want)
	}
	results := r.Subscribe(dcKey("two"), []Subscription{sub("r.example.com/app:1", "anonymous")})
	if results[0].Digest != hashOf("a") || results[0].Err != nil || results[0].Checked.IsZero() {
		t.Errorf("a subscriber sees %+v", results[0])
	}
	if got := pollDue(t, r); got != 0 {
		t.Errorf("%d lookups due before the interval", got)
	}
}

func TestResolverNotifiesOnlyWhenTheResultChanges(t *testing.T) {
	f, n := newFakeRegistry(), newNotifications()
	clk := clocktesting.NewFakeClock(epoch)
	r := newTestResolver(f, n, clk)
	const tag = "r.example.com/app:1"
	unauthorized := &transport.Error{StatusCode: http.StatusUnauthorized}
	steps := []struct {
		name   string
		digest v1.Hash
		err    error
		notify bool
	}{
		{name: "first result", digest: hashOf("a"), notify: true},
		{name: "same digest", digest: hashOf("a"), notify: false},
		{name: "new digest", digest: hashOf("b"), notify: true},
		{name: "error", err: unauthorized, notify: true},
		{name: "same error", err: unauthorized, notify: false},
		{name: "recovered with the same digest", digest: hashOf("b"), notify: true},
	}
	r.Subscribe(dcKey("web"), []Subscription{sub(tag, "anonymous")})
	for _, s := range steps {
		f.set(tag, s.digest, s.err)
		if got := pollDue(t, r); got != 1 {
			t.Fatalf("%s: %d lookups due, want 1", s.name, got)
		}
		if got := len(n.take()) > 0; got != s.notify {
			t.Errorf("%s: notified %v, want %v", s.name, got, s.notify)
		}
		clk.Step(time.Minute)
	}
	res := r.Subscribe(dcKey("web"), []Subscription{sub(tag, "anonymous")})[0]
	if res.Digest != hashOf("b") || res.Err != nil {
		t.Errorf("result %+v", res)
	}
}

func TestResolverKeepsTheLastDigestWhileLookupsFail(t *testing.T) {
	f, n := newFakeRegistry(), newNotifications()
	clk := clocktesting.NewFakeClock(epoch)
	r := newTestResolver(f, n, clk)
	const tag = "r.example.com/app:1"
	r.Subscribe(dcKey("web"), []Subscription{sub(tag, "anonymous")})
	f.set(tag, hashOf("a"), nil)
	pollDue(t, r)
	clk.Step(time.Minute)
	f.set(tag, v1.Hash{}, &transport.Error{StatusCode: http.StatusNotFound})
	pollDue(t, r)
	res := r.Subscribe(dcKey("web"), []Subscription{sub(tag, "anonymous")})[0]
	if res.Digest != hashOf("a") || res.Err == nil || !res.Resolved() {
		t.Errorf("result %+v: want the last digest and the error", res)
	}
}

func TestResolverBacksOffFromAFailingRegistry(t *testing.T) {
	f, n := newFakeRegistry(), newNotifications()
	clk := clocktesting.NewFakeClock(epoch)
	r := newTestResolver(f, n, clk) // backoff base 7.5s (interval/8), no jitter
	down := &transport.Error{StatusCode: http.StatusServiceUnavailable}
	f.set("down.example.com/app:1", v1.Hash{}, down)
	f.set("down.example.com/db:1", v1.Hash{}, down)
	f.set("up.example.com/app:1", hashOf("a"), nil)

	r.Subscribe(dcKey("a"), []Subscription{sub("down.example.com/app:1", "anonymous")})
	r.Subscribe(dcKey("b"), []Subscription{sub("up.example.com/app:1", "anonymous")})
	if got := pollDue(t, r); got != 2 {
		t.Fatalf("%d lookups due, want 2", got)
	}
	// A new tag on the failing registry waits for its backoff; one on
	// another registry does not.
	r.Subscribe(dcKey("c"), []Subscription{sub("down.example.com/db:1", "anonymous"), sub("up.example.com/app:1", "anonymous")})
	if got := pollDue(t, r); got != 0 {
		t.Errorf("%d lookups started on a registry backing off", got)
	}
	if got := r.untilNext(clk.Now()); got != 7500*time.Millisecond {
		t.Errorf("next lookup in %v, want the backoff of 7.5s", got)
	}
	clk.Step(7500 * time.Millisecond)
	if got := pollDue(t, r); got != 2 {
		t.Errorf("%d lookups due after the backoff, want both tags of the failing registry", got)
	}
	// The second failure in a row doubles the backoff.
	if got := r.untilNext(clk.Now()); got != 15*time.Second {
		t.Errorf("next lookup in %v, want 15s", got)
	}
	f.set("down.example.com/app:1", hashOf("b"), nil)
	f.set("down.example.com/db:1", hashOf("c"), nil)
	clk.Step(15 * time.Second)
	pollDue(t, r)
	if _, blocked := r.backoff.blocked("down.example.com", clk.Now()); blocked {
		t.Error("the registry still backs off after a success")
	}
}

func TestResolverDoesNotBackOffForRepositoryErrors(t *testing.T) {
	f, n := newFakeRegistry(), newNotifications()
	clk := clocktesting.NewFakeClock(epoch)
	r := newTestResolver(f, n, clk)
	f.set("r.example.com/secret:1", v1.Hash{}, &transport.Error{StatusCode: http.StatusUnauthorized})
	f.set("r.example.com/app:1", hashOf("a"), nil)
	r.Subscribe(dcKey("a"), []Subscription{sub("r.example.com/secret:1", "anonymous")})
	pollDue(t, r)
	r.Subscribe(dcKey("b"), []Subscription{sub("r.example.com/app:1", "anonymous")})
	if got := pollDue(t, r); got != 1 {
		t.Errorf("%d lookups due, want 1: an unauthorized repository must not hold up the registry", got)
	}
	if got := r.untilNext(clk.Now()); got != time.Minute {
		t.Errorf("the failed lookup is retried in %v, want the poll interval", got)
	}
}

func TestResolverUnsubscribeDropsUnwatchedTags(t *testing.T) {
	f, n := newFakeRegistry(), newNotifications()
	r := newTestResolver(f, n, clocktesting.NewFakeClock(epoch))
	r.Subscribe(dcKey("a"), []Subscription{sub("r.example.com/app:1", "anonymous"), sub("r.example.com/db:1", "anonymous")})
	r.Subscribe(dcKey("b"), []Subscription{sub("r.example.com/app:1", "anonymous")})
	r.Subscribe(dcKey("a"), []Subscription{sub("r.example.com/app:1", "anonymous")})
	if got := len(r.entries); got != 1 {
		t.Errorf("%d tags watched after a dropped its db trigger, want 1", got)
	}
	r.Unsubscribe(dcKey("a"))
	if got := len(r.entries); got != 1 {
		t.Errorf("%d tags watched while b still watches app, want 1", got)
	}
	r.Unsubscribe(dcKey("b"))
	r.Unsubscribe(dcKey("never"))
	if len(r.entries) != 0 || len(r.subs) != 0 {
		t.Errorf("entries %v, subscriptions %v left", r.entries, r.subs)
	}
}

func TestResolverRefresh(t *testing.T) {
	f, n := newFakeRegistry(), newNotifications()
	clk := clocktesting.NewFakeClock(epoch)
	r := newTestResolver(f, n, clk)
	const tag = "r.example.com/app:1"
	f.set(tag, hashOf("a"), nil)

	// Without subscribers the result is not kept.
	if res := r.Refresh(context.Background(), sub(tag, "anonymous")); res.Digest != hashOf("a") {
		t.Fatalf("Refresh = %+v", res)
	}
	if len(r.entries) != 0 {
		t.Error("an unsubscribed refresh left an entry")
	}

	// With subscribers, it ignores the schedule and tells them.
	r.Subscribe(dcKey("web"), []Subscription{sub(tag, "anonymous")})
	pollDue(t, r)
	n.take()
	f.set(tag, hashOf("b"), nil)
	if res := r.Refresh(context.Background(), sub(tag, "anonymous")); res.Digest != hashOf("b") {
		t.Fatalf("Refresh = %+v", res)
	}
	if got := n.take(); !slices.Equal(got, []types.NamespacedName{dcKey("web")}) {
		t.Errorf("notified %v", got)
	}

	// A refresh during a running lookup shares it.
	f.mu.Lock()
	f.release = make(chan struct{})
	f.mu.Unlock()
	clk.Step(time.Minute)
	due := r.takeDue(clk.Now())
	if len(due) != 1 {
		t.Fatalf("%d lookups due", len(due))
	}
	go r.lookup(context.Background(), due[0])
	done := make(chan Result)
	go func() { done <- r.Refresh(context.Background(), sub(tag, "anonymous")) }()
	waitUntil(t, "the refresh to wait for the running lookup", func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		return due[0].waiting == 1
	})
	close(f.release)
	if res := <-done; res.Digest != hashOf("b") {
		t.Errorf("joined refresh = %+v", res)
	}
	if got := f.callCount(tag); got != 4 {
		t.Errorf("%d lookups, want 4 (the joined refresh made none)", got)
	}
}

func TestResolverStartPollsOnSchedule(t *testing.T) {
	f, n := newFakeRegistry(), newNotifications()
	clk := clocktesting.NewFakeClock(epoch)
	r := newTestResolver(f, n, clk)
	const tag = "r.example.com/app:1"
	f.set(tag, hashOf("a"), nil)
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan error)
	go func() { stopped <- r.Start(ctx) }()
	defer func() {
		cancel()
		if err := <-stopped; err != nil {
			t.Errorf("Start: %v", err)
		}
	}()

	r.Subscribe(dcKey("web"), []Subscription{sub(tag, "anonymous")})
	waitNotified(t, n)
	f.set(tag, hashOf("b"), nil)
	// Just before the interval nothing happens.
	waitTimer(t, clk)
	clk.Step(time.Minute - time.Second)
	waitTimer(t, clk)
	if got := f.callCount(tag); got != 1 {
		t.Fatalf("%d lookups before the interval, want 1", got)
	}
	clk.Step(time.Second)
	waitNotified(t, n)
	if got := f.callCount(tag); got != 2 {
		t.Errorf("%d lookups after the interval, want 2", got)
	}
}

func waitNotified(t *testing.T, n *notifications) {
	t.Helper()
	select {
	case <-n.ch:
	case <-time.After(10 * time.Second):
		t.Fatal("no notification")
	}
}

// waitUntil polls cond until it holds, for at most 10 seconds.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(t.Context(), time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return cond(), nil
	})
	if err != nil {
		t.Fatalf("timed out waiting for %s", what)
	}
}

// waitTimer waits until the scheduling loop is waiting on the clock.
func waitTimer(t *testing.T, clk *clocktesting.FakeClock) {
	t.Helper()
	waitUntil(t, "the resolver to wait on its clock", clk.HasWaiters)
}

func TestResultResolved(t *testing.T) {
	if (Result{}).Resolved() || (Result{Err: errors.New("x")}).Resolved() {
		t.Error("an empty result counts as resolved")
	}
	if !(Result{Digest: hashOf("a")}).Resolved() {
		t.Error("a digest does not count as resolved")
	}
}
