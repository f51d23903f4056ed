-- `kubectl dc rollout retry`: the DeploymentConfig controller acts on the
-- request annotation (the rollout's ReplicationController is not this
-- object) and removes it; it refuses, with an event, what the command
-- refuses.
if obj.spec ~= nil and obj.spec.paused == true then
  error("unable to retry paused deployment: resume it first", 0)
end
if obj.metadata.annotations == nil then
  obj.metadata.annotations = {}
end
obj.metadata.annotations["deployconfig.io/rollout-request"] = "retry"
return obj
