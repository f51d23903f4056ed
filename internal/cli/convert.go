package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/spf13/cobra"

	"github.com/deployconfig/deployconfig/internal/cli/convert"
)

type convertOptions struct {
	files         []string
	output        string
	imageRegistry string
}

func newConvertCommand(a *app) *cobra.Command {
	opts := convertOptions{output: "yaml"}
	cmd := &cobra.Command{
		Use:   "convert -f FILE|-",
		Short: "Convert OpenShift DeploymentConfig manifests to apps.deployconfig.io/v1",
		Long: `Convert OpenShift DeploymentConfig manifests (apps.openshift.io/v1 or the
legacy apiVersion v1; single objects, v1 Lists, multi-document YAML or JSON)
into DeploymentConfigs of apps.deployconfig.io/v1, on standard output. Every
field that has a meaning here is kept; warnings on standard error say what
does not carry over:

  - server-set metadata (resourceVersion, uid, selfLink, creationTimestamp,
    generation, managedFields), owner references and status are dropped;
  - deploy.openshift.io/deployer-pod.ignore becomes deployconfig.io/deployer-pod.ignore;
  - ImageChange triggers on ImageStreamTags are kept but never automatic,
    since there are no ImageStreams here, unless --image-registry maps them to
    registry references (kind DockerImage), which the controller resolves;
  - tagImages hooks into ImageStreamTags need a registry reference, likewise;
  - fields this API does not have are dropped;
  - Kubernetes objects in a List or a multi-document file pass through
    unchanged; OpenShift-only kinds (Route, BuildConfig, ImageStream,
    Template...) are dropped.

--image-registry takes HOST or HOST/PATH. With HOST, the ImageStreamTag
NAME:TAG of namespace NS becomes HOST/NS/NAME:TAG, the layout of OpenShift's
integrated registry; NS is the reference's namespace, else the
DeploymentConfig's metadata.namespace (references with neither are not
mapped). With HOST/PATH, every ImageStreamTag NAME:TAG becomes
HOST/PATH/NAME:TAG whatever its namespace.`,
		Example: `  # Convert a manifest and apply it
  kubectl dc convert -f dc.yaml | kubectl apply -f -

  # Point ImageStreamTag triggers at the registry the images were mirrored to
  kubectl dc convert -f dc.yaml --image-registry=registry.example.com/team

  # Convert from standard input, as JSON
  oc get dc web -o yaml | kubectl dc convert -f - -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.convert(opts)
		},
	}
	cmd.Flags().StringArrayVarP(&opts.files, "filename", "f", nil, "The manifest to convert, or - for standard input; repeat for several.")
	cmd.Flags().StringVarP(&opts.output, "output", "o", "yaml", "Output format: yaml or json.")
	cmd.Flags().StringVar(&opts.imageRegistry, "image-registry", "", "Map ImageStreamTags to this registry: HOST (HOST/NAMESPACE/NAME:TAG) or HOST/PATH (HOST/PATH/NAME:TAG).")
	_ = cmd.MarkFlagFilename("filename", "yaml", "yml", "json")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]cobra.Completion{"yaml", "json"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

func (a *app) convert(opts convertOptions) error {
	if len(opts.files) == 0 {
		return errors.New("-f is required: the OpenShift manifest to convert (a file, or - for standard input)")
	}
	if opts.output != "yaml" && opts.output != "json" {
		return fmt.Errorf("-o: expected yaml or json, got %q", opts.output)
	}
	conv := convert.Options{}
	if opts.imageRegistry != "" {
		registry, err := convert.ParseImageRegistry(opts.imageRegistry)
		if err != nil {
			return fmt.Errorf("--image-registry: %w", err)
		}
		conv.ImageRegistry = registry
	}
	all := &convert.Result{}
	for _, file := range opts.files {
		res, err := a.convertFile(file, conv)
		if err != nil {
			return err
		}
		for _, w := range res.Warnings {
			if len(opts.files) > 1 {
				w = file + ": " + w
			}
			fmt.Fprintln(a.Streams.ErrOut, "Warning: "+w)
		}
		all.Documents = append(all.Documents, res.Documents...)
	}
	render := all.YAML
	if opts.output == "json" {
		render = all.JSON
	}
	data, err := render()
	if err != nil {
		return err
	}
	_, err = a.Streams.Out.Write(data)
	return err
}

func (a *app) convertFile(file string, opts convert.Options) (*convert.Result, error) {
	data, err := readInput(file, a.Streams.In)
	if err != nil {
		return nil, err
	}
	res, err := convert.Convert(data, opts)
	if err != nil {
		return nil, fmt.Errorf("-f %s: %w", file, err)
	}
	return res, nil
}

// readInput reads a file, or standard input for "-".
func readInput(file string, stdin io.Reader) ([]byte, error) {
	if file == "-" {
		data, err := io.ReadAll(stdin)
		if err != nil {
			return nil, fmt.Errorf("-f -: cannot read standard input: %w", err)
		}
		return data, nil
	}
	data, err := os.ReadFile(file)
	var pathErr *fs.PathError
	if errors.As(err, &pathErr) {
		return nil, fmt.Errorf("-f %s: cannot read the file: %w", file, pathErr.Err)
	}
	if err != nil {
		return nil, fmt.Errorf("-f %s: %w", file, err)
	}
	return data, nil
}
