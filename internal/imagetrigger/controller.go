package imagetrigger

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/cachedconfig"
	"github.com/deployconfig/deployconfig/internal/registry"
)

// DefaultPollInterval is how often a watched tag is looked up when Options
// leave it unset (dc-controller's --image-poll-interval).
const DefaultPollInterval = 2 * time.Minute

// Options configure the image-trigger controller.
type Options struct {
	// PollInterval is how often each watched tag is looked up; zero means
	// DefaultPollInterval.
	PollInterval time.Duration
	// Workers is the number of concurrent syncs (default 1).
	Workers int
	// Registry are options of every registry request, e.g. a transport.
	Registry registry.Options
	// Clock is the time source; nil means the real clock.
	Clock clock.WithTicker
	// RequestBurst and RequestEvery are each namespace's budget of
	// "resolve now" requests: RequestBurst at once, then one per
	// RequestEvery (defaults DefaultRequestBurst, DefaultRequestEvery).
	// A request over budget waits for its turn.
	RequestBurst int
	RequestEvery time.Duration
	// RequestTimeout bounds the lookups of one request (default
	// DefaultRequestTimeout).
	RequestTimeout time.Duration
}

// Setup adds the image-trigger controller and its shared resolver to the
// manager. Both run only on the elected leader.
func Setup(mgr manager.Manager, opts Options) error {
	if opts.PollInterval <= 0 {
		opts.PollInterval = DefaultPollInterval
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	if opts.RequestBurst <= 0 {
		opts.RequestBurst = DefaultRequestBurst
	}
	if opts.RequestEvery <= 0 {
		opts.RequestEvery = DefaultRequestEvery
	}
	if opts.RequestTimeout <= 0 {
		opts.RequestTimeout = DefaultRequestTimeout
	}
	// Results that changed come back to the controller as events on this
	// channel: one per subscribed DeploymentConfig.
	changed := make(chan event.GenericEvent, 1024)
	lookupOpts := append(registry.Options{registry.NoRetries()}, opts.Registry...)
	resolver := NewResolver(ResolverOptions{
		Interval: opts.PollInterval,
		Clock:    opts.Clock,
		Lookup: func(ctx context.Context, tag name.Tag, auth authn.Authenticator) (v1.Hash, error) {
			return registry.Resolve(ctx, tag, auth, lookupOpts)
		},
		Notify: func(ctx context.Context, dcs []types.NamespacedName) {
			for _, dc := range dcs {
				obj := &dcv1.DeploymentConfig{ObjectMeta: metav1.ObjectMeta{Namespace: dc.Namespace, Name: dc.Name}}
				select {
				case changed <- event.GenericEvent{Object: obj}:
				case <-ctx.Done():
					return
				}
			}
		},
	})
	if err := mgr.Add(resolver); err != nil {
		return fmt.Errorf("add image resolver: %w", err)
	}
	r := &Reconciler{
		client:    mgr.GetClient(),
		apiReader: mgr.GetAPIReader(),
		recorder:  mgr.GetEventRecorder("dc-controller"),
		resolver:  resolver,
		creds:     newCredentialCache(registry.ReaderFor(mgr.GetAPIReader()), opts.PollInterval, opts.Clock),
		clock:     opts.Clock,
		interval:  opts.PollInterval,
		rand:      defaultRand,
		budget:    newRequestBudget(opts.RequestBurst, opts.RequestEvery),
		timeout:   opts.RequestTimeout,
	}
	// Status writes, the DeploymentConfig controller's bread and butter,
	// change nothing this controller looks at.
	specOrAnnotations := predicate.Or(predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{})
	err := ctrl.NewControllerManagedBy(mgr).
		Named("imagetrigger").
		For(&dcv1.DeploymentConfig{}, builder.WithPredicates(specOrAnnotations)).
		WatchesRawSource(source.Channel(changed, &handler.EnqueueRequestForObject{})).
		WithOptions(controller.Options{MaxConcurrentReconciles: max(opts.Workers, 1)}).
		Complete(r)
	if err != nil {
		return fmt.Errorf("set up imagetrigger controller: %w", err)
	}
	return nil
}

func defaultRand() float64 { return rand.Float64() }

// Reconciler syncs the image triggers of one DeploymentConfig: it keeps its
// subscriptions to the resolver current, writes the images its automatic
// triggers resolve to, answers "resolve now" requests and reports
// failures as an event and the ImageTriggerFailure condition.
type Reconciler struct {
	client    client.Client
	apiReader client.Reader
	recorder  events.EventRecorder
	resolver  *Resolver
	creds     *credentialCache
	clock     clock.PassiveClock
	interval  time.Duration
	rand      func() float64
	// budget limits each namespace's "resolve now" requests (nil: no
	// limit); timeout bounds one request's lookups (0: the lookup's own).
	budget  *requestBudget
	timeout time.Duration
}

// Reconcile syncs one DeploymentConfig.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	dc := &dcv1.DeploymentConfig{}
	if err := r.client.Get(ctx, req.NamespacedName, dc); err != nil {
		if apierrors.IsNotFound(err) {
			r.resolver.Unsubscribe(req.NamespacedName)
			return reconcile.Result{}, nil
		}
		return reconcile.Result{}, fmt.Errorf("get deploymentconfig %s: %w", req.NamespacedName, err)
	}
	// The cache keeps the pod template encoded; this copy is written back.
	if err := cachedconfig.Expand(dc); err != nil {
		return reconcile.Result{}, err
	}
	triggers := dockerTriggers(dc)
	token := dc.Annotations[dcv1.ImageTriggerRequestAnnotation]
	if dc.DeletionTimestamp != nil || len(triggers) == 0 {
		r.resolver.Unsubscribe(req.NamespacedName)
		if dc.DeletionTimestamp == nil && token != "" {
			// Nothing to resolve: the request is answered at once.
			_, err := r.write(ctx, dc, nil, &answer{token: token})
			return reconcile.Result{}, err
		}
		return reconcile.Result{}, r.report(ctx, dc, "")
	}

	// A request over its namespace's budget waits: the triggers are
	// synced as if nobody had asked, and the request is taken up once the
	// namespace has budget again.
	var retryRequest time.Duration
	if token != "" {
		if ok, wait := r.budget.take(dc.Namespace, r.clock.Now()); !ok {
			log.FromContext(ctx).Info("resolve request over the namespace's budget; waiting", "wait", wait)
			token, retryRequest = "", wait
		}
	}
	outcomes, credErr := r.resolve(ctx, dc, triggers, token != "")
	written, err := r.write(ctx, dc, outcomes, requestAnswer(token, outcomes))
	if err != nil {
		return reconcile.Result{}, err
	}
	if err := r.report(ctx, written, failureMessage(outcomes)); err != nil {
		return reconcile.Result{}, err
	}
	if credErr != nil {
		return reconcile.Result{}, credErr
	}
	if retryRequest > 0 {
		return reconcile.Result{RequeueAfter: retryRequest}, nil
	}
	if !hasAutomatic(triggers) {
		return reconcile.Result{}, nil
	}
	// Come back after a poll interval even without news, to pick up rotated
	// pull secrets.
	return reconcile.Result{RequeueAfter: jitter(r.interval, jitterFraction, r.rand())}, nil
}

