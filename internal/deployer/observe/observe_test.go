package observe

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/watch"
)

func pod(name, rv string, phase corev1.PodPhase) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: rv, Labels: map[string]string{"app": "a"}},
		Status:     corev1.PodStatus{Phase: phase},
	}
}

// script serves gets from a queue of objects and watches from a queue of
// event lists; each watch delivers its events and then, when close is set,
// ends as a server would.
type script struct {
	mu      sync.Mutex
	gets    []*corev1.Pod
	watches [][]watch.Event
	close   bool
	nGets   int
	opts    []metav1.ListOptions
}

func (s *script) get(context.Context) (*corev1.Pod, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := min(s.nGets, len(s.gets)-1)
	s.nGets++
	return s.gets[i], nil
}

func (s *script) watch(_ context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.opts = append(s.opts, opts)
	w := watch.NewRaceFreeFake()
	if len(s.watches) == 0 {
		return w, nil
	}
	events := s.watches[0]
	s.watches = s.watches[1:]
	for _, ev := range events {
		w.Action(ev.Type, ev.Object)
	}
	if s.close {
		w.Stop()
	}
	return w, nil
}

func running(p *corev1.Pod) (bool, error) { return p.Status.Phase == corev1.PodRunning, nil }

func TestObject(t *testing.T) {
	gone := &metav1.Status{Status: metav1.StatusFailure, Code: 410, Reason: metav1.StatusReasonExpired}
	tests := []struct {
		name      string
		s         *script
		timeout   time.Duration
		wantRV    string
		wantErr   error
		wantGets  int
		wantWatch int
	}{
		{
			name:     "already there: no watch",
			s:        &script{gets: []*corev1.Pod{pod("p", "1", corev1.PodRunning)}},
			wantRV:   "1",
			wantGets: 1,
		},
		{
			name: "reached through the watch",
			s: &script{
				gets: []*corev1.Pod{pod("p", "1", corev1.PodPending)},
				watches: [][]watch.Event{{
					{Type: watch.Modified, Object: pod("other", "2", corev1.PodRunning)},
					{Type: watch.Bookmark, Object: pod("", "3", "")},
					{Type: watch.Modified, Object: pod("p", "4", corev1.PodRunning)},
				}},
			},
			wantRV:    "4",
			wantGets:  1,
			wantWatch: 1,
		},
		{
			name: "expired watch: read again",
			s: &script{
				gets:    []*corev1.Pod{pod("p", "1", corev1.PodPending), pod("p", "9", corev1.PodRunning)},
				watches: [][]watch.Event{{{Type: watch.Error, Object: gone}}},
			},
			wantRV:    "9",
			wantGets:  2,
			wantWatch: 1,
		},
		{
			name: "closed watch: read again",
			s: &script{
				gets:    []*corev1.Pod{pod("p", "1", corev1.PodPending), pod("p", "5", corev1.PodRunning)},
				watches: [][]watch.Event{nil},
				close:   true,
			},
			wantRV:    "5",
			wantGets:  2,
			wantWatch: 1,
		},
		{
			name: "deleted",
			s: &script{
				gets:    []*corev1.Pod{pod("p", "1", corev1.PodPending)},
				watches: [][]watch.Event{{{Type: watch.Deleted, Object: pod("p", "2", corev1.PodPending)}}},
			},
			wantErr:   ErrDeleted,
			wantGets:  1,
			wantWatch: 1,
		},
		{
			name:      "timeout",
			s:         &script{gets: []*corev1.Pod{pod("p", "1", corev1.PodPending)}},
			timeout:   50 * time.Millisecond,
			wantErr:   context.DeadlineExceeded,
			wantGets:  1,
			wantWatch: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			timeout := tt.timeout
			if timeout == 0 {
				timeout = 10 * time.Second
			}
			ctx, cancel := context.WithTimeout(t.Context(), timeout)
			defer cancel()
			got, err := Object(ctx, "p", tt.s.get, tt.s.watch, running)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if tt.wantErr == nil && got.ResourceVersion != tt.wantRV {
				t.Errorf("got resourceVersion %q, want %q", got.ResourceVersion, tt.wantRV)
			}
			if tt.s.nGets != tt.wantGets || len(tt.s.opts) != tt.wantWatch {
				t.Errorf("%d gets and %d watches, want %d and %d", tt.s.nGets, len(tt.s.opts), tt.wantGets, tt.wantWatch)
			}
			if len(tt.s.opts) > 0 {
				o := tt.s.opts[0]
				if o.FieldSelector != "metadata.name=p" || o.ResourceVersion != "1" {
					t.Errorf("first watch options %+v: want a name field selector and the get's resourceVersion", o)
				}
			}
		})
	}
}

func TestObjectWatchOpenExpired(t *testing.T) {
	gets := 0
	get := func(context.Context) (*corev1.Pod, error) {
		gets++
		if gets == 1 {
			return pod("p", "1", corev1.PodPending), nil
		}
		return pod("p", "7", corev1.PodRunning), nil
	}
	watchFn := func(context.Context, metav1.ListOptions) (watch.Interface, error) {
		return nil, apierrors.NewResourceExpired("too old resource version")
	}
	got, err := Object(t.Context(), "p", get, watchFn, running)
	if err != nil || got.ResourceVersion != "7" {
		t.Fatalf("got %v, %v; want the re-read pod", got, err)
	}
}

func TestCollection(t *testing.T) {
	selector := labels.SelectorFromSet(labels.Set{"app": "a"})
	other := pod("x", "3", corev1.PodRunning)
	other.Labels = map[string]string{"app": "b"}
	tests := []struct {
		name    string
		initial []*corev1.Pod
		events  []watch.Event
		wantErr bool
	}{
		{name: "empty at once", initial: nil},
		{
			name:    "all deleted",
			initial: []*corev1.Pod{pod("a", "1", corev1.PodRunning), pod("b", "1", corev1.PodRunning)},
			events: []watch.Event{
				{Type: watch.Deleted, Object: pod("a", "2", corev1.PodRunning)},
				{Type: watch.Added, Object: other},
				{Type: watch.Deleted, Object: pod("b", "4", corev1.PodRunning)},
			},
		},
		{
			name:    "relabelled out of the selector",
			initial: []*corev1.Pod{pod("x", "1", corev1.PodRunning)},
			events:  []watch.Event{{Type: watch.Modified, Object: other}},
		},
		{
			name:    "never empty",
			initial: []*corev1.Pod{pod("a", "1", corev1.PodRunning)},
			events:  []watch.Event{{Type: watch.Added, Object: pod("c", "2", corev1.PodRunning)}, {Type: watch.Deleted, Object: pod("a", "3", corev1.PodRunning)}},
			wantErr: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			list := func(_ context.Context, opts metav1.ListOptions) ([]*corev1.Pod, string, error) {
				if opts.LabelSelector != "app=a" {
					t.Errorf("list selector %q", opts.LabelSelector)
				}
				return tt.initial, "1", nil
			}
			watchFn := func(_ context.Context, opts metav1.ListOptions) (watch.Interface, error) {
				w := watch.NewRaceFreeFake()
				for _, ev := range tt.events {
					w.Action(ev.Type, ev.Object)
				}
				return w, nil
			}
			ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
			defer cancel()
			err := Collection(ctx, selector, list, watchFn, func(set map[string]*corev1.Pod) (bool, error) {
				return len(set) == 0, nil
			})
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %t", err, tt.wantErr)
			}
		})
	}
}
