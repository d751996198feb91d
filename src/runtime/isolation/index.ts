export type { BreakerSnapshot } from './breaker.js';
export {
  breakerViews,
  channelTarget,
  defaultLimits,
  modelTarget,
  type Target,
  type TargetLimits,
} from './targets.js';
export {
  createTrySlots,
  type Permit,
  type Ticket,
  type TrySlots,
  type TrySlotsOptions,
  type Wait,
} from './try-slots.js';
