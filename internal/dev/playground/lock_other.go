//go:build !unix

package playground

import "context"

// lockCreation does nothing where flock(2) is missing; kwokctl's binary
// runtime targets Unix systems anyway.
func lockCreation(context.Context, Options) (unlock func(), err error) {
	return func() {}, nil
}
