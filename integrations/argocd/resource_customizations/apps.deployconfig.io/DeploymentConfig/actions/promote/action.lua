-- `kubectl dc rollout promote`: ends the pause (or the wait after an
-- Inconclusive analysis) of a canary step, or switches a blue-green
-- rollout. The DeploymentConfig controller passes the request annotation
-- on to the rollout's ReplicationController, which is not this object, as
-- the command does, and removes it; it refuses, with an event, what the
-- command refuses.
if obj.metadata.annotations == nil then
  obj.metadata.annotations = {}
end
obj.metadata.annotations["deployconfig.io/rollout-request"] = "promote"
return obj
