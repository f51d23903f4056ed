package rollout

import (
	"context"
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// History is what a watch saw of one value of an object (its replicas, a
// Service's selector), in order: each value that differs from the last.
type History[T comparable] struct {
	mu     sync.Mutex
	seen   []T
	cancel context.CancelFunc
	done   chan struct{}
}

// Record records value(obj) for each object watch w sees until Stop or
// ctx ends; objects value refuses, and deletions, are left out.
func Record[T comparable](ctx context.Context, w watch.Interface, value func(runtime.Object) (T, bool)) *History[T] {
	ctx, cancel := context.WithCancel(ctx)
	h := &History[T]{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(h.done)
		defer w.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-w.ResultChan():
				if !ok {
					return
				}
				if v, ok := value(ev.Object); ok && ev.Type != watch.Deleted {
					h.add(v)
				}
			}
		}
	}()
	return h
}

func (h *History[T]) add(v T) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if n := len(h.seen); n == 0 || h.seen[n-1] != v {
		h.seen = append(h.seen, v)
	}
}

// Seen returns the values seen so far.
func (h *History[T]) Seen() []T {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.seen)
}

// Stop ends the watch and returns the values seen.
func (h *History[T]) Stop() []T {
	h.cancel()
	<-h.done
	return h.Seen()
}
