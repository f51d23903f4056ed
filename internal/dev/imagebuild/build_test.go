package imagebuild

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// TestBuild builds the images twice and checks what a user of them would:
// the same digests both times, a numeric non-root user, the labels, the
// deployer's shell and openshift-deploy, and a readable image layout.
func TestBuild(t *testing.T) {
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{Root: root, Version: "v1.2.3-test", Revision: "0123abcd"}
	ctx := t.Context()
	start := time.Now()
	first, err := Build(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("first build: %s", time.Since(start))
	start = time.Now()
	second, err := Build(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("second build: %s", time.Since(start))

	wantNames := []string{ControllerImageName, DeployerImageName, PauseImageName, SampleAppImageName}
	if got := imageNames(first); !slices.Equal(got, wantNames) {
		t.Fatalf("images %v, want %v", got, wantNames)
	}
	t.Run("reproducible", func(t *testing.T) {
		for i := range first {
			a, b := digest(t, first[i].Image), digest(t, second[i].Image)
			if a != b {
				t.Errorf("%s: digests differ between two builds of the same source: %s, %s", first[i].Name, a, b)
			}
		}
	})
	t.Run("config", func(t *testing.T) {
		for _, img := range first {
			checkConfig(t, img, opts)
		}
	})
	deployer := extract(t, first[1].Image)
	t.Run("deployer filesystem", func(t *testing.T) { checkDeployerFiles(t, deployer) })
	t.Run("busybox runs", func(t *testing.T) { checkShellRuns(t, deployer, first[1].Image) })
	t.Run("openshift-deploy from the shell", func(t *testing.T) { checkOpenShiftDeploy(t, deployer) })
	t.Run("layout", func(t *testing.T) { checkLayout(t, first) })
}

func imageNames(images []Image) []string {
	var names []string
	for _, img := range images {
		names = append(names, img.Name)
	}
	return names
}

func digest(t *testing.T, img v1.Image) v1.Hash {
	t.Helper()
	d, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// checkConfig checks an image's config: what the kubelet and the restricted
// Pod Security Standard look at, and the labels.
func checkConfig(t *testing.T, img Image, opts Options) {
	t.Helper()
	cf, err := img.Image.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	c := cf.Config
	uid, gid, ok := strings.Cut(c.User, ":")
	if n, err := strconv.Atoi(uid); !ok || err != nil || n == 0 {
		t.Errorf("%s: user %q, want a numeric non-root uid:gid", img.Name, c.User)
	}
	if _, err := strconv.Atoi(gid); err != nil {
		t.Errorf("%s: user %q, want a numeric gid", img.Name, c.User)
	}
	title := filepath.Base(c.Entrypoint[0])
	want := map[string]string{
		LabelSource: DefaultSource, LabelRevision: opts.Revision, LabelVersion: opts.Version, LabelTitle: title,
	}
	for k, v := range want {
		if c.Labels[k] != v {
			t.Errorf("%s: label %s = %q, want %q", img.Name, k, c.Labels[k], v)
		}
	}
	if c.Labels[LabelDescription] == "" {
		t.Errorf("%s: no %s label", img.Name, LabelDescription)
	}
	if len(c.Entrypoint) != 1 || !strings.HasPrefix(c.Entrypoint[0], "/usr/local/bin/") {
		t.Errorf("%s: entrypoint %q, want one binary in /usr/local/bin", img.Name, c.Entrypoint)
	}
	if c.WorkingDir != "/" || !slices.Contains(c.Env, imagePath) {
		t.Errorf("%s: working dir %q env %q", img.Name, c.WorkingDir, c.Env)
	}
	if !cf.Created.Time.Equal(epoch) || cf.OS != "linux" {
		t.Errorf("%s: created %s os %s, want the epoch and linux", img.Name, cf.Created.Time, cf.OS)
	}
	if mt, err := img.Image.MediaType(); err != nil || mt != types.OCIManifestSchema1 {
		t.Errorf("%s: media type %s (%v), want an OCI manifest", img.Name, mt, err)
	}
	files := layerFiles(t, img.Image)
	// Nothing in the files depends on when or by whom they were built.
	for name, hdr := range files {
		if !hdr.ModTime.Equal(epoch) || hdr.Uid != hdr.Gid || (hdr.Uid != 0 && name != "home/nonroot") {
			t.Errorf("%s: /%s has mtime %s, owner %d:%d; want the epoch and root", img.Name, name, hdr.ModTime, hdr.Uid, hdr.Gid)
		}
	}
	// The entrypoint exists and is executable.
	hdr := files[strings.TrimPrefix(c.Entrypoint[0], "/")]
	if hdr == nil || hdr.Typeflag != tar.TypeReg || hdr.Mode&0o111 == 0 {
		t.Errorf("%s: entrypoint %s is not an executable file in the image", img.Name, c.Entrypoint[0])
	}
}

// layerFiles maps the paths of an image's filesystem to their headers.
func layerFiles(t *testing.T, img v1.Image) map[string]*tar.Header {
	t.Helper()
	rc := mutate.Extract(img)
	defer rc.Close()
	files := map[string]*tar.Header{}
	tr := tar.NewReader(rc)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files
		}
		if err != nil {
			t.Fatal(err)
		}
		files[strings.TrimSuffix(hdr.Name, "/")] = hdr
	}
}

// extract writes an image's filesystem into a temporary directory.
func extract(t *testing.T, img v1.Image) string {
	t.Helper()
	dir := t.TempDir()
	rc := mutate.Extract(img)
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return dir
		}
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, filepath.FromSlash(hdr.Name))
		switch hdr.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(p, 0o755)
		case tar.TypeSymlink:
			err = os.Symlink(hdr.Linkname, p)
		case tar.TypeReg:
			var data []byte
			if data, err = io.ReadAll(tr); err == nil {
				err = os.WriteFile(p, data, os.FileMode(hdr.Mode)&0o777)
			}
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// checkDeployerFiles checks /bin/sh and openshift-deploy in the deployer
// image, and that every applet linked is one the BusyBox has.
func checkDeployerFiles(t *testing.T, dir string) {
	links := map[string]string{
		"bin/sh":                         "busybox",
		"usr/local/bin/openshift-deploy": "dc-deploy",
		"usr/bin/env":                    "../../bin/busybox",
	}
	for p, want := range links {
		got, err := os.Readlink(filepath.Join(dir, p))
		if err != nil || got != want {
			t.Errorf("/%s -> %q (%v), want -> %q", p, got, err, want)
		}
	}
	out, err := exec.Command(filepath.Join(dir, "bin", "busybox"), "--list").Output()
	if err != nil {
		t.Fatalf("busybox --list: %v", err)
	}
	have := strings.Fields(string(out))
	for _, applet := range shellApplets() {
		if !slices.Contains(have, applet) {
			t.Errorf("/bin/%s links to busybox, which has no such applet", applet)
		}
	}
}

