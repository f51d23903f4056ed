// Package imagebuild builds the project's container images from source,
// without Docker and without downloading a base image.
//
// The recipe: `go build` each image's program as a static binary
// (CGO_ENABLED=0, -trimpath, -buildvcs=false), write one tar layer in Go
// holding the binary, a minimal /etc (passwd and group with root and the
// non-root user 65532) and /tmp, and put it on go-containerregistry's
// empty.Image with an OCI config: user 65532:65532, the binary as
// entrypoint, PATH, WorkingDir / and the OCI labels source, revision,
// version, title and description. The deployer image adds a statically
// linked BusyBox from Debian's busybox-static package as /bin/sh (and the
// applets custom-strategy scripts use), and openshift-deploy as another name
// of dc-deploy.
//
// Images are reproducible: tar entries are sorted and carry mtime 0 and
// uid/gid 0, the gzip stream has no name or time, and the config's created
// time is the Unix epoch, so the same source, Go toolchain and BusyBox give
// the same digests.
//
// The images carry no CA bundle: dc-controller and dc-deploy embed
// Mozilla's roots (golang.org/x/crypto/x509roots/fallback), which Go uses
// when a system has none, so registries over TLS work without files that
// would tie the image to a host or a package version. See docs/images.md.
package imagebuild
