package argocd

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	lua "github.com/yuin/gopher-lua"
	"sigs.k8s.io/yaml"
)

// root is the resource_customizations directory, laid out as Argo CD's.
const root = "resource_customizations"

// healthTests is health_test.yaml.
type healthTests struct {
	Tests []struct {
		HealthStatus struct {
			Status  string `json:"status"`
			Message string `json:"message"`
		} `json:"healthStatus"`
		InputPath string `json:"inputPath"`
	} `json:"tests"`
}

// actionTests is actions/action_test.yaml.
type actionTests struct {
	DiscoveryTests []struct {
		InputPath string `json:"inputPath"`
		Result    []struct {
			Name     string `json:"name"`
			Disabled bool   `json:"disabled"`
		} `json:"result"`
	} `json:"discoveryTests"`
	ActionTests []struct {
		Action             string `json:"action"`
		InputPath          string `json:"inputPath"`
		ExpectedOutputPath string `json:"expectedOutputPath"`
	} `json:"actionTests"`
}

// runLua runs a script with obj as Argo CD does: the base, table and
// package libraries only, obj a global, the script's return value the
// result.
func runLua(t *testing.T, script string, obj map[string]any) lua.LValue {
	t.Helper()
	l := lua.NewState(lua.Options{SkipOpenLibs: true})
	defer l.Close()
	for _, lib := range []struct {
		name string
		open lua.LGFunction
	}{{lua.LoadLibName, lua.OpenPackage}, {lua.BaseLibName, lua.OpenBase}, {lua.TabLibName, lua.OpenTable}} {
		l.Push(l.NewFunction(lib.open))
		l.Push(lua.LString(lib.name))
		l.Call(1, 0)
	}
	l.SetGlobal("obj", toLua(l, obj))
	if err := l.DoString(script); err != nil {
		t.Fatalf("lua: %v", err)
	}
	return l.Get(-1)
}

// toLua converts a decoded JSON value into Lua values.
func toLua(l *lua.LState, v any) lua.LValue {
	switch v := v.(type) {
	case map[string]any:
		table := l.NewTable()
		for k, e := range v {
			table.RawSetString(k, toLua(l, e))
		}
		return table
	case []any:
		table := l.NewTable()
		for _, e := range v {
			table.Append(toLua(l, e))
		}
		return table
	case string:
		return lua.LString(v)
	case float64:
		return lua.LNumber(v)
	case bool:
		return lua.LBool(v)
	}
	return lua.LNil
}

// fromLua converts Lua values back: a table with elements 1..n is a list,
// any other table an object.
func fromLua(v lua.LValue) any {
	switch v := v.(type) {
	case *lua.LTable:
		if n := v.MaxN(); n > 0 {
			list := make([]any, 0, n)
			for i := 1; i <= n; i++ {
				list = append(list, fromLua(v.RawGetInt(i)))
			}
			return list
		}
		obj := map[string]any{}
		v.ForEach(func(k, e lua.LValue) { obj[k.String()] = fromLua(e) })
		return obj
	case lua.LString:
		return string(v)
	case lua.LNumber:
		return float64(v)
	case lua.LBool:
		return bool(v)
	}
	return nil
}

// readObject reads a YAML test object as JSON values (numbers float64).
func readObject(t *testing.T, path string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var obj map[string]any
	if err := json.Unmarshal(js, &obj); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return obj
}

func readScript(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func readYAML(t *testing.T, path string, into any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(data, into); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// dirsWith returns the directories under root that hold name.
func dirsWith(t *testing.T, name string) []string {
	t.Helper()
	var dirs []string
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err == nil && d.Name() == name {
			dirs = append(dirs, filepath.Dir(path))
		}
		return err
	})
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no %s under %s: %v", name, root, err)
	}
	return dirs
}

// TestHealthScripts runs every health.lua on each object of its
// health_test.yaml and compares status and message, as Argo CD's tests do.
func TestHealthScripts(t *testing.T) {
	for _, dir := range dirsWith(t, "health_test.yaml") {
		var tests healthTests
		readYAML(t, filepath.Join(dir, "health_test.yaml"), &tests)
		script := readScript(t, filepath.Join(dir, "health.lua"))
		for _, tc := range tests.Tests {
			t.Run(filepath.Join(dir, tc.InputPath), func(t *testing.T) {
				got, ok := fromLua(runLua(t, script, readObject(t, filepath.Join(dir, tc.InputPath)))).(map[string]any)
				if !ok {
					t.Fatalf("health.lua returned %v, want a table", got)
				}
				if got["status"] != tc.HealthStatus.Status || got["message"] != tc.HealthStatus.Message {
					t.Errorf("health %v %q, want %s %q", got["status"], got["message"], tc.HealthStatus.Status, tc.HealthStatus.Message)
				}
			})
		}
	}
}

