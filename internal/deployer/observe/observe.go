// Package observe waits for API objects to reach a state by watching them,
// never by polling: it reads the current state, watches from that
// resourceVersion, and when the watch ends or expires reads the state again
// and watches anew.
package observe

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/watch"
)

// ErrDeleted is returned (wrapped) when the watched object is deleted while
// waiting for it.
var ErrDeleted = errors.New("object was deleted")

// minWatchLife is how long a watch must have lasted for it to be reopened at
// once. A watch the server closes sooner (an overloaded or restarting API
// server) is reopened after the rest of this delay, so that a misbehaving
// server does not turn the wait into a busy loop.
const minWatchLife = time.Second

// WatchFunc opens a watch with the given options.
type WatchFunc func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)

// Object waits until cond accepts the named object and returns the object
// cond accepted. get reads the object; watchFn watches objects of its kind
// and namespace (Object adds a field selector on the name). A deleted object
// ends the wait with ErrDeleted; the context bounds the wait.
func Object[T metav1.Object](ctx context.Context, name string, get func(context.Context) (T, error),
	watchFn WatchFunc, cond func(T) (bool, error)) (T, error) {
	var zero T
	for {
		obj, err := get(ctx)
		if err != nil {
			return zero, err
		}
		done, err := cond(obj)
		if err != nil || done {
			return obj, err
		}
		opts := metav1.ListOptions{
			FieldSelector:   fields.OneTermEqualSelector("metadata.name", name).String(),
			ResourceVersion: obj.GetResourceVersion(),
		}
		obj, done, err = watchObject(ctx, name, opts, watchFn, cond)
		if err != nil || done {
			return obj, err
		}
		logr.FromContextOrDiscard(ctx).V(1).Info("watch ended, reading the object again", "name", name)
	}
}

// watchObject runs one watch of the named object. It returns done when cond
// accepted an object, and neither done nor an error when the watch ended and
// the caller should read the object again.
func watchObject[T metav1.Object](ctx context.Context, name string, opts metav1.ListOptions,
	watchFn WatchFunc, cond func(T) (bool, error)) (T, bool, error) {
	var zero T
	opened := time.Now()
	w, err := watchFn(ctx, opts)
	if err != nil {
		if isExpired(err) {
			return zero, false, nil
		}
		return zero, false, fmt.Errorf("watch %s: %w", name, err)
	}
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return zero, false, ctx.Err()
		case ev, ok := <-w.ResultChan():
			if !ok {
				return zero, false, settle(ctx, opened)
			}
			obj, done, retry, err := objectEvent[T](name, ev, cond)
			if err != nil || done {
				return obj, done, err
			}
			if retry {
				return zero, false, settle(ctx, opened)
			}
		}
	}
}

// objectEvent applies one watch event. retry means the watch is no longer
// usable and the object must be read again.
func objectEvent[T metav1.Object](name string, ev watch.Event, cond func(T) (bool, error)) (obj T, done, retry bool, err error) {
	switch ev.Type {
	case watch.Error:
		return obj, false, true, nil
	case watch.Bookmark:
		return obj, false, false, nil
	}
	obj, ok := ev.Object.(T)
	// Field selectors are a filter the server applies; check the name
	// anyway so that a server (or fake) that ignores them cannot confuse us.
	if !ok || obj.GetName() != name {
		return obj, false, false, nil
	}
	if ev.Type == watch.Deleted {
		return obj, false, false, fmt.Errorf("%s: %w", name, ErrDeleted)
	}
	done, err = cond(obj)
	return obj, done, false, err
}

// ListFunc lists objects with the given options and returns them with the
// list's resourceVersion.
type ListFunc[T metav1.Object] func(ctx context.Context, opts metav1.ListOptions) ([]T, string, error)

// Collection waits until cond accepts the set of objects, keyed by name,
// that match selector. It lists them, then keeps the set current from a
// watch, listing again whenever the watch ends or expires.
func Collection[T metav1.Object](ctx context.Context, selector labels.Selector, list ListFunc[T],
	watchFn WatchFunc, cond func(map[string]T) (bool, error)) error {
	for {
		items, rv, err := list(ctx, metav1.ListOptions{LabelSelector: selector.String()})
		if err != nil {
			return err
		}
		set := make(map[string]T, len(items))
		for _, item := range items {
			set[item.GetName()] = item
		}
		done, err := cond(set)
		if err != nil || done {
			return err
		}
		opts := metav1.ListOptions{LabelSelector: selector.String(), ResourceVersion: rv}
		done, err = watchCollection(ctx, selector, set, opts, watchFn, cond)
		if err != nil || done {
			return err
		}
		logr.FromContextOrDiscard(ctx).V(1).Info("watch ended, listing again", "selector", selector.String())
	}
}

// watchCollection keeps set current from one watch until cond accepts it or
// the watch ends.
func watchCollection[T metav1.Object](ctx context.Context, selector labels.Selector, set map[string]T,
	opts metav1.ListOptions, watchFn WatchFunc, cond func(map[string]T) (bool, error)) (bool, error) {
	opened := time.Now()
	w, err := watchFn(ctx, opts)
	if err != nil {
		if isExpired(err) {
			return false, nil
		}
		return false, fmt.Errorf("watch %s: %w", selector, err)
	}
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case ev, ok := <-w.ResultChan():
			if !ok || ev.Type == watch.Error {
				return false, settle(ctx, opened)
			}
			if !applyEvent(selector, set, ev) {
				continue
			}
			if done, err := cond(set); err != nil || done {
				return done, err
			}
		}
	}
}

// applyEvent updates set from one event and reports whether it changed.
func applyEvent[T metav1.Object](selector labels.Selector, set map[string]T, ev watch.Event) bool {
	obj, ok := ev.Object.(T)
	if !ok {
		return false
	}
	switch {
	case ev.Type == watch.Deleted || !selector.Matches(labels.Set(obj.GetLabels())):
		if _, had := set[obj.GetName()]; !had {
			return false
		}
		delete(set, obj.GetName())
	case ev.Type == watch.Added || ev.Type == watch.Modified:
		set[obj.GetName()] = obj
	default:
		return false
	}
	return true
}

// settle waits out the rest of minWatchLife after a watch opened at opened
// ended, so that watches are not reopened in a tight loop.
func settle(ctx context.Context, opened time.Time) error {
	wait := minWatchLife - time.Since(opened)
	if wait <= 0 {
		return nil
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// isExpired reports whether a watch could not start because its
// resourceVersion is too old; reading the state again fixes it.
func isExpired(err error) bool {
	return apierrors.IsResourceExpired(err) || apierrors.IsGone(err)
}
