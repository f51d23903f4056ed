-- `kubectl dc rollout pause`: no trigger fires until resumed.
obj.spec.paused = true
return obj
