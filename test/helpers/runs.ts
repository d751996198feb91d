import type { NewRun } from '../../src/store/runs.js';

/** A run `id` as a hook queues it: on its own session `hook:<id>`, not delivered; `fields` override. */
export function hookRun(id: string, fields: Partial<NewRun> = {}): NewRun {
  return {
    id,
    sessionKey: `hook:${id}`,
    message: 'hello',
    model: 'fake/m',
    wakeMode: 'next-heartbeat',
    deliver: false,
    channel: 'last',
    allowUnsafeExternalContent: false,
    contentSource: 'webhook',
    createdAt: 1,
    ...fields,
  };
}
