// Package argocd holds Argo CD's resource customizations for DeploymentConfigs
// (resource_customizations/, in Argo CD's own layout, ready to upstream) and
// the test that runs them as Argo CD does.
package argocd
