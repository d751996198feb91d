import type { Action } from '../../src/actions/index.js';

/** A wake action as the HTTP layer hands it to a sink. */
export const wakeAction = (text: string): Action => ({
  kind: 'wake',
  text,
  mode: 'now',
  allowUnsafeExternalContent: false,
  contentSource: 'webhook',
});

/** An agent action under session `hook:<message>`, not delivered. */
export const agentAction = (message: string): Action => ({
  kind: 'agent',
  message,
  sessionKey: `hook:${message}`,
  wakeMode: 'now',
  deliver: false,
  channel: 'last',
  model: 'fake/m',
  allowUnsafeExternalContent: false,
  contentSource: 'webhook',
});