// requestAnswer returns the answer to the pending request, if there is one:
// it failed when any trigger did.
func requestAnswer(token string, outcomes []outcome) *answer {
	if token == "" {
		return nil
	}
	ans := &answer{token: token}
	if msg := failureMessage(outcomes); msg != "" {
		ans.err = errors.New(msg)
	}
	return ans
}

func hasAutomatic(triggers []trigger) bool {
	for _, t := range triggers {
		if t.automatic {
			return true
		}
	}
	return false
}

// resolve subscribes the DeploymentConfig's automatic triggers to the
// resolver and returns the outcome of each trigger that has one: the
// automatic ones, and every one when a user asked (requested), freshly
// looked up. The error is that of reading the pull secrets, which every
// outcome then carries.
func (r *Reconciler) resolve(ctx context.Context, dc *dcv1.DeploymentConfig, triggers []trigger, requested bool) ([]outcome, error) {
	if !requested && !hasAutomatic(triggers) {
		// Manual triggers only, and nobody asked: nothing to look up.
		r.resolver.Unsubscribe(client.ObjectKeyFromObject(dc))
		return nil, nil
	}
	kc, err := r.creds.keychain(ctx, dc.Namespace, &dc.Spec.Template.Spec)
	if err != nil {
		err = fmt.Errorf("read image pull secrets: %w", err)
		var outcomes []outcome
		for _, t := range triggers {
			if t.automatic || requested {
				outcomes = append(outcomes, outcome{trigger: t, err: err})
			}
		}
		return outcomes, err
	}

	var subs []Subscription
	var subscribed []int
	for _, t := range triggers {
		if t.automatic && t.err == nil {
			subs = append(subs, subscription(t.tag, kc))
			subscribed = append(subscribed, t.index)
		}
	}
	results := map[int]Result{}
	for i, res := range r.resolver.Subscribe(client.ObjectKeyFromObject(dc), subs) {
		results[subscribed[i]] = res
	}

	var outcomes []outcome
	for _, t := range triggers {
		o := outcome{trigger: t}
		switch {
		case !t.automatic && !requested:
			continue
		case t.err != nil:
			o.err = t.err
		case requested:
			o.image, o.err = imageOf(t, r.refresh(ctx, subscription(t.tag, kc)))
		default:
			o.image, o.err = imageOf(t, results[t.index])
		}
		outcomes = append(outcomes, o)
	}
	return outcomes, nil
}

