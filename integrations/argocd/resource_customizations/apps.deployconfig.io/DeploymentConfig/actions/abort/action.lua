-- Argo Rollouts' abort is `kubectl dc rollout cancel`: the rollout stops
-- and the last complete version serves. The DeploymentConfig controller
-- acts on the request annotation and removes it; it refuses, with an
-- event, what the command refuses.
if obj.spec ~= nil and obj.spec.paused == true then
  error("unable to cancel paused deployment: resume it first", 0)
end
if obj.metadata.annotations == nil then
  obj.metadata.annotations = {}
end
obj.metadata.annotations["deployconfig.io/rollout-request"] = "cancel"
return obj
