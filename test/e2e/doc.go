// Package e2e holds deployconfig's end-to-end tests. They run against a
// kwok cluster made for the run (a real etcd, kube-apiserver,
// kube-controller-manager and kube-scheduler, with kwok's fake nodes) from
// the binaries in $DC_BIN (default ../../bin, what `make tools` and
// `make build` build), with `dc-local serve` from there running
// dc-controller and the local pod runtime (deployer pods in-process, hook
// pods as local processes) against it:
//
//	make test-e2e
//	make build && DC_BIN=$PWD/bin go test -count=1 ./test/e2e/...
//
// The cluster and its dc-local serve are removed when the run ends, also
// when a test fails or panics, the run times out or is interrupted: a
// small watchdog process removes them if the test binary dies before it
// could. A failed run prints the end of dc-local serve's log.
package e2e
