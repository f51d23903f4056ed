package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/deployconfig/deployconfig/internal/cli/convert"
)

type convertOptions struct {
	files         []string
	recursive     bool
	output        string
	imageRegistry string
}

func newConvertCommand(a *app) *cobra.Command {
	opts := convertOptions{output: "yaml"}
	cmd := &cobra.Command{
		Use:   "convert -f FILE|DIR|-",
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
    registry references (kind DockerImage), which the controller resolves
    (a mapped trigger's lastTriggeredImage, of the old cluster's registry, is
    dropped: the first rollout waits for the new registry's image);
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
HOST/PATH/NAME:TAG whatever its namespace.

-f takes a file, - for standard input, or a directory: every .yaml, .yml and
.json file in it, in name order, as kubectl does; -R includes the files of its
subdirectories. Nothing is written unless every file converts.`,
		Example: `  # Convert a manifest and apply it
  kubectl dc convert -f dc.yaml | kubectl apply -f -

  # Point ImageStreamTag triggers at the registry the images were mirrored to
  kubectl dc convert -f dc.yaml --image-registry=registry.example.com/team

  # Convert every manifest exported into a directory and its subdirectories
  kubectl dc convert -f exported/ -R > converted.yaml

  # Convert from standard input, as JSON
  oc get dc web -o yaml | kubectl dc convert -f - -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.convert(opts)
		},
	}
	cmd.Flags().StringArrayVarP(&opts.files, "filename", "f", nil, "The manifest to convert, a directory of them, or - for standard input; repeat for several.")
	cmd.Flags().BoolVarP(&opts.recursive, "recursive", "R", false, "Also convert the manifests in the subdirectories of a directory given to -f.")
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
	files, err := manifestFiles(opts.files, opts.recursive)
	if err != nil {
		return err
	}
	all := &convert.Result{}
	for _, file := range files {
		res, err := a.convertFile(file, conv)
		if err != nil {
			return err
		}
		for _, w := range res.Warnings {
			if len(files) > 1 {
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

// manifestExtensions are the names of the files a directory given to -f
// contributes, as kubectl has them.
var manifestExtensions = []string{".json", ".yaml", ".yml"}

// manifestFiles expands the arguments of -f: a directory becomes its
// manifest files in name order (with those of its subdirectories when
// recursive, each directory's after the files that sort before it, as
// kubectl walks them); files and "-" stay as given.
func manifestFiles(args []string, recursive bool) ([]string, error) {
	var files []string
	for _, arg := range args {
		if arg == "-" {
			files = append(files, arg)
			continue
		}
		info, err := os.Stat(arg)
		if err != nil || !info.IsDir() {
			// readInput reports a file that cannot be read.
			files = append(files, arg)
			continue
		}
		found, err := dirManifests(arg, recursive)
		if err != nil {
			return nil, err
		}
		if len(found) == 0 {
			return nil, fmt.Errorf("-f %s: no %s files in the directory%s", arg, strings.Join(manifestExtensions, ", "), recursiveHint(recursive))
		}
		files = append(files, found...)
	}
	return files, nil
}

// dirManifests lists the manifest files of dir in name order, descending
// into subdirectories when recursive.
func dirManifests(dir string, recursive bool) ([]string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("-f %s: cannot read %s: %w", dir, path, unwrapPathError(err))
		}
		if d.IsDir() {
			if path != dir && !recursive {
				return filepath.SkipDir
			}
			return nil
		}
		if slices.Contains(manifestExtensions, filepath.Ext(path)) {
			files = append(files, path)
		}
		return nil
	})
	return files, err
}

// recursiveHint tells a user who gave a directory without -R that its
// subdirectories were not looked at.
func recursiveHint(recursive bool) string {
	if recursive {
		return ""
	}
	return " (-R includes its subdirectories)"
}

// unwrapPathError drops the path and operation a PathError repeats.
func unwrapPathError(err error) error {
	var pathErr *fs.PathError
	if errors.As(err, &pathErr) {
		return pathErr.Err
	}
	return err
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
