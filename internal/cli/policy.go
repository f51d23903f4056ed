package cli

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/printers"
	"sigs.k8s.io/controller-runtime/pkg/client"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/rolloutpolicy"
)

func newPolicyCommand(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "policy",
		Short: "Show and resume the RolloutPolicies that govern DeploymentConfigs' rollouts",
		Long: `A RolloutPolicy holds the rollouts of the DeploymentConfigs it selects:
how many run at once, in which waves one change goes, in which windows they
may start, and not after too many failures (docs/rollout-policy.md).`,
	}
	cmd.AddCommand(newPolicyGetCommand(a), newPolicyDescribeCommand(a), newPolicyResumeCommand(a))
	return cmd
}

func newPolicyGetCommand(a *app) *cobra.Command {
	return &cobra.Command{
		Use:     "get [NAME]",
		Short:   "List the RolloutPolicies of the namespace, or show one",
		Example: "  kubectl dc policy get\n  kubectl dc policy get fleet",
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.policyGet(cmd.Context(), args)
		},
	}
}

func newPolicyDescribeCommand(a *app) *cobra.Command {
	return &cobra.Command{
		Use:     "describe NAME",
		Short:   "Show a RolloutPolicy: what it selects, its rules, its line, its waves and failures",
		Example: "  kubectl dc policy describe fleet",
		Args:    policyNameArg("describe"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.policyDescribe(cmd.Context(), args[0])
		},
	}
}

func newPolicyResumeCommand(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "resume NAME",
		Short: "Go on after failures: close the circuit breaker and let stopped waves go on",
		Long: `Resume marks the policy resumed now: failures before now neither keep its
circuit breaker open nor stop the waves of their change. Anyone who may
update rolloutpolicies may resume.`,
		Example: "  kubectl dc policy resume fleet",
		Args:    policyNameArg("resume"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.policyResume(cmd.Context(), args[0])
		},
	}
}

// policyNameArg accepts exactly one RolloutPolicy NAME.
func policyNameArg(purpose string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) != 1 {
			return fmt.Errorf("NAME is required: the one RolloutPolicy to %s (see 'kubectl dc policy get')", purpose)
		}
		return nil
	}
}

// getPolicy returns the named policy, or an error that says plainly that it
// does not exist in the namespace.
func getPolicy(ctx context.Context, c *Clients, name string) (*dcv1.RolloutPolicy, error) {
	p := &dcv1.RolloutPolicy{}
	err := c.DC.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: name}, p)
	if apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("rolloutpolicy %q not found in namespace %s (see 'kubectl dc policy get')", name, c.Namespace)
	}
	if err != nil {
		return nil, fmt.Errorf("get rolloutpolicy %s: %w", name, err)
	}
	return p, nil
}

func (a *app) policyGet(ctx context.Context, args []string) error {
	c, err := a.clients()
	if err != nil {
		return err
	}
	var policies []dcv1.RolloutPolicy
	if len(args) == 1 {
		p, err := getPolicy(ctx, c, args[0])
		if err != nil {
			return err
		}
		policies = []dcv1.RolloutPolicy{*p}
	} else {
		list := &dcv1.RolloutPolicyList{}
		if err := c.DC.List(ctx, list, client.InNamespace(c.Namespace)); err != nil {
			return fmt.Errorf("list rolloutpolicies: %w", err)
		}
		policies = list.Items
		sort.Slice(policies, func(i, j int) bool { return policies[i].Name < policies[j].Name })
	}
	if len(policies) == 0 {
		fmt.Fprintf(a.Streams.ErrOut, "No RolloutPolicies found in %s namespace.\n", c.Namespace)
		return nil
	}
	tw := printers.GetNewTabWriter(a.Streams.Out)
	fmt.Fprintln(tw, "NAME\tMAX\tSELECTED\tRUNNING\tWAITING\tHOLDING\tAGE")
	for _, p := range policies {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%s\t%s\n", p.Name, maxConcurrent(&p), p.Status.Selected, p.Status.Running,
			p.Status.Waiting, holding(&p), a.age(p.CreationTimestamp.Time))
	}
	return tw.Flush()
}

