package registry

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// defaultServiceAccount is the account of a pod template that names none.
const defaultServiceAccount = "default"

// ObjectReader reads the objects a keychain is built from. ReaderFor and
// ClientsetReader adapt the two kinds of Kubernetes clients to it.
type ObjectReader interface {
	Secret(ctx context.Context, namespace, name string) (*corev1.Secret, error)
	ServiceAccount(ctx context.Context, namespace, name string) (*corev1.ServiceAccount, error)
}

// ReaderFor adapts a controller-runtime reader. Pass an uncached reader
// (the manager's APIReader): a cached one would watch every secret of the
// cluster.
func ReaderFor(r client.Reader) ObjectReader { return runtimeReader{r} }

type runtimeReader struct{ r client.Reader }

func (r runtimeReader) Secret(ctx context.Context, namespace, name string) (*corev1.Secret, error) {
	s := &corev1.Secret{}
	return s, r.r.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, s)
}

func (r runtimeReader) ServiceAccount(ctx context.Context, namespace, name string) (*corev1.ServiceAccount, error) {
	sa := &corev1.ServiceAccount{}
	return sa, r.r.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, sa)
}

// ClientsetReader adapts a client-go clientset, as dc-deploy has.
func ClientsetReader(cs kubernetes.Interface) ObjectReader { return clientsetReader{cs} }

type clientsetReader struct{ cs kubernetes.Interface }

func (r clientsetReader) Secret(ctx context.Context, namespace, name string) (*corev1.Secret, error) {
	return r.cs.CoreV1().Secrets(namespace).Get(ctx, name, metav1.GetOptions{})
}

func (r clientsetReader) ServiceAccount(ctx context.Context, namespace, name string) (*corev1.ServiceAccount, error) {
	return r.cs.CoreV1().ServiceAccounts(namespace).Get(ctx, name, metav1.GetOptions{})
}

// PullSecretNames returns the image pull secrets a pod of the template
// would pull with: the template's own, then its service account's (the
// "default" account when it names none). A missing service account adds
// nothing, as it would give a pod nothing.
func PullSecretNames(ctx context.Context, r ObjectReader, namespace string, spec *corev1.PodSpec) ([]string, error) {
	seen := map[string]bool{}
	var names []string
	add := func(refs []corev1.LocalObjectReference) {
		for _, ref := range refs {
			if ref.Name != "" && !seen[ref.Name] {
				seen[ref.Name] = true
				names = append(names, ref.Name)
			}
		}
	}
	add(spec.ImagePullSecrets)
	account := spec.ServiceAccountName
	if account == "" {
		account = spec.DeprecatedServiceAccount
	}
	if account == "" {
		account = defaultServiceAccount
	}
	sa, err := r.ServiceAccount(ctx, namespace, account)
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return nil, fmt.Errorf("read service account %s/%s: %w", namespace, account, err)
	default:
		add(sa.ImagePullSecrets)
	}
	return names, nil
}

// LoadKeychain builds the keychain of the named pull secrets of a
// namespace. Secrets that do not exist are skipped, as the kubelet skips
// them; any other error reading one is returned.
func LoadKeychain(ctx context.Context, r ObjectReader, namespace string, names []string) (*Keychain, error) {
	var secrets []corev1.Secret
	for _, name := range names {
		s, err := r.Secret(ctx, namespace, name)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read pull secret %s/%s: %w", namespace, name, err)
		}
		secrets = append(secrets, *s)
	}
	return NewKeychain(secrets)
}

// KeychainForPod returns the keychain a pod of the template would pull
// with (see PullSecretNames).
func KeychainForPod(ctx context.Context, r ObjectReader, namespace string, spec *corev1.PodSpec) (*Keychain, error) {
	names, err := PullSecretNames(ctx, r, namespace, spec)
	if err != nil {
		return nil, err
	}
	return LoadKeychain(ctx, r, namespace, names)
}
