export {
  BREAKER_FAILURES,
  BREAKER_MAX_OPEN_MS,
  BREAKER_OPEN_MS,
  type BreakerSnapshot,
  type TryOutcome,
} from './breaker.js';
export {
  CHANNEL_MAX_CONCURRENT,
  channelTarget,
  defaultLimits,
  modelTarget,
  type Target,
  type TargetLimits,
  targetKey,
} from './targets.js';
export {
  createTrySlots,
  type Permit,
  type SlotRequest,
  type Ticket,
  type TrySlots,
  type TrySlotsOptions,
  type Wait,
} from './try-slots.js';
