package deployment

import dcv1 "github.com/deployconfig/deployconfig/api/v1"

// NeedsPod reports whether a rollout with this strategy needs a deployer
// pod whatever dc-controller's deployer mode: a Custom strategy or custom
// deployer image or command, an execNewPod hook (a container of the
// user's), or a tagImages hook, whose registry calls (to hosts the user
// names, with the namespace's pull secrets) belong in the namespace's pod
// rather than in the controller. Every other rollout only scales, switches
// Services and routes and queries metrics, which dc-controller can do in
// itself.
func NeedsPod(s *dcv1.DeploymentStrategy) bool {
	if s.Type == dcv1.DeploymentStrategyTypeCustom || s.CustomParams != nil {
		return true
	}
	var hooks []*dcv1.LifecycleHook
	if p := s.RecreateParams; p != nil {
		hooks = append(hooks, p.Pre, p.Mid, p.Post)
	}
	if p := s.RollingParams; p != nil {
		hooks = append(hooks, p.Pre, p.Post)
	}
	for _, h := range hooks {
		if h != nil && (h.ExecNewPod != nil || len(h.TagImages) > 0) {
			return true
		}
	}
	return false
}
