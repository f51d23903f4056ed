package imagetrigger

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/deployconfig/deployconfig/internal/registry"
)

// Subscription is one tag a DeploymentConfig watches, with the credential
// a pod of it would pull with.
type Subscription struct {
	Tag  name.Tag
	Auth authn.Authenticator
	// Credential identifies Auth without revealing it (see
	// registry.Keychain.Fingerprint). Subscriptions share a lookup when
	// their tag and credential are the same, and only then: a lookup made
	// with one DeploymentConfig's credentials never answers another that
	// lacks them.
	Credential string
}

type lookupKey struct {
	tag, credential string
}

func (s Subscription) key() lookupKey {
	return lookupKey{tag: s.Tag.Name(), credential: s.Credential}
}

// Result is what the lookups of a tag found.
type Result struct {
	// Digest is what the tag pointed at on the last successful lookup; it
	// is kept while later lookups fail.
	Digest v1.Hash
	// Err is the error of the last lookup, nil when it succeeded.
	Err error
	// Checked is when the last lookup ended; zero before the first.
	Checked time.Time
}

// Resolved reports whether a lookup has ever found a digest.
func (r Result) Resolved() bool { return r.Digest.Hex != "" }

// LookupFunc resolves a tag to its digest.
type LookupFunc func(ctx context.Context, tag name.Tag, auth authn.Authenticator) (v1.Hash, error)

// NotifyFunc is told which DeploymentConfigs a changed lookup result
// concerns.
type NotifyFunc func(ctx context.Context, dcs []types.NamespacedName)

// ResolverOptions configure a Resolver. Zero values take the defaults
// documented on each field.
type ResolverOptions struct {
	// Interval is how often each tag is looked up (default 2m). Each wait is
	// jittered to between 80% and 100% of it.
	Interval time.Duration
	// BackoffBase and BackoffMax bound the wait before a lookup on a
	// registry that failed as a whole; it doubles with each failure in a
	// row (defaults: Interval/8, at least 1s; 4·Interval).
	BackoffBase, BackoffMax time.Duration
	// Workers is how many lookups run at once (default 4).
	Workers int
	// LookupTimeout bounds one lookup (default 30s).
	LookupTimeout time.Duration
	// Lookup resolves a tag (default: registry.Resolve without retries).
	Lookup LookupFunc
	// Notify is told about changed results (default: nobody).
	Notify NotifyFunc
	// Clock is the time source (default: the real clock).
	Clock clock.WithTicker
	// Rand returns numbers in [0, 1) for jitter (default: math/rand/v2).
	Rand func() float64
}

// Resolver runs the periodic lookups of every tag some DeploymentConfig
// subscribes to, one lookup per tag and credential however many
// DeploymentConfigs watch it, and tells the subscribers when a result
// changes. It is a manager.Runnable: its lookups run while Start runs,
// only on the elected leader.
type Resolver struct {
	opts    ResolverOptions
	wake    chan struct{}
	mu      sync.Mutex
	entries map[lookupKey]*entry
	subs    map[types.NamespacedName][]lookupKey
	backoff *registryBackoff
}

// entry is the shared lookup of one tag with one credential.
type entry struct {
	sub    Subscription
	result Result
	// next is when the next scheduled lookup is due.
	next time.Time
	// inflight is non-nil while a lookup runs and closed when it ends.
	inflight chan struct{}
	// waiting counts the refreshes waiting for the running lookup.
	waiting     int
	subscribers map[types.NamespacedName]bool
}

// NewResolver returns a Resolver; Start runs its lookups.
func NewResolver(opts ResolverOptions) *Resolver {
	opts = resolverDefaults(opts)
	return &Resolver{
		opts:    opts,
		wake:    make(chan struct{}, 1),
		entries: map[lookupKey]*entry{},
		subs:    map[types.NamespacedName][]lookupKey{},
		backoff: newRegistryBackoff(opts.BackoffBase, opts.BackoffMax),
	}
}

