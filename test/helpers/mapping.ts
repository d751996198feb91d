import { createModelCatalog } from '../../src/actions/index.js';
import { loadConfig } from '../../src/config/index.js';
import { createMappingEngine, type HookRequest } from '../../src/mapping/index.js';

/** A mapping engine over `hooks` (enabled, with a token) and any other config keys, its clock fixed. */
export function engine(hooks: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  const config = loadConfig({ data: { hooks: { enabled: true, token: 't'.repeat(20), ...hooks }, ...extra }, env: {} });
  const actionOptions = { models: createModelCatalog(config), chatnetConfigured: false };
  return createMappingEngine({ config, actionOptions, now: () => new Date('2026-01-01T00:00:00Z') });
}

/** A hook request for `/hooks/<subPath>` with this JSON payload. */
export const request = (subPath: string, payload: unknown, extra: Partial<HookRequest> = {}): HookRequest => ({
  subPath,
  payload,
  headers: {},
  query: {},
  url: `/hooks/${subPath}`,
  rawBody: Buffer.from(JSON.stringify(payload)),
  ...extra,
});
