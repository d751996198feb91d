import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type Answer, call, until } from '../helpers/http.js';
import { type SuiteStore, suiteStore, suiteStores } from '../helpers/postgres.js';
import {
  eventsOf,
  expectRefused,
  HOOK,
  HOOK_TOKEN,
  idOf,
  insertRecord,
  insertRow,
  recorded,
  runsOf,
  SECRETS,
  world,
} from '../helpers/replay-world.js';

const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

let store: SuiteStore;

describe.each(suiteStores)('replay rules (docs/runtime.md#request-log-and-replay) on %s', (kind) => {
  beforeAll(() => {
    store = suiteStore(kind);
  });
  afterAll(() => store.stop());

  it('refuses (409 REPLAY_NOT_ALLOWED) what was refused at receipt, what has no whole body, and a mapping its credentials never opened', async () => {
    const w = await world(store, cleanups);
    // Refused for its own mapping: signed by sender a, but its source selects the token-only catch-all.
    const wrongMapping = await w.signed('ingest', { source: 'x', n: 1 }, SECRETS.a, 'd-1');
    expect(wrongMapping.status).toBe(401);
    // Signed by sender a, but its source selects sender c's mapping.
    const otherSender = await w.signed('ingest', { source: 'c', n: 2 }, SECRETS.a, 'd-2');
    expect(otherSender.status).toBe(401);
    const tooLarge = await w.hook('note', { n: 3, pad: 'x'.repeat(9000) });
    expect(tooLarge.status).toBe(413);
    const notJson = await w.hook('note', '{"n": 4', { ...HOOK, 'content-type': 'application/json' });
    expect(notJson.status).toBe(400);
    const cut = await w.hook('note', { n: 5, pad: 'x'.repeat(4000) });
    expect(cut.status).toBe(200);
    const masked = await w.hook('note', { n: 6, card: { number: '4242' } });
    expect(masked.status).toBe(200);
    // A failure keeps its whole body, but with its redact paths masked: not the body received.
    const maskedFailure = await w.hook('flaky', { n: 8, card: { number: '4242' } });
    expect(maskedFailure.status).toBe(500);
    const ids = [wrongMapping, otherSender, tooLarge, notJson, cut, masked, maskedFailure].map(idOf);
    for (const id of ids) await recorded(w, id);
    await insertRecord(store, w, 'refused-at-the-door', 401, 'UNAUTHORIZED');
    await insertRecord(store, w, 'logged-by-an-older-hookd', 500, 'TRANSFORM_FAILED');
    // Let in, then turned away busy: a 503 keeps no body.
    const receipt = JSON.stringify({ by: 'token', via: 'bearer', credential: 'any', bodyRead: true });
    await insertRecord(store, w, 'busy', 503, 'QUEUE_FULL', { receipt, body: Buffer.alloc(0), body_whole: 0 });
    // Kept whole, then lost: its record finds no body of the size it received (a database
    // restored without its body log).
    await insertRecord(store, w, 'lost', 200, null as unknown as string, {
      receipt,
      body: Buffer.alloc(0),
      body_bytes: 7,
    });
    const eventsBefore = (await eventsOf(w)).length;

    const [toOpen, toC, large, invalid, truncated, redacted, maskedCopy] = await Promise.all(
      ids.map((id) => w.replay(id)),
    );
    expectRefused(
      toOpen as Answer,
      'token-required',
      /mapping open, .* takes only the hook token; .*signature of signed-a/,
    );
    expectRefused(
      toC as Answer,
      'signature-not-carried',
      /mapping signed-c, .*its own signature, which it did not carry/,
    );
    expectRefused(
      large as Answer,
      'body-not-read',
      /refused at receipt \(413 PAYLOAD_TOO_LARGE\) before its body was read/,
    );
    expectRefused(invalid as Answer, 'body-not-read', /\(400 INVALID_JSON\)/);
    expectRefused(truncated as Answer, 'body-truncated', /cut at hooks\.log\.maxBodyBytes/);
    expectRefused(redacted as Answer, 'body-redacted', /redacted \(hooks\.log\.redact\)/);
    expectRefused(await w.replay('busy'), 'body-not-kept', /answered 503 QUEUE_FULL at receipt, which keeps no body/);
    expectRefused(await w.replay('lost'), 'body-lost', /no longer where its record says .*-bodies folder/);
    expectRefused(maskedCopy as Answer, 'copy-redacted', /hooks\.log\.redact paths masked/);
    expectRefused(
      await w.replay('refused-at-the-door'),
      'not-authenticated',
      /\(401 UNAUTHORIZED\) and never authenticated/,
    );
    expectRefused(await w.replay('logged-by-an-older-hookd'), 'no-receipt', /does not say what authenticated it/);
    // Even on purpose: force skips the idempotency key, never these rules.
    expectRefused(await w.replay(idOf(wrongMapping), { force: true }), 'token-required', /takes only the hook token/);

    // Nothing ran and nothing new was logged: a refusal is the admin API's answer, not a request.
    expect(await runsOf(w)).toEqual([]);
    expect((await eventsOf(w)).length).toBe(eventsBefore);
    const replays = (await w.admin('/api/requests?limit=500')).requests as { replayOf?: string }[];
    expect(replays.filter((r) => r.replayOf)).toEqual([]);
    expect((await w.replay('no-such-request')).status).toBe(404);
  });

  it('replays under the credentials that let the request in: a hook token, verify secret or ?token= setting changed since refuses it', async () => {
    const w = await world(store, cleanups);
    const byToken = await w.hook('note', { n: 1 });
    const byQuery = await call(`${w.hookd.url}/hooks/note?token=${HOOK_TOKEN}`, { json: { n: 2 } });
    const byGh = await w.signed('gh', { n: 3 }, SECRETS.gh, 'gh-3');
    const byA = await w.signed('ingest', { source: 'a', n: 4 }, SECRETS.a, 'a-4');
    for (const answer of [byToken, byQuery, byGh, byA]) expect(answer.status).toBe(200);
    for (const answer of [byToken, byQuery, byGh, byA]) await recorded(w, idOf(answer));

    await w.restart({
      hookToken: 'a-new-hook-token-0123456789',
      ghSecret: 'a-new-gh-secret',
      allowQueryToken: false,
    });
    expectRefused(
      await w.replay(idOf(byToken)),
      'token-changed',
      /the hook token that authenticated it is not today's/,
    );
    expectRefused(await w.replay(idOf(byQuery)), 'query-token-disabled', /allowQueryToken: false/);
    expectRefused(await w.replay(idOf(byGh)), 'signature-changed', /mapping gh's verify \(its secret\)/);
    // Sender a's secret did not change: its delivery is replayed (and answers its first answer, its key's).
    const again = await w.replay(idOf(byA));
    expect(again.status).toBe(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(byA.body);
  });

  it('with the log off, replays a kept failure under the receipt kept with it; one kept by an older hookd is refused', async () => {
    const w = await world(store, cleanups, { log: false });
    const failed = await w.hook('flaky', { n: 4 }, { ...HOOK, 'idempotency-key': 'key-4' });
    expect(failed.status).toBe(500);
    // Kept today: a row from 1970 is past the log's retention, and a retention pass (any
    // added row may run one) would delete it before its replay is refused.
    await insertRow(store, w, 'failed_requests', {
      ...{ id: 'f-old', request_id: 'failed-under-an-older-hookd', sub_path: 'flaky', url: '/hooks/flaky' },
      ...{ headers: '{}', body: Buffer.from('{"n":5}'), code: 'TRANSFORM_FAILED', error: 'boom' },
      created_at: Date.now(),
    });
    w.fix();
    const replayed = await until(async () => {
      const answer = await w.replay(idOf(failed));
      return answer.status === 202 ? answer : undefined;
    }, 'the fixed transform');
    expect(replayed.headers['idempotent-replayed']).toBeUndefined();
    // Its key is the sender's: the retry answers the replay's run.
    const retry = await w.hook('flaky', { n: 4 }, { ...HOOK, 'idempotency-key': 'key-4' });
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.body).toEqual(replayed.body);
    expectRefused(await w.replay('failed-under-an-older-hookd'), 'no-receipt', /logged by an older hookd/);
    expect(await runsOf(w)).toHaveLength(1);
  });

  it('replays the request its page shows when a sender reused a request id, never another one’s kept failure', async () => {
    const w = await world(store, cleanups);
    const trace = { ...HOOK, 'x-request-id': 'trace-reused-1' };
    expect((await w.hook('flaky', { n: 1 }, trace)).status).toBe(500);
    expect((await w.hook('ingest', { n: 2 }, trace)).status).toBe(202);
    expect(await w.admin('/api/requests/trace-reused-1')).toMatchObject({ status: 202, mappingId: 'open' });
    const replayed = await w.replay('trace-reused-1');
    expect(replayed.status).toBe(202);
    // The 202's run and its replay's: both of `open 2`, none of the failed transform's body.
    await until(async () => ((await runsOf(w)).length === 2 ? true : undefined), 'the replay’s run');
    await until(async () => (w.model.requests.length === 2 ? true : undefined), 'both runs to call the model');
    expect(w.model.requests.filter((r) => JSON.stringify(r).includes('open 2'))).toHaveLength(2);
  });
});
