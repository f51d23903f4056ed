package audit

// Purpose says what a write of the rollout is for, given its actor and its
// WriteKey ("resource[/subresource] verb", marked for deployer pods), so
// that the report can state per actor why each write is made.
// Writes the benchmark does not expect have no purpose ("").
func Purpose(actor, key string) string {
	if p, ok := purposes()[actor][key]; ok {
		return p
	}
	return ""
}

// purposes is the table behind Purpose: what each actor's writes are for
// in the benchmark's rollouts (Rolling strategy, no hooks, 3 replicas).
func purposes() map[string]map[string]string {
	scheduled := "Scheduled event, one per pod bound (the application's pods too)"
	return map[string]map[string]string{
		ActorBench: {
			"deploymentconfigs create": "the user's create: the trigger of a first rollout",
			"deploymentconfigs patch":  "the user's template change: the trigger",
			"deployments create":       "the user's create: the trigger of a first rollout",
			"deployments patch":        "the user's template change: the trigger",
		},
		ActorDCController: {
			"deploymentconfigs/status update": "DC status: latestVersion bump on the trigger, then counts and conditions as the rollout moves (status.go)",
			"replicationcontrollers create":   "the deployment (RC) of the new version, 0 replicas, encoded DC",
			"replicationcontrollers patch":    "deployer controller: phase annotation New→(Pending)→Running→Complete; DC controller: older RC labelled settled; in-controller rollouts: final counts and the log",
			// In controller mode the rollout's own scale steps are dc-controller's.
			"replicationcontrollers/scale update": "in-controller rollout: rolling step, new RC up by maxSurge, old RC down as availability allows",
			"pods create" + DeployerPodMark:       "the deployer pod",
			"events create":                       "DeploymentCreated event on the DC",
			"pods delete" + DeployerPodMark:       "deployer pod of a cancelled rollout",
			"serviceaccounts create":              "the namespace's deployer service account (once per namespace)",
			"roles create":                        "the namespace's deployer role (once per namespace)",
			"roles patch":                         "the namespace's deployer role brought up to date (once per namespace)",
			"rolebindings create":                 "the namespace's deployer role binding (once per namespace)",
			"rolebindings patch":                  "the namespace's deployer role binding brought up to date (once per namespace)",
		},
		ActorDeployer: {
			"replicationcontrollers/scale update": "rolling step: new RC up by maxSurge, old RC down as availability allows",
			"replicationcontrollers patch":        "final count of an RC (new to N, old to 0): spec.replicas and the deployment.replicas annotation in one patch",
			"events create":                       "deployer event",
		},
		ActorPodRuntime: {
			"pods/status update" + DeployerPodMark:   "deployer pod status as a kubelet writes it: ContainerCreating, Running, Succeeded",
			"events create" + DeployerPodMark:        "kubelet's Started event of the deployer container",
			"logs create" + DeployerPodMark:          "kwok Logs object so that kubectl logs works on kwok (no counterpart on a real node)",
			"logs update" + DeployerPodMark:          "kwok Logs object replaced (an earlier pod of the same name)",
			"pods/status patch" + DeployerPodMark:    "deployer pod status as a kubelet writes it",
			"events create":                          "kubelet event",
			"pods delete" + DeployerPodMark:          "deployer pod removed after a deletion",
			"pods/eviction create" + DeployerPodMark: "deployer pod evicted",
		},
		ActorRCManager: {
			"replicationcontrollers/status update": "RC status counts as pods come, get ready and go",
			"events create":                        "SuccessfulCreate / SuccessfulDelete events on the RC",
		},
		ActorRSManager: {
			"replicasets/status update": "RS status counts as pods come, get ready and go",
			"events create":             "SuccessfulCreate / SuccessfulDelete events on the RS",
		},
		ActorDeploymentCtrl: {
			"deployments/status update": "Deployment status: counts and conditions as the rollout moves",
			"replicasets create":        "the new ReplicaSet",
			"replicasets update":        "rolling steps (scale up new, down old) and revision annotations",
			"events create":             "ScalingReplicaSet events on the Deployment",
		},
		ActorScheduler: {
			"pods/binding create" + DeployerPodMark: "binds the deployer pod to a node",
			"events create" + DeployerPodMark:       "Scheduled event of the deployer pod",
			"events create":                         scheduled,
		},
		ActorGarbageCollector: {
			"pods delete" + DeployerPodMark: "finished deployer pod removed with its owner",
		},
	}
}
