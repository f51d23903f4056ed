package deployer

import (
	"fmt"

	"github.com/spf13/pflag"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
)

// Flags are dc-deploy's own command-line flags. The binary and the local pod
// runtime (which runs a deployer container's arguments in-process) both
// parse them through here, so that they read a deployer's arguments alike.
type Flags struct {
	// Name, Namespace and Until are --deployment, --namespace and --until.
	Name      string
	Namespace string
	Until     string
}

// AddFlags registers the flags on fs.
func (f *Flags) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.Name, "deployment", "", "the deployment (ReplicationController) to carry out (default $"+dcv1.EnvDeploymentName+")")
	fs.StringVar(&f.Namespace, "namespace", "", "the deployment's namespace (default $"+dcv1.EnvDeploymentNamespace+")")
	fs.StringVar(&f.Until, "until", "", "stop early: start, pre, mid, or a percentage from 0% to 100%")
}

// Options returns the Options the flags and the environment give. A flag
// wins over DC_DEPLOYMENT_NAME / DC_DEPLOYMENT_NAMESPACE, which win over
// OpenShift's OPENSHIFT_DEPLOYMENT_NAME / _NAMESPACE (set for old scripts).
// Out, the client and the logger are the caller's to fill in.
func (f *Flags) Options(getenv func(string) string) Options {
	return Options{
		Namespace: firstSet(f.Namespace, getenv(dcv1.EnvDeploymentNamespace), getenv(dcv1.EnvOpenShiftDeploymentNamespace)),
		Name:      firstSet(f.Name, getenv(dcv1.EnvDeploymentName), getenv(dcv1.EnvOpenShiftDeploymentName)),
		Until:     f.Until,
	}
}

// ParseArgs parses a deployer's arguments (without the command's name),
// e.g. ["--until=50%"], with getenv reading the container's environment.
func ParseArgs(args []string, getenv func(string) string) (Options, error) {
	f := &Flags{}
	fs := pflag.NewFlagSet("dc-deploy", pflag.ContinueOnError)
	fs.SetOutput(discard{})
	f.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		return Options{}, fmt.Errorf("dc-deploy arguments: %w", err)
	}
	if fs.NArg() > 0 {
		return Options{}, fmt.Errorf("dc-deploy arguments: unexpected %q", fs.Args())
	}
	return f.Options(getenv), nil
}

// firstSet returns the first non-empty value.
func firstSet(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}

// discard swallows pflag's own error printing: ParseArgs returns the error.
type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
