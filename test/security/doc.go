// Package security checks deployconfig's security promises (see
// docs/security.md) on a playground cluster of its own (package
// clusterenv), where dc-controller runs under the shipped RBAC:
//
//   - in a namespace that enforces the restricted Pod Security Standard,
//     deployer pods are admitted and a DeploymentConfig whose template
//     complies rolls out with its hooks; hook pods get the template's
//     security context and no more, so a template that does not comply
//     gets its hook pods refused;
//   - a user who may read a DeploymentConfig but not change it cannot
//     trigger, cancel or retry its rollouts through kubectl dc;
//   - the controller's ClusterRole has no wildcard and only reads secrets,
//     and docs/security.md explains every resource it names.
package security
