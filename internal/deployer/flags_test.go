package deployer

import "testing"

func TestParseArgs(t *testing.T) {
	env := map[string]string{
		"DC_DEPLOYMENT_NAME": "web-3", "DC_DEPLOYMENT_NAMESPACE": "shop",
		"OPENSHIFT_DEPLOYMENT_NAME": "legacy-1", "OPENSHIFT_DEPLOYMENT_NAMESPACE": "legacy",
	}
	legacy := map[string]string{"OPENSHIFT_DEPLOYMENT_NAME": "legacy-1", "OPENSHIFT_DEPLOYMENT_NAMESPACE": "legacy"}
	tests := []struct {
		name    string
		args    []string
		env     map[string]string
		want    Options
		wantErr bool
	}{
		{name: "environment", env: env, want: Options{Namespace: "shop", Name: "web-3"}},
		{name: "flags win", env: env, args: []string{"--deployment", "web-4", "--namespace=ns", "--until=50%"},
			want: Options{Namespace: "ns", Name: "web-4", Until: "50%"}},
		{name: "OpenShift's variables", env: legacy, args: []string{"--until", "100%"},
			want: Options{Namespace: "legacy", Name: "legacy-1", Until: "100%"}},
		{name: "unknown flag", env: env, args: []string{"--nope"}, wantErr: true},
		{name: "positional argument", env: env, args: []string{"web-3"}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseArgs(tt.args, func(k string) string { return tt.env[k] })
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %t", err, tt.wantErr)
			}
			if got.Namespace != tt.want.Namespace || got.Name != tt.want.Name || got.Until != tt.want.Until {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}