// refresh looks a tag up now for a request, within the request's time.
func (r *Reconciler) refresh(ctx context.Context, s Subscription) Result {
	if r.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, r.timeout)
		defer cancel()
	}
	res := r.resolver.Refresh(ctx, s)
	if r.timeout > 0 && errors.Is(res.Err, context.DeadlineExceeded) {
		res.Err = fmt.Errorf("the registry did not answer within %s", r.timeout)
	}
	return res
}

// subscription returns the subscription to a tag with the credential the
// keychain has for its repository.
func subscription(tag name.Tag, kc *registry.Keychain) Subscription {
	repo := tag.Context()
	auth, _ := kc.Resolve(repo) // never fails: the keychain is in memory
	return Subscription{Tag: tag, Auth: auth, Credential: kc.Fingerprint(repo)}
}

// imageOf returns the image, by digest, that a lookup result gives the
// trigger, and the result's error.
func imageOf(t trigger, res Result) (string, error) {
	if !res.Resolved() {
		return "", res.Err
	}
	image, err := registry.DigestReference(t.from, res.Digest)
	if err != nil {
		return "", err
	}
	return image, res.Err
}

// write applies the outcomes and the answer to the DeploymentConfig's spec
// and annotations in one update, retrying on conflicts with a fresh copy.
// It returns the DeploymentConfig as last read or written.
func (r *Reconciler) write(ctx context.Context, dc *dcv1.DeploymentConfig, outcomes []outcome, ans *answer) (*dcv1.DeploymentConfig, error) {
	current := dc.DeepCopy()
	var changes []change
	refetch := false
	err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		if refetch {
			if err := r.apiReader.Get(ctx, client.ObjectKeyFromObject(dc), current); err != nil {
				return err
			}
		}
		refetch = true
		var changed bool
		if changes, changed = apply(current, outcomes, ans); !changed {
			return nil
		}
		return r.client.Update(ctx, current)
	})
	if apierrors.IsNotFound(err) {
		return current, nil
	}
	if err != nil {
		return nil, fmt.Errorf("update deploymentconfig %s/%s: %w", dc.Namespace, dc.Name, err)
	}
	for _, c := range changes {
		log.FromContext(ctx).Info("image trigger fired", "from", c.from, "image", c.image, "containers", c.containers)
		r.recorder.Eventf(current, nil, corev1.EventTypeNormal, ReasonImageTriggered, "Update",
			"Set the image of %s to %s (%s)", strings.Join(c.containers, ", "), c.image, c.from)
	}
	if ans != nil && ans.err != nil {
		r.recorder.Eventf(current, nil, corev1.EventTypeWarning, ReasonImageResolveFailed, "Resolve",
			"Could not resolve image triggers on request: %v", ans.err)
	}
	return current, nil
}