// checkShellRuns runs the image's /bin/sh as a user's script would, and
// checks the shell label names the BusyBox that is there.
func checkShellRuns(t *testing.T, dir string, img v1.Image) {
	cmd := exec.Command(filepath.Join(dir, "bin", "sh"), "-c", "echo ok; sleep 0; date +%Y >/dev/null && wc -l <etc/passwd")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil || string(out) != "ok\n2\n" {
		t.Errorf("sh -c: %q, %v; want ok and the 2 lines of /etc/passwd", out, err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	banner, err := exec.Command(filepath.Join(dir, "bin", "busybox")).CombinedOutput()
	if err != nil {
		t.Fatalf("busybox: %v", err)
	}
	if label := cf.Config.Labels[LabelShell]; label == "" || !bytes.HasPrefix(banner, []byte(label)) {
		t.Errorf("label %s = %q, but the shell says %q", LabelShell, label, strings.SplitN(string(banner), "\n", 2)[0])
	}
}

// checkOpenShiftDeploy calls openshift-deploy from the image's shell with
// OpenShift's flags, as a converted custom strategy does: dc-deploy answers
// to that name and accepts them (it then fails on the missing kubeconfig,
// not on a flag).
func checkOpenShiftDeploy(t *testing.T, dir string) {
	cmd := exec.Command(filepath.Join(dir, "bin", "sh"), "-c",
		"openshift-deploy --until=50% --deployment web-1 --namespace shop --kubeconfig /nonexistent/kubeconfig")
	cmd.Env = []string{"PATH=" + filepath.Join(dir, "usr", "local", "bin") + ":" + filepath.Join(dir, "bin")}
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("openshift-deploy: %v, want exit code 1; output %q", err, out)
	}
	if want := "error: load the client configuration: stat /nonexistent/kubeconfig"; !strings.Contains(string(out), want) {
		t.Errorf("openshift-deploy said %q, want %q", out, want)
	}
}

// checkLayout writes the images as an OCI layout, reads it back and finds
// each image under its ref.name.
func checkLayout(t *testing.T, images []Image) {
	dir := t.TempDir()
	if err := WriteLayout(dir, "e2e", images); err != nil {
		t.Fatal(err)
	}
	p, err := layout.FromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	idx, err := p.ImageIndex()
	if err != nil {
		t.Fatal(err)
	}
	m, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	refs := map[string]v1.Hash{}
	for _, d := range m.Manifests {
		refs[d.Annotations[RefNameAnnotation]] = d.Digest
	}
	for _, img := range images {
		want := digest(t, img.Image)
		ref := img.Name + ":e2e"
		if refs[ref] != want {
			t.Errorf("layout: %s is %v, want %s", ref, refs[ref], want)
			continue
		}
		back, err := idx.Image(want)
		if err != nil {
			t.Fatal(err)
		}
		if got := digest(t, back); got != want {
			t.Errorf("layout: %s read back as %s", ref, got)
		}
	}
	if len(refs) != len(images) {
		t.Errorf("layout has %d images, want %d", len(refs), len(images))
	}
}
