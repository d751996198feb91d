import { type FakeService, startFakeService, startFakeSmtp } from './fake-service.js';

/**
 * Each channel kind against a fake of its real service on port 0 (docs/channels.md), as the
 * channel contract suite (contract.test.ts) drives it: the service's own success, refusal, 429
 * with its retry hint and server error.
 */
export interface ChannelSubject {
  /** Its `channels.<id>` entry. */
  readonly entry: Record<string, unknown>;
  readonly to: string;
  /** The texts the service took, as it took them. */
  received(): string[];
  /** The whole JSON bodies, for a kind that sends more than the text. */
  payloads?(): Record<string, unknown>[];
  /** `Deploy **done**: see \`log\``, in the service's own format. */
  readonly formatted: string;
  /** Scripts the next try's refusal, in the service's own words (which quote a credential). */
  refuse(): void;
  readonly refusalWords: string;
  /** Scripts a 429 (or its kind of "try later") with a hint of `seconds`. */
  throttle(seconds: number): void;
  /** True when the service's throttling says how long to wait. */
  readonly retryHint: boolean;
  /** Scripts a server error. */
  fail(): void;
  /** Its entry with the service gone (a closed port). */
  readonly unreachable: Record<string, unknown>;
  /** Its longest message, when it splits. */
  readonly maxChars?: number;
  readonly secrets: readonly string[];
  close(): Promise<void>;
}

const json = (r: { body: string }) => JSON.parse(r.body) as Record<string, unknown>;
const GONE = 'http://127.0.0.1:1';
const INPUT_FORMATTED = 'Deploy **done**: see `log`';

/** A Bot API service (chatnet, telegram). */
async function botApi(kind: string, formatted: string): Promise<ChannelSubject> {
  const token = `${kind}-bot-secret-0123`;
  const fake = await startFakeService(() => ({ status: 200, body: { ok: true, result: { message_id: 1 } } }));
  return {
    entry: { kind, apiBase: fake.url, botToken: token },
    to: '42',
    received: () => fake.requests.map((r) => json(r).text as string),
    formatted,
    refuse: () =>
      fake.answerNext({ status: 400, body: { ok: false, description: `Bad Request: chat not found (/bot${token})` } }),
    refusalWords: 'Bad Request: chat not found',
    throttle: (seconds) =>
      fake.answerNext({
        status: 429,
        body: { ok: false, description: 'Too Many Requests', parameters: { retry_after: seconds } },
      }),
    retryHint: true,
    fail: () => fake.answerNext({ status: 502, body: { ok: false, description: 'Bad Gateway' } }),
    unreachable: { kind, apiBase: GONE, botToken: token },
    maxChars: 4096,
    secrets: [token],
    close: () => fake.close(),
  };
}

/** Slack's Web API, or an incoming webhook. */
async function slack(mode: 'bot' | 'webhook'): Promise<ChannelSubject> {
  const token = 'xoxb-slack-secret-0123';
  const fake: FakeService = await startFakeService(() =>
    mode === 'bot' ? { status: 200, body: { ok: true, ts: '1.2' } } : { status: 200, body: 'ok' },
  );
  const hook = '/services/T000/B000/slack-hook-secret-0123';
  const entry =
    mode === 'bot'
      ? { kind: 'slack', botToken: token, apiBase: fake.url }
      : { kind: 'slack', webhookUrl: `${fake.url}${hook}` };
  return {
    entry,
    to: mode === 'bot' ? 'C0123' : '',
    received: () => fake.requests.map((r) => json(r).text as string),
    formatted: 'Deploy *done*: see `log`',
    refuse: () =>
      fake.answerNext(
        mode === 'bot'
          ? { status: 200, body: { ok: false, error: 'channel_not_found' } }
          : { status: 404, body: 'no_service' },
      ),
    refusalWords: mode === 'bot' ? 'channel_not_found' : 'no_service',
    throttle: (seconds) =>
      fake.answerNext({
        status: 429,
        headers: { 'retry-after': String(seconds) },
        body: { ok: false, error: 'ratelimited' },
      }),
    retryHint: true,
    fail: () => fake.answerNext({ status: 503, body: `upstream failed for ${mode === 'bot' ? token : hook}` }),
    unreachable: mode === 'bot' ? { ...entry, apiBase: GONE } : { kind: 'slack', webhookUrl: `${GONE}${hook}` },
    maxChars: 4000,
    secrets: mode === 'bot' ? [token] : [hook, 'slack-hook-secret-0123'],
    close: () => fake.close(),
  };
}