// TestActionScripts runs every discovery.lua and action.lua on the objects
// of its action_test.yaml: discovery must offer exactly the listed actions,
// enabled or not, and an action must return the expected object.
// DC_UPDATE_TESTDATA=1 writes the expected objects from the actions.
func TestActionScripts(t *testing.T) {
	for _, dir := range dirsWith(t, "action_test.yaml") {
		var tests actionTests
		readYAML(t, filepath.Join(dir, "action_test.yaml"), &tests)
		discovery := readScript(t, filepath.Join(dir, "discovery.lua"))
		for _, tc := range tests.DiscoveryTests {
			t.Run("discovery/"+tc.InputPath, func(t *testing.T) {
				got, ok := fromLua(runLua(t, discovery, readObject(t, filepath.Join(dir, tc.InputPath)))).(map[string]any)
				if !ok {
					t.Fatalf("discovery.lua returned %v, want a table", got)
				}
				want := map[string]any{}
				for _, r := range tc.Result {
					want[r.Name] = map[string]any{"disabled": r.Disabled}
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("actions %v, want %v", got, want)
				}
			})
		}
		for _, tc := range tests.ActionTests {
			t.Run(fmt.Sprintf("actions/%s/%s", tc.Action, tc.InputPath), func(t *testing.T) {
				script := readScript(t, filepath.Join(dir, tc.Action, "action.lua"))
				got := fromLua(runLua(t, script, readObject(t, filepath.Join(dir, tc.InputPath))))
				path := filepath.Join(dir, tc.ExpectedOutputPath)
				if os.Getenv("DC_UPDATE_TESTDATA") != "" {
					data, err := yaml.Marshal(got)
					if err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(path, data, 0o644); err != nil {
						t.Fatal(err)
					}
					return
				}
				if want := readObject(t, path); !reflect.DeepEqual(got, any(want)) {
					gotYAML, _ := yaml.Marshal(got)
					t.Errorf("action %s returned, unlike %s:\n%s", tc.Action, path, gotYAML)
				}
			})
		}
	}
}

// TestPausedActionsRefuse: latest, cancel (abort) and retry refuse a paused
// DeploymentConfig with the words of `kubectl dc rollout`.
func TestPausedActionsRefuse(t *testing.T) {
	dir := filepath.Join(root, "apps.deployconfig.io", "DeploymentConfig", "actions")
	paused := readObject(t, filepath.Join(dir, "testdata", "paused.yaml"))
	for action, want := range map[string]string{
		"latest": "cannot deploy a paused deployment config",
		"cancel": "unable to cancel paused deployment",
		"abort":  "unable to cancel paused deployment",
		"retry":  "unable to retry paused deployment",
	} {
		t.Run(action, func(t *testing.T) {
			l := lua.NewState()
			defer l.Close()
			l.SetGlobal("obj", toLua(l, paused))
			err := l.DoString(readScript(t, filepath.Join(dir, action, "action.lua")))
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s on a paused DeploymentConfig: %v, want %q", action, err, want)
			}
		})
	}
}

// TestDocsSnippetMatchesTheScripts: the argocd-cm of docs/gitops.md holds
// exactly the scripts tested here.
func TestDocsSnippetMatchesTheScripts(t *testing.T) {
	doc := readScript(t, filepath.Join("..", "..", "docs", "gitops.md"))
	const marker = "<!-- argocd-cm: TestDocsSnippetMatchesTheScripts checks this block -->\n```yaml\n"
	start := strings.Index(doc, marker)
	if start < 0 {
		t.Fatal("docs/gitops.md has no argocd-cm block")
	}
	block := doc[start+len(marker):]
	block = block[:strings.Index(block, "```")]
	var cm struct {
		Data map[string]string `json:"data"`
	}
	// Fields other than data (apiVersion, metadata) are not compared.
	if err := yaml.Unmarshal([]byte(block), &cm); err != nil {
		t.Fatalf("argocd-cm block: %v", err)
	}
	dir := filepath.Join(root, "apps.deployconfig.io", "DeploymentConfig")
	if got := cm.Data["resource.customizations.health.apps.deployconfig.io_DeploymentConfig"]; got != readScript(t, filepath.Join(dir, "health.lua")) {
		t.Errorf("the health check of docs/gitops.md differs from health.lua:\n%s", got)
	}
	var actions struct {
		Discovery   string `json:"discovery.lua"`
		Definitions []struct {
			Name   string `json:"name"`
			Action string `json:"action.lua"`
		} `json:"definitions"`
	}
	if err := yaml.UnmarshalStrict([]byte(cm.Data["resource.customizations.actions.apps.deployconfig.io_DeploymentConfig"]), &actions); err != nil {
		t.Fatalf("actions of docs/gitops.md: %v", err)
	}
	if actions.Discovery != readScript(t, filepath.Join(dir, "actions", "discovery.lua")) {
		t.Errorf("discovery.lua of docs/gitops.md differs:\n%s", actions.Discovery)
	}
	var names []string
	for _, d := range actions.Definitions {
		names = append(names, d.Name)
		if d.Action != readScript(t, filepath.Join(dir, "actions", d.Name, "action.lua")) {
			t.Errorf("action %s of docs/gitops.md differs:\n%s", d.Name, d.Action)
		}
	}
	if got := strings.Join(names, ","); got != "latest,cancel,abort,promote,promote-full,retry,pause,resume" {
		t.Errorf("docs/gitops.md defines actions %s", got)
	}
}
