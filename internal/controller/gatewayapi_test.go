package controller

import (
	"errors"
	"testing"
)

func TestGatewayAPIVersionError(t *testing.T) {
	cases := []struct {
		name        string
		annotations map[string]string
		refused     bool
	}{
		{"the pinned release", map[string]string{gatewayAPIBundleVersion: "v1.6.3", gatewayAPIChannel: "standard"}, false},
		{"the minimum", map[string]string{gatewayAPIBundleVersion: "v1.4.0", gatewayAPIChannel: "standard"}, false},
		{"standard before rules had names", map[string]string{gatewayAPIBundleVersion: "v1.3.0", gatewayAPIChannel: "standard"}, true},
		{"experimental with named rules", map[string]string{gatewayAPIBundleVersion: "v1.2.1", gatewayAPIChannel: "experimental"}, false},
		{"experimental before named rules", map[string]string{gatewayAPIBundleVersion: "v1.1.0", gatewayAPIChannel: "experimental"}, true},
		{"an unreadable version", map[string]string{gatewayAPIBundleVersion: "latest"}, true},
		{"no bundle annotations", nil, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := gatewayAPIVersionError("httproutes.gateway.networking.k8s.io", tc.annotations)
			var gw *GatewayAPIError
			if tc.refused != errors.As(err, &gw) {
				t.Fatalf("gatewayAPIVersionError = %v, want refused %v", err, tc.refused)
			}
		})
	}
}
