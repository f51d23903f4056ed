package controller

import (
	"context"
	"net/http"
	"slices"

	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/deployconfig/deployconfig/internal/analysis"
	"github.com/deployconfig/deployconfig/internal/registry"
)

// Flags of dc-controller's dial policy for analysis queries; messages
// name them.
const (
	AllowAnalysisNetworksFlag = "--allow-analysis-networks"
	DenyAnalysisNetworksFlag  = "--deny-analysis-networks"
)

// analysisClient is the HTTP client of the analyses the controller runs
// itself: a Prometheus address is a DeploymentConfig author's choice, and
// the controller queries it from its own place in the network, so every
// connection goes through the same dial policy as registry requests, with
// networks of its own allowed (a Prometheus in the cluster) and the
// registries' denied networks refused as well.
func analysisClient(opts Options) *http.Client {
	p := opts.AnalysisNetworks
	p.Deny = append(slices.Clip(p.Deny), opts.RegistryNetworks.Deny...)
	p.Use = registry.NetworkUse{Subject: "analysis address", AllowFlag: AllowAnalysisNetworksFlag, DenyFlag: DenyAnalysisNetworksFlag}
	return p.HTTPClient()
}

// withAnalysisClient starts a runnable (the rollout runner) under a
// context whose analyses query through client.
type withAnalysisClient struct {
	runner interface {
		manager.Runnable
		manager.LeaderElectionRunnable
	}
	client *http.Client
}

// Start starts the runnable with the client in its context.
func (w withAnalysisClient) Start(ctx context.Context) error {
	return w.runner.Start(analysis.WithHTTPClient(ctx, w.client))
}

// NeedLeaderElection is the runnable's.
func (w withAnalysisClient) NeedLeaderElection() bool { return w.runner.NeedLeaderElection() }