func maxConcurrent(p *dcv1.RolloutPolicy) string {
	if p.Spec.MaxConcurrent == nil {
		return "-"
	}
	return p.Spec.MaxConcurrent.String()
}

// holding is what holds every rollout of the policy, or "-".
func holding(p *dcv1.RolloutPolicy) string {
	if h := rolloutpolicy.Holding(p); h != "" {
		return h
	}
	return "-"
}

func (a *app) policyDescribe(ctx context.Context, name string) error {
	c, err := a.clients()
	if err != nil {
		return err
	}
	p, err := getPolicy(ctx, c, name)
	if err != nil {
		return err
	}
	d := newDescriber(a.Streams.Out)
	d.line(0, "Name", p.Name)
	d.line(0, "Namespace", p.Namespace)
	d.line(0, "Created", a.ago(p.CreationTimestamp.Time))
	d.line(0, "Selector", orNone(metav1.FormatLabelSelector(&p.Spec.Selector)))
	d.linef(0, "Selected", "%d DeploymentConfigs, %d rollouts running, %d waiting", p.Status.Selected, p.Status.Running, p.Status.Waiting)
	d.line(0, "Max Concurrent", maxConcurrent(p))
	a.describePolicyRules(d, p)
	a.describePolicyState(d, p)
	return d.flush()
}

// describePolicyRules writes the policy's waves, windows, freezes, breaker
// and break-glass.
func (a *app) describePolicyRules(d *describer, p *dcv1.RolloutPolicy) {
	var waves []string
	for _, w := range p.Spec.Waves {
		s := "rest"
		if w.Size != nil {
			s = w.Size.String()
		}
		if w.Soak != nil {
			s += " (soak " + w.Soak.Duration.String() + ")"
		}
		waves = append(waves, s)
	}
	d.line(0, "Waves", orNone(strings.Join(waves, ", ")))
	var windows []string
	for _, w := range p.Spec.Windows {
		if w.Cron != "" {
			windows = append(windows, fmt.Sprintf("cron %q for %s", w.Cron, deref(w.Duration).Duration))
			continue
		}
		days := "every day"
		if len(w.Days) > 0 {
			var ds []string
			for _, day := range w.Days {
				ds = append(ds, string(day)[:3])
			}
			days = strings.Join(ds, ",")
		}
		windows = append(windows, fmt.Sprintf("%s %s-%s", days, w.Start, w.End))
	}
	if len(windows) > 0 {
		tz := p.Spec.TimeZone
		if tz == "" {
			tz = "UTC"
		}
		d.line(0, "Windows", strings.Join(windows, "; ")+" ("+tz+")")
	} else {
		d.line(0, "Windows", "<none>: any time but a freeze")
	}
	for _, f := range p.Spec.Freezes {
		d.linef(0, "Freeze", "%s %s to %s", orNone(f.Name), f.Start.UTC().Format(time.RFC3339), f.End.UTC().Format(time.RFC3339))
	}
	if cb := p.Spec.CircuitBreaker; cb != nil {
		period := "1h0m0s"
		if cb.Period != nil {
			period = cb.Period.Duration.String()
		}
		d.linef(0, "Circuit Breaker", "opens at %s failed rollouts within %s", cb.MaxFailures.String(), period)
	}
	switch {
	case p.Spec.Suspend:
		d.line(0, "Suspended", "yes: the policy holds nothing")
	case p.Spec.OverrideUntil != nil && a.Clock.Now().Before(p.Spec.OverrideUntil.Time):
		d.linef(0, "Override", "until %s: windows, freezes and the circuit breaker hold nothing", p.Spec.OverrideUntil.UTC().Format(time.RFC3339))
	}
}

