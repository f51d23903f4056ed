-- `kubectl dc rollout resume`.
obj.spec.paused = false
return obj
