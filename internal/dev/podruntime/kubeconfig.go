package podruntime

import (
	"fmt"

	"k8s.io/client-go/tools/clientcmd"
)

// writePodKubeconfig writes a copy of the kubeconfig at src to dst for a
// pod's processes: the pod's namespace is the default, as in a pod, and
// when serviceAccount is set it acts as that service account (through
// impersonation), so that kubectl and dc-deploy in a hook or
// custom-strategy process have the permissions the pod would have in a
// real cluster.
func writePodKubeconfig(src, dst, namespace, serviceAccount string) error {
	cfg, err := clientcmd.LoadFromFile(src)
	if err != nil {
		return fmt.Errorf("reading kubeconfig %s: %w", src, err)
	}
	if serviceAccount != "" {
		id := serviceAccountIdentity(namespace, serviceAccount)
		for _, auth := range cfg.AuthInfos {
			auth.Impersonate = id.UserName
			auth.ImpersonateGroups = id.Groups
		}
	}
	for _, ctx := range cfg.Contexts {
		ctx.Namespace = namespace
	}
	if err := clientcmd.WriteToFile(*cfg, dst); err != nil {
		return fmt.Errorf("writing the pod's kubeconfig: %w", err)
	}
	return nil
}
