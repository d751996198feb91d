import { describe, expect, it } from 'vitest';
import type { StoredRequest } from '../../../src/actions/index.js';
import { replayableOf } from '../../../src/admin/replay-rules.js';
import { createCredentialFingerprints } from '../../../src/ingress/index.js';
import { engine } from '../../helpers/mapping.js';

/** A request mapping `slack`'s signature let in, kept as a failure with its whole body. */
function signedBySlack(payload: object, fingerprint: string): StoredRequest {
  return {
    failure: {
      id: 'req_1',
      requestId: 'req_1',
      subPath: 'slack',
      url: '/hooks/slack',
      headers: { 'content-type': 'application/json' },
      credentials: {},
      body: Buffer.from(JSON.stringify(payload)),
      redacted: false,
      code: 'INTERNAL',
      error: 'x',
      receipt: { by: 'signature', credentials: { slack: fingerprint }, bodyRead: true },
    },
  };
}

describe('what a replay of a signed request runs (docs/runtime.md#request-log-and-replay)', () => {
  const mappings = engine({
    mappings: [
      {
        id: 'slack',
        match: { path: 'slack' },
        verify: { scheme: 'slack', secret: 'slack-signing-secret' },
        action: 'wake',
        textTemplate: 'event {{type}}',
      },
    ],
  });
  const fingerprints = createCredentialFingerprints('gateway-token-0123456789', 't'.repeat(20));
  const rules = { mappings, fingerprints, allowQueryToken: false };
  const slack = mappings.mappings.find((m) => m.id === 'slack');
  if (!slack) throw new Error('no slack mapping');

  it("answers its sender's handshake as it was answered live, running nothing", () => {
    const check = { type: 'url_verification', challenge: 'c-123' };
    const replayable = replayableOf('req_1', signedBySlack(check, fingerprints.of(slack)), rules);
    expect(replayable.handshake).toEqual({ eventType: 'url_verification', body: { challenge: 'c-123' } });
  });

  it('runs the mapping of a delivery that is no handshake', () => {
    const event = { type: 'event_callback', event_id: 'Ev1' };
    const replayable = replayableOf('req_1', signedBySlack(event, fingerprints.of(slack)), rules);
    expect(replayable.handshake).toBeUndefined();
    expect(replayable.verified).toEqual(new Set(['slack']));
  });
});
