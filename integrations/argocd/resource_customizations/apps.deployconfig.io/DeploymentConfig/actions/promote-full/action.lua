-- `kubectl dc rollout promote --full`: skips every remaining step, pause
-- and analysis of a canary and goes to 100%, or switches a blue-green
-- rollout. The DeploymentConfig controller passes the request annotation
-- on to the rollout's ReplicationController, as the command does, and
-- removes it; it refuses, with an event, what the command refuses.
if obj.metadata.annotations == nil then
  obj.metadata.annotations = {}
end
obj.metadata.annotations["deployconfig.io/rollout-request"] = "promote-full"
return obj
