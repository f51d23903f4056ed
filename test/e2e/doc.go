// Package e2e holds deployconfig's end-to-end tests. They run against a
// kwok cluster made for the run (a real etcd, kube-apiserver,
// kube-controller-manager and kube-scheduler, with kwok's fake nodes) from
// the binaries in $DC_BIN (default ../../bin, what `make tools` builds):
//
//	make test-e2e
//	DC_BIN=$PWD/bin go test -count=1 ./test/e2e/...
//
// The cluster is removed when the run ends, also when a test fails or
// panics, the run times out or is interrupted: a small watchdog process
// removes it if the test binary dies before it could.
package e2e
