-- The rollout verbs of `kubectl dc rollout`, enabled when that command
-- would act: nothing but resume while paused, cancel (or abort) while a
-- rollout runs, promote while it waits for a person, promote-full while a
-- rollout with steps or a blue-green one runs, retry once the latest
-- rollout failed or was cancelled.
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
local waiting = reconciling ~= nil and reconciling.status == "True" and reconciling.reason == "AwaitingPromotion"
local started = waiting or (reconciling ~= nil and reconciling.status == "True" and reconciling.reason == "RolloutInProgress")
local running = started or (reconciling ~= nil and reconciling.status == "True" and reconciling.reason == "RolloutPending")
local stalled = condition("Stalled")
local failed = stalled ~= nil and stalled.status == "True"

local strategy = obj.spec ~= nil and obj.spec.strategy or nil
local progressive = strategy ~= nil and (strategy.type == "BlueGreen" or
  (strategy.rollingParams ~= nil and strategy.rollingParams.steps ~= nil and #strategy.rollingParams.steps > 0))

actions["latest"] = {["disabled"] = paused or running}
actions["cancel"] = {["disabled"] = paused or not running}
actions["abort"] = {["disabled"] = paused or not running}
actions["promote"] = {["disabled"] = paused or not waiting}
actions["promote-full"] = {["disabled"] = paused or not started or not progressive}
actions["retry"] = {["disabled"] = paused or not failed}
actions["pause"] = {["disabled"] = paused}
actions["resume"] = {["disabled"] = not paused}
return actions