async function discord(): Promise<ChannelSubject> {
  const path = '/api/webhooks/1234/discord-secret-token-0123';
  const fake = await startFakeService(() => ({ status: 200, body: { id: '1', content: '' } }));
  return {
    entry: { kind: 'discord', webhookUrl: `${fake.url}${path}` },
    to: '',
    received: () => fake.requests.map((r) => json(r).content as string),
    formatted: INPUT_FORMATTED,
    refuse: () => fake.answerNext({ status: 404, body: { message: `Unknown Webhook ${path}`, code: 10015 } }),
    refusalWords: 'Unknown Webhook',
    throttle: (seconds) =>
      fake.answerNext({
        status: 429,
        body: { message: 'You are being rate limited.', retry_after: seconds, global: false },
      }),
    retryHint: true,
    fail: () => fake.answerNext({ status: 502, body: 'Bad Gateway' }),
    unreachable: { kind: 'discord', webhookUrl: `${GONE}${path}` },
    maxChars: 2000,
    secrets: ['discord-secret-token-0123'],
    close: () => fake.close(),
  };
}

async function email(): Promise<ChannelSubject> {
  const password = 'smtp-secret-password-0123';
  const smtp = await startFakeSmtp({ user: 'hookd', password });
  const entry = {
    kind: 'email',
    host: '127.0.0.1',
    port: smtp.port,
    secure: false,
    user: 'hookd',
    password,
    // The fake server offers no STARTTLS.
    allowInsecureLogin: true,
    from: 'hookd@example.test',
  };
  return {
    entry,
    to: 'ops@example.test',
    received: () => smtp.mails.map((m) => m.text),
    formatted: INPUT_FORMATTED,
    refuse: () => smtp.refuseNext({ code: 550, text: `5.1.1 Recipient address rejected (${password})` }),
    refusalWords: 'Recipient address rejected',
    throttle: () => smtp.refuseNext({ code: 421, text: '4.7.0 Too many connections, try again later' }),
    retryHint: false,
    fail: () => smtp.refuseNext({ code: 451, text: '4.3.0 Local error in processing' }),
    unreachable: { ...entry, port: 1 },
    secrets: [password],
    close: () => smtp.close(),
  };
}

async function webhook(): Promise<ChannelSubject> {
  const secret = `whsec_${Buffer.from('webhook-secret-bytes-0123').toString('base64')}`;
  const fake = await startFakeService(() => ({ status: 204 }));
  const entry = {
    kind: 'webhook',
    url: `${fake.url}/in`,
    secret,
    headers: { authorization: 'Bearer receiver-secret-0123' },
  };
  return {
    entry,
    to: 'ops',
    received: () => fake.requests.map((r) => json(r).text as string),
    payloads: () => fake.requests.map(json),
    formatted: INPUT_FORMATTED,
    refuse: () => fake.answerNext({ status: 400, body: 'unknown event (Bearer receiver-secret-0123)' }),
    refusalWords: 'unknown event',
    throttle: (seconds) =>
      fake.answerNext({ status: 429, headers: { 'retry-after': String(seconds) }, body: 'slow down' }),
    retryHint: true,
    fail: () => fake.answerNext({ status: 503, body: 'receiver down' }),
    unreachable: { ...entry, url: `${GONE}/in` },
    secrets: [secret, 'receiver-secret-0123'],
    close: () => fake.close(),
  };
}

/** Every kind of the registry, each against its service (a kind missing here fails the suite). */
export const SUBJECTS: Readonly<Record<string, () => Promise<ChannelSubject>>> = {
  chatnet: () => botApi('chatnet', INPUT_FORMATTED),
  telegram: () => botApi('telegram', 'Deploy <b>done</b>: see <code>log</code>'),
  'slack (chat.postMessage)': () => slack('bot'),
  'slack (incoming webhook)': () => slack('webhook'),
  discord,
  email,
  webhook,
};

export const INPUT = INPUT_FORMATTED;