func resolverDefaults(o ResolverOptions) ResolverOptions {
	if o.Interval <= 0 {
		o.Interval = DefaultPollInterval
	}
	if o.BackoffBase <= 0 {
		o.BackoffBase = max(time.Second, o.Interval/8)
	}
	if o.BackoffMax <= 0 {
		o.BackoffMax = 4 * o.Interval
	}
	o.BackoffMax = max(o.BackoffMax, o.BackoffBase)
	if o.Workers < 1 {
		o.Workers = 4
	}
	if o.LookupTimeout <= 0 {
		o.LookupTimeout = 30 * time.Second
	}
	if o.Lookup == nil {
		o.Lookup = func(ctx context.Context, tag name.Tag, auth authn.Authenticator) (v1.Hash, error) {
			return registry.Resolve(ctx, tag, auth, registry.Options{registry.NoRetries()})
		}
	}
	if o.Notify == nil {
		o.Notify = func(context.Context, []types.NamespacedName) {}
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	if o.Rand == nil {
		o.Rand = defaultRand
	}
	return o
}

// Subscribe makes the DeploymentConfig's subscriptions exactly subs,
// dropping the ones it had before that are not among them, and returns the
// current result of each (zero until its first lookup ends). A new tag is
// looked up right away.
func (r *Resolver) Subscribe(dc types.NamespacedName, subs []Subscription) []Result {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.opts.Clock.Now()
	keys := make([]lookupKey, 0, len(subs))
	results := make([]Result, len(subs))
	added := false
	for i, s := range subs {
		k := s.key()
		e := r.entries[k]
		if e == nil {
			e = &entry{sub: s, next: now, subscribers: map[types.NamespacedName]bool{}}
			r.entries[k] = e
			added = true
		}
		e.subscribers[dc] = true
		results[i] = e.result
		keys = append(keys, k)
	}
	for _, k := range r.subs[dc] {
		if !slices.Contains(keys, k) {
			r.dropSubscriber(k, dc)
		}
	}
	if len(keys) == 0 {
		delete(r.subs, dc)
	} else {
		r.subs[dc] = keys
	}
	if added {
		r.wakeUp()
	}
	return results
}

// Unsubscribe drops every subscription of the DeploymentConfig.
func (r *Resolver) Unsubscribe(dc types.NamespacedName) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, k := range r.subs[dc] {
		r.dropSubscriber(k, dc)
	}
	delete(r.subs, dc)
}

// dropSubscriber removes one subscriber of an entry, and the entry when it
// was the last. The caller holds the lock.
func (r *Resolver) dropSubscriber(k lookupKey, dc types.NamespacedName) {
	e := r.entries[k]
	if e == nil {
		return
	}
	delete(e.subscribers, dc)
	if len(e.subscribers) == 0 {
		delete(r.entries, k)
	}
}

// Refresh looks the tag up now, whatever its schedule and its registry's
// backoff say, because a user asked for it. When a lookup of the same tag
// and credential is already running, its result is the answer. The result
// also reaches the tag's subscribers.
func (r *Resolver) Refresh(ctx context.Context, s Subscription) Result {
	r.mu.Lock()
	e := r.entries[s.key()]
	if e != nil && e.inflight != nil {
		done := e.inflight
		e.waiting++
		r.mu.Unlock()
		defer func() {
			r.mu.Lock()
			e.waiting--
			r.mu.Unlock()
		}()
		select {
		case <-done:
		case <-ctx.Done():
			return Result{Err: ctx.Err()}
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		return e.result
	}
	if e == nil {
		// Nobody subscribes (a trigger with automatic: false): look up
		// without keeping the result.
		e = &entry{sub: s, subscribers: map[types.NamespacedName]bool{}}
	}
	e.inflight = make(chan struct{})
	r.mu.Unlock()
	return r.lookup(ctx, e)
}

// Start runs the scheduled lookups until ctx ends.
func (r *Resolver) Start(ctx context.Context) error {
	logger := log.FromContext(ctx).WithName("image-resolver")
	ctx = log.IntoContext(ctx, logger)
	logger.Info("starting", "interval", r.opts.Interval)
	slots := make(chan struct{}, r.opts.Workers)
	var running sync.WaitGroup
	defer running.Wait()
	for {
		for _, e := range r.takeDue(r.opts.Clock.Now()) {
			select {
			case slots <- struct{}{}:
			case <-ctx.Done():
				return nil
			}
			running.Go(func() {
				defer func() { <-slots }()
				r.lookup(ctx, e)
			})
		}
		timer := r.opts.Clock.NewTimer(r.untilNext(r.opts.Clock.Now()))
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil
		case <-timer.C():
		case <-r.wake:
			timer.Stop()
		}
	}
}