// describePolicyState writes what the controller reports: why the policy
// holds, the next window, the changes' waves, the failures and the line.
func (a *app) describePolicyState(d *describer, p *dcv1.RolloutPolicy) {
	s := &p.Status
	if c := meta.FindStatusCondition(s.Conditions, dcv1.PolicyHolding); c != nil && c.Status == metav1.ConditionTrue {
		d.linef(0, "Holding", "%s: %s", c.Reason, c.Message)
	}
	if c := meta.FindStatusCondition(s.Conditions, dcv1.PolicyInvalid); c != nil && c.Status == metav1.ConditionTrue {
		d.linef(0, "Invalid", "%s: %s", c.Reason, c.Message)
	}
	if s.NextWindow != nil {
		d.linef(0, "Next Window", "%s (in %s)", s.NextWindow.UTC().Format(time.RFC3339), humanDuration(s.NextWindow.Sub(a.Clock.Now())))
	}
	if s.ResumedAt != nil {
		d.line(0, "Resumed", a.ago(s.ResumedAt.Time))
	}
	if len(s.Changes) == 0 {
		d.line(0, "Changes", "<none>")
	} else {
		d.heading(0, "Changes")
		for _, ch := range s.Changes {
			state := fmt.Sprintf("wave %d, %d started", ch.Wave, len(ch.Started))
			if ch.Stopped != "" {
				state += ", stopped by the failure of " + ch.Stopped
			} else if ch.WaveCompleted != nil {
				state += ", soaking since " + a.ago(ch.WaveCompleted.Time)
			}
			d.line(1, ch.Name, state)
		}
	}
	if len(s.Failures) > 0 {
		d.heading(0, "Failures")
		for _, f := range s.Failures {
			d.linef(1, f.Name, "#%d failed %s", f.Version, a.ago(f.At.Time))
		}
	}
	if len(s.Line) == 0 {
		d.line(0, "Line", "<empty>")
		return
	}
	d.heading(0, "Line")
	tw := printers.GetNewTabWriter(d.tw)
	fmt.Fprintln(tw, "  #\tDEPLOYMENTCONFIG\tROLLOUT\tREASON\tWAITING\tCHANGE")
	for i, w := range s.Line {
		fmt.Fprintf(tw, "  %d\t%s\t#%d\t%s\t%s\t%s\n", i+1, w.Name, w.Version, w.Reason, a.since(w.Since.Time), orNone(w.Change))
	}
	_ = tw.Flush()
}

func (a *app) policyResume(ctx context.Context, name string) error {
	c, err := a.clients()
	if err != nil {
		return err
	}
	p, err := getPolicy(ctx, c, name)
	if err != nil {
		return err
	}
	patch := client.MergeFrom(p.DeepCopy())
	if p.Annotations == nil {
		p.Annotations = map[string]string{}
	}
	at := a.Clock.Now().UTC().Format(time.RFC3339)
	p.Annotations[dcv1.PolicyResumeAnnotation] = at
	if err := c.DC.Patch(ctx, p, patch); err != nil {
		return fmt.Errorf("resume rolloutpolicy %s: %w", name, err)
	}
	fmt.Fprintf(a.Streams.Out, "rolloutpolicy/%s resumed at %s: earlier failures hold nothing\n", name, at)
	return nil
}

// governingPolicy returns the policy of the DeploymentConfig's namespace
// that governs it, as dc-controller picks it, or nil.
func governingPolicy(ctx context.Context, c *Clients, dc *dcv1.DeploymentConfig) *dcv1.RolloutPolicy {
	list := &dcv1.RolloutPolicyList{}
	if err := c.DC.List(ctx, list, client.InNamespace(dc.Namespace)); err != nil {
		return nil
	}
	return rolloutpolicy.Governing(list.Items, dc)
}

// policyLine says which policy governs a DeploymentConfig and, while its
// rollout waits in the policy's line, where and why.
func policyLine(p *dcv1.RolloutPolicy, dc *dcv1.DeploymentConfig) string {
	for i, w := range p.Status.Line {
		if w.Name == dc.Name {
			return fmt.Sprintf("%s: rollout #%d waits, %d of %d in line (%s)", p.Name, w.Version, i+1, len(p.Status.Line), w.Reason)
		}
	}
	return p.Name
}
