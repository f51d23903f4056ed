-- `kubectl dc rollout latest`: a new rollout, started the way the command
-- does, by raising status.latestVersion with a Manual cause (Argo CD patches
-- the status subresource for a change to status).
if obj.spec ~= nil and obj.spec.paused == true then
  error("cannot deploy a paused deployment config: resume it first", 0)
end
if obj.status == nil then
  obj.status = {}
end
local version = obj.status.latestVersion
if version == nil then
  version = 0
end
obj.status.latestVersion = version + 1
obj.status.details = {message = "manual change", causes = {{type = "Manual"}}}
return obj
