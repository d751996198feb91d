import { describe, expect, it } from 'vitest';
import { boundDraft, MAX_TEXT_CHARS, type MaskedRequest, transformContext } from '../../../src/mapping/drafts.js';
import { engine, request } from '../../helpers/mapping.js';

const masked = (payload: unknown, extra: Partial<MaskedRequest> = {}): MaskedRequest => ({
  ...request('hook', payload),
  headers: { 'x-event': 'push' },
  ...extra,
});

describe('transformContext', () => {
  it('tells the sandbox it may parse the raw body only when the payload is the whole body', () => {
    const payload = { items: [{ n: 1 }] };
    const req = masked(payload, { payloadIsJsonOfRawBody: true, query: { a: 'b' } });
    expect(transformContext(req, payload, undefined)).toEqual({
      payload,
      headers: { 'x-event': 'push' },
      query: { a: 'b' },
      path: 'hook',
      url: '/hooks/hook',
      rawBody: JSON.stringify(payload),
      payloadIsJsonOfRawBody: true,
    });
    // A fan-out's item is not the body's JSON: the sandbox must receive it.
    expect(transformContext(req, payload.items[0], undefined)).not.toHaveProperty('payloadIsJsonOfRawBody');
  });

  it("gives a preset's transform the options of its entry, and a user's transform none", () => {
    const req = masked({});
    expect(transformContext(req, {}, { label: 'ci' }).options).toEqual({ label: 'ci' });
    expect(transformContext(req, {}, undefined)).not.toHaveProperty('options');
  });
});

describe('boundDraft', () => {
  it("fails a plugin's transform that asks for a run longer than the operator allows", () => {
    const plugin = { maxTimeoutSeconds: 300, transform: { module: 'p.ts' } };
    expect(boundDraft({ kind: 'agent', message: 'm', timeoutSeconds: 300 }, plugin)).toMatchObject({
      timeoutSeconds: 300,
    });
    expect(() => boundDraft({ kind: 'agent', message: 'm', timeoutSeconds: 301 }, plugin)).toThrow(
      expect.objectContaining({
        code: 'TRANSFORM_FAILED',
        message: expect.stringMatching(/its timeoutSeconds is 301; a plugin's runs may last at most 300/),
      }),
    );
  });

  it('cuts a rendered text over the limit to exactly the limit, and fails a transform that returns one', () => {
    const long = 'x'.repeat(MAX_TEXT_CHARS + 10);
    const cut = boundDraft({ kind: 'wake', text: long }, {});
    expect(cut.text).toHaveLength(MAX_TEXT_CHARS);
    expect(cut.text).toMatch(/\n… \[cut by hookd: 10 more characters\]$/);
    expect(() => boundDraft({ kind: 'agent', message: long }, { transform: { module: 't.ts' } })).toThrow(
      expect.objectContaining({ code: 'TRANSFORM_FAILED' }),
    );
    const short = { kind: 'wake' as const, text: 'x'.repeat(MAX_TEXT_CHARS) };
    expect(boundDraft(short, { transform: { module: 't.ts' } })).toBe(short);
  });
});

describe('the engine around the drafts', () => {
  const e = engine({
    mappings: [
      {
        id: 'signed',
        match: { path: 'gh' },
        verify: { scheme: 'github', secret: 's'.repeat(20) },
        messageTemplate: 'a',
      },
      { id: 'plain', match: { path: 'gh' }, messageTemplate: 'b' },
      { id: 'signed-anywhere', verify: { scheme: 'hmac', secret: 's'.repeat(20) }, messageTemplate: 'c' },
    ],
  });

  it('lists as verifiers only the mappings with a signature that may take the sub-path', () => {
    expect(e.verifiersFor('gh').map((m) => m.id)).toEqual(['signed', 'signed-anywhere']);
    expect(e.verifiersFor('other').map((m) => m.id)).toEqual(['signed-anywhere']);
  });

  it('refuses a signed request that resolves to a mapping its signature did not verify', async () => {
    const verified = request('gh', {}, { verifiedMappings: new Set(['signed-anywhere']) });
    await expect(e.route(verified)).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
    const own = request('gh', {}, { verifiedMappings: new Set(['signed']) });
    await expect(e.route(own)).resolves.toMatchObject({ kind: 'actions', mappingId: 'signed' });
  });

  it("masks the mappings' signature headers from templates", async () => {
    const shown = engine({
      mappings: [
        {
          verify: { scheme: 'github', secret: 's'.repeat(20) },
          messageTemplate: 'sig=[{{headers.x-hub-signature-256}}] event={{headers.x-github-event}}',
        },
      ],
    });
    const headers = { 'x-hub-signature-256': 'sha256=abc', 'x-github-event': 'push' };
    const outcome = await shown.route(request('any', {}, { headers }));
    expect(outcome).toMatchObject({ kind: 'actions', actions: [{ message: 'sig=[] event=push' }] });
  });
});