// takeDue marks the entries whose lookup is due, and whose registry is not
// backing off, as running and returns them.
func (r *Resolver) takeDue(now time.Time) []*entry {
	r.mu.Lock()
	defer r.mu.Unlock()
	var due []*entry
	for _, e := range r.entries {
		if e.inflight != nil || e.next.After(now) {
			continue
		}
		if until, blocked := r.backoff.blocked(e.sub.Tag.RegistryStr(), now); blocked {
			e.next = until
			continue
		}
		e.inflight = make(chan struct{})
		due = append(due, e)
	}
	return due
}

// untilNext returns how long until the next lookup is due. A scan of every
// entry is cheap next to the lookups themselves: there is one entry per
// watched tag, not per DeploymentConfig.
func (r *Resolver) untilNext(now time.Time) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	wait := r.opts.Interval
	for _, e := range r.entries {
		if e.inflight == nil {
			wait = min(wait, e.next.Sub(now))
		}
	}
	return max(wait, 0)
}

// lookup runs one lookup of a running entry, records its result,
// schedules the next one and tells the subscribers when the result
// changed. It returns the result.
func (r *Resolver) lookup(ctx context.Context, e *entry) Result {
	lookupCtx, cancel := context.WithTimeout(ctx, r.opts.LookupTimeout)
	digest, err := r.opts.Lookup(lookupCtx, e.sub.Tag, e.sub.Auth)
	cancel()

	r.mu.Lock()
	changed := false
	if ctx.Err() == nil {
		changed = r.record(e, digest, err, r.opts.Clock.Now())
	}
	close(e.inflight)
	e.inflight = nil
	result := e.result
	var notify []types.NamespacedName
	if changed && r.entries[e.sub.key()] == e {
		for dc := range e.subscribers {
			notify = append(notify, dc)
		}
	}
	r.wakeUp()
	r.mu.Unlock()

	if err != nil && ctx.Err() == nil {
		log.FromContext(ctx).V(1).Info("lookup failed", "tag", e.sub.Tag.Name(), "error", err.Error())
	}
	if len(notify) > 0 {
		r.opts.Notify(ctx, notify)
	}
	if ctx.Err() != nil && err != nil {
		return Result{Err: ctx.Err()}
	}
	return result
}

// record stores a lookup's outcome and schedules the next lookup: after the
// poll interval, or when a registry that failed as a whole is tried again.
// It reports whether the result changed. The caller holds the lock.
func (r *Resolver) record(e *entry, digest v1.Hash, err error, now time.Time) bool {
	old := e.result
	e.result.Checked = now
	reg := e.sub.Tag.RegistryStr()
	if err != nil {
		e.result.Err = err
		if registry.IsTransient(err) {
			e.next = r.backoff.fail(reg, now, r.opts.Rand())
		} else {
			e.next = now.Add(jitter(r.opts.Interval, jitterFraction, r.opts.Rand()))
		}
		return old.Checked.IsZero() || old.Err == nil || old.Err.Error() != err.Error()
	}
	r.backoff.succeed(reg)
	e.result.Err = nil
	e.result.Digest = digest
	e.next = now.Add(jitter(r.opts.Interval, jitterFraction, r.opts.Rand()))
	return old.Checked.IsZero() || old.Err != nil || old.Digest != digest
}

// wakeUp makes the scheduling loop look at its entries again.
func (r *Resolver) wakeUp() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}
