export { type Alerts, createAlerts } from './alerts.js';
export { alertSettingsOf } from './settings.js';
export type { HookOutcomes } from './types.js';
