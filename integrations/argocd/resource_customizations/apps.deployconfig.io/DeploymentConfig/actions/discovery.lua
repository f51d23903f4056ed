-- The rollout verbs of `kubectl dc rollout`, enabled when that command
-- would act: nothing but resume while paused, cancel while a rollout runs,
-- retry once the latest rollout failed or was cancelled.
local actions = {}

local function condition(type)
  if obj.status == nil or obj.status.conditions == nil then
    return nil
  end
  for _, c in ipairs(obj.status.conditions) do
    if c.type == type then
      return c
    end
  end
  return nil
end

local paused = obj.spec ~= nil and obj.spec.paused == true
local reconciling = condition("Reconciling")
local running = reconciling ~= nil and reconciling.status == "True" and
  (reconciling.reason == "RolloutInProgress" or reconciling.reason == "RolloutPending")
local stalled = condition("Stalled")
local failed = stalled ~= nil and stalled.status == "True"

actions["latest"] = {["disabled"] = paused or running}
actions["cancel"] = {["disabled"] = paused or not running}
actions["retry"] = {["disabled"] = paused or not failed}
actions["pause"] = {["disabled"] = paused}
actions["resume"] = {["disabled"] = not paused}
return actions