// report sets the ImageTriggerFailure condition from the failure message
// ("" for none), with a Warning event when a new failure appears.
func (r *Reconciler) report(ctx context.Context, dc *dcv1.DeploymentConfig, message string) error {
	want, ok := wantedCondition(findCondition(dc.Status.Conditions, dcv1.ImageTriggerFailure), message)
	if !ok {
		return nil
	}
	if want.Status == corev1.ConditionTrue {
		log.FromContext(ctx).Info("image trigger failed", "message", message)
		r.recorder.Eventf(dc, nil, corev1.EventTypeWarning, ReasonImageResolveFailed, "Resolve", "%s", message)
	}
	current := dc.DeepCopy()
	refetch := false
	err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		if refetch {
			if err := r.apiReader.Get(ctx, client.ObjectKeyFromObject(dc), current); err != nil {
				return err
			}
		}
		refetch = true
		if !setCondition(&current.Status, want, metav1.NewTime(r.clock.Now())) {
			return nil
		}
		return r.client.Status().Update(ctx, current)
	})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("update status of deploymentconfig %s/%s: %w", dc.Namespace, dc.Name, err)
	}
	return nil
}

// wantedCondition returns the ImageTriggerFailure condition to write given
// the current one and the failure message, and false when nothing needs
// writing: the condition only appears once something failed.
func wantedCondition(current *dcv1.DeploymentCondition, message string) (dcv1.DeploymentCondition, bool) {
	want := dcv1.DeploymentCondition{Type: dcv1.ImageTriggerFailure, Status: corev1.ConditionTrue, Reason: ReasonImageResolveFailed, Message: message}
	if message == "" {
		if current == nil || current.Status == corev1.ConditionFalse {
			return dcv1.DeploymentCondition{}, false
		}
		want = dcv1.DeploymentCondition{Type: dcv1.ImageTriggerFailure, Status: corev1.ConditionFalse, Reason: ReasonImagesResolved, Message: "every image trigger resolves"}
	}
	if current != nil && current.Status == want.Status && current.Reason == want.Reason && current.Message == want.Message {
		return dcv1.DeploymentCondition{}, false
	}
	return want, true
}

func findCondition(conds []dcv1.DeploymentCondition, t dcv1.DeploymentConditionType) *dcv1.DeploymentCondition {
	for i := range conds {
		if conds[i].Type == t {
			return &conds[i]
		}
	}
	return nil
}

// setCondition adds or replaces a condition, moving lastTransitionTime only
// when the status changes. It reports whether anything changed.
func setCondition(status *dcv1.DeploymentConfigStatus, c dcv1.DeploymentCondition, now metav1.Time) bool {
	old := findCondition(status.Conditions, c.Type)
	if old == nil {
		c.LastTransitionTime, c.LastUpdateTime = now, now
		status.Conditions = append(status.Conditions, c)
		return true
	}
	if old.Status == c.Status && old.Reason == c.Reason && old.Message == c.Message {
		return false
	}
	c.LastTransitionTime = old.LastTransitionTime
	if old.Status != c.Status {
		c.LastTransitionTime = now
	}
	c.LastUpdateTime = now
	*old = c
	return true
}
