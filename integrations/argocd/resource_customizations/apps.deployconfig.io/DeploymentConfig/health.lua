-- Health of a deployconfig.io DeploymentConfig. It follows the controller's
-- kstatus conditions (Ready, Reconciling, Stalled), as kubectl wait, Helm and
-- Flux do: a paused DeploymentConfig is Suspended, and so is a rollout that
-- waits for a person (promote or abort it).
local hs = {}

local function condition(conditions, type)
  if conditions == nil then
    return nil
  end
  for _, c in ipairs(conditions) do
    if c.type == type then
      return c
    end
  end
  return nil
end

if obj.status == nil then
  hs.status = "Progressing"
  hs.message = "Waiting for the controller to observe the DeploymentConfig"
  return hs
end

local generation = obj.metadata.generation
local observed = obj.status.observedGeneration
if generation ~= nil and (observed == nil or observed < generation) then
  hs.status = "Progressing"
  hs.message = "Waiting for the controller to observe generation " .. generation
  return hs
end

local conditions = obj.status.conditions
if obj.spec ~= nil and obj.spec.paused == true then
  hs.status = "Suspended"
  hs.message = "Deployment config is paused"
  local ready = condition(conditions, "Ready")
  if ready ~= nil and ready.message ~= nil then
    hs.message = ready.message
  end
  return hs
end

local stalled = condition(conditions, "Stalled")
if stalled ~= nil and stalled.status == "True" then
  hs.status = "Degraded"
  hs.message = stalled.message
  return hs
end

local ready = condition(conditions, "Ready")
if ready ~= nil and ready.status == "True" then
  hs.status = "Healthy"
  hs.message = ready.message
  return hs
end

local reconciling = condition(conditions, "Reconciling")
-- A rollout that a person, a change window or a RolloutPolicy's open
-- circuit breaker holds waits for something other than the cluster.
local suspends = { AwaitingPromotion = true, AwaitingWindow = true, CircuitOpen = true }
if reconciling ~= nil and reconciling.status == "True" and suspends[reconciling.reason] then
  hs.status = "Suspended"
  hs.message = reconciling.message
  return hs
end
if reconciling ~= nil and reconciling.status == "True" then
  hs.status = "Progressing"
  hs.message = reconciling.message
  return hs
end

hs.status = "Progressing"
hs.message = "Waiting for the controller to report the rollout"
return hs
