// Package audit reads the kube-apiserver's audit log (JSON lines of
// audit.k8s.io/v1 Events) and turns it into what the benchmark reports:
// who wrote what (writes by actor and kind of object, in a namespace and a
// time window) and when given requests completed.
package audit

// Policy is the audit policy the benchmark's cluster runs with: every
// request but watches, at the Metadata level (who, what, when, result; no
// bodies), recorded once when its response is complete. Watches are left
// out because they are long-running and say nothing about cost per rollout;
// bodies are left out because they would make the log many times larger
// without adding anything that is counted.
const Policy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages:
- RequestReceived
- ResponseStarted
rules:
- level: None
  verbs: ["watch"]
- level: None
  nonResourceURLs: ["/healthz*", "/readyz*", "/livez*", "/metrics", "/version", "/openapi*", "/api*"]
- level: Metadata
`
