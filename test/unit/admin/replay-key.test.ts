import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { keyOf } from '../../../src/admin/replay.js';
import type { Replayable } from '../../../src/admin/replay-rules.js';

const body = Buffer.from('{"n":1}');
const bodyHash = createHash('sha256').update(body).digest('hex');

function source(headers: Record<string, string>, receipt: Partial<Replayable['receipt']> = {}): Replayable {
  return {
    // As replay-rules.ts gives it: the delivery id its signature gave, and the mapping's scheme.
    ...(receipt.by === 'signature' && receipt.webhookId
      ? { delivery: { webhookId: receipt.webhookId, scheme: 'github' } }
      : {}),
    subPath: 'gh',
    url: '/hooks/gh',
    headers,
    credentials: {},
    body: { payload: { n: 1 }, rawBody: body, payloadIsJsonOfRawBody: true },
    receipt: { by: 'token', via: 'bearer', credential: 'fp', bodyRead: true, ...receipt } as Replayable['receipt'],
  };
}

/** A receipt of a request the signature of mapping `gh` let in, with its sender's delivery id. */
const signed = { by: 'signature', credentials: { gh: 'fp' }, webhookId: 'd-1' } as const;

describe("the key a replay takes (a live request's)", () => {
  it("takes the request's Idempotency-Key, scoped to its sub-path", () => {
    expect(keyOf('r1', source({ 'idempotency-key': 'order-7' }))).toEqual({
      scope: 'gh',
      key: 'order-7',
      bodyHash,
      deliveryId: false,
      fromId: false,
    });
  });

  it("takes its sender's signed delivery id, whatever key it named, scoped to its signature's scheme", () => {
    const taken = { scope: 'signed github', key: 'd-1', bodyHash, deliveryId: true, fromId: false };
    expect(keyOf('r1', source({}, signed))).toEqual(taken);
    expect(keyOf('r1', source({ 'idempotency-key': 'order-7' }, signed))).toEqual(taken);
  });

  it("shares the first request's id among its replays when it had neither", () => {
    expect(keyOf('r1', source({}))).toMatchObject({ key: 'r1', deliveryId: false, fromId: true });
    // A replay's own record carries the key it ran under: replaying that replay takes it too.
    expect(keyOf('r2', source({}, { replayKey: 'r1' }))).toMatchObject({ key: 'r1', fromId: true });
  });
});
