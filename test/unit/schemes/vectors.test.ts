import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { verifySignature } from '../../../src/schemes/index.js';

const body = (s: string) => Buffer.from(s);

describe('signature schemes against published example vectors', () => {
  it('github: the docs example (secret "It\'s a Secret to Everybody", body "Hello, World!")', () => {
    const headers = {
      'x-hub-signature-256': 'sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17',
      'x-github-delivery': 'd-1',
    };
    expect(
      verifySignature({ scheme: 'github', secret: "It's a Secret to Everybody" }, headers, body('Hello, World!')),
    ).toEqual({ ok: true, webhookId: 'd-1' });
    expect(
      verifySignature({ scheme: 'github', secret: "It's a Secret to Everybody" }, headers, body('Hello, World?')).ok,
    ).toBe(false);
  });

  it('slack: the docs example, inside and outside the timestamp tolerance', () => {
    const raw = body(
      'token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c',
    );
    const headers = {
      'x-slack-signature': 'v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503',
      'x-slack-request-timestamp': '1531420618',
    };
    const config = { scheme: 'slack' as const, secret: '8f742231b10e8888abcd99yyyzzz85a5' };
    expect(verifySignature(config, headers, raw, 1531420618 + 60)).toEqual({ ok: true });
    expect(verifySignature(config, headers, raw, 1531420618 + 301)).toEqual({
      ok: false,
      reason: 'the timestamp is 301 s old; the tolerance is 300 s',
    });
    expect(verifySignature({ ...config, secret: 'other' }, headers, raw, 1531420618)).toEqual({
      ok: false,
      reason: 'no signature matched (is the secret the same on both sides?)',
    });
    expect(verifySignature(config, { 'x-slack-signature': 'v0=1' }, raw, 1531420618)).toEqual({
      ok: false,
      reason: 'missing X-Slack-Request-Timestamp',
    });
  });

  it('standard-webhooks: the spec example, with several signatures and a whsec_ secret', () => {
    const headers = {
      'webhook-id': 'msg_p5jXN8AQM9LWM0D4loKWxJek',
      'webhook-timestamp': '1614265330',
      'webhook-signature': 'v1,bm9ldHZhbGlkCg== v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
    };
    const config = { scheme: 'standard-webhooks' as const, secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' };
    expect(verifySignature(config, headers, body('{"test": 2432232314}'), 1614265330)).toEqual({
      ok: true,
      webhookId: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
    });
    expect(verifySignature(config, headers, body('{"test": 2432232315}'), 1614265330).ok).toBe(false);
    expect(verifySignature(config, headers, body('{"test": 2432232314}'), 1614265330 + 400).ok).toBe(false);
    // Svix-hosted senders send the same values as svix-* headers.
    const svix = {
      'svix-id': headers['webhook-id'],
      'svix-timestamp': headers['webhook-timestamp'],
      'svix-signature': headers['webhook-signature'],
    };
    expect(verifySignature(config, svix, body('{"test": 2432232314}'), 1614265330)).toEqual({
      ok: true,
      webhookId: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
    });
    expect(verifySignature(config, { 'svix-id': 'x' }, body('{}'), 1614265330)).toEqual({
      ok: false,
      reason: 'missing svix-timestamp, svix-signature',
    });
  });

  it('stripe: t and several v1 values, as Stripe computes them', () => {
    const raw = body('{"id":"evt_123","type":"invoice.paid"}');
    const t = 1700000000;
    const v1 = createHmac('sha256', 'whsec_test').update(`${t}.${raw.toString()}`).digest('hex');
    const config = { scheme: 'stripe' as const, secret: 'whsec_test' };
    expect(verifySignature(config, { 'stripe-signature': `t=${t},v1=deadbeef,v1=${v1},v0=x` }, raw, t + 10)).toEqual({
      ok: true,
      webhookId: 'evt_123',
    });
    expect(verifySignature(config, { 'stripe-signature': `t=${t},v1=${v1}` }, raw, t + 1000).ok).toBe(false);
    expect(verifySignature(config, { 'stripe-signature': 'garbage' }, raw, t)).toEqual({
      ok: false,
      reason: 'Stripe-Signature has no t= or no v1= part',
    });
    expect(verifySignature(config, { 'stripe-signature': `t=${t + 900},v1=${v1}` }, raw, t)).toEqual({
      ok: false,
      reason: 'the timestamp is 900 s in the future; the tolerance is 300 s',
    });
  });

  it('hmac: header, algorithm, encoding and prefix as configured', () => {
    const raw = body('{"a":1}');
    const sig = createHmac('sha512', 's3cret').update(raw).digest('base64');
    const config = {
      scheme: 'hmac' as const,
      secret: 's3cret',
      header: 'X-Custom-Sig',
      algorithm: 'sha512' as const,
      encoding: 'base64' as const,
      prefix: 'sha512=',
    };
    expect(verifySignature(config, { 'x-custom-sig': `sha512=${sig}` }, raw)).toEqual({ ok: true });
    expect(verifySignature(config, { 'x-custom-sig': sig }, raw).ok).toBe(false);
  });

  it('never puts the expected signature in a reason', () => {
    const raw = body('x');
    const expected = createHmac('sha256', 'k').update(raw).digest('hex');
    const result = verifySignature({ scheme: 'github', secret: 'k' }, { 'x-hub-signature-256': 'sha256=00' }, raw);
    expect(JSON.stringify(result)).not.toContain(expected);
  });
});
