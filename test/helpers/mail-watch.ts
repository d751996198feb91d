// What the mail watch e2e files share: a Dovecot per test, the gateway's mail config, a hook
// receiver, and `hookd mail watch` as its own process.
import { existsSync } from 'node:fs';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach } from 'vitest';
import { type Dovecot, startDovecot } from './dovecot.js';
import { type HookdProcess, startHookd } from './hookd-process.js';

/** What a test leaves to stop or remove, undone after it, newest first. */
export const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

export const TOKEN = 'mail-hook-token-0123456789abcdef';
export const GATEWAY = 'mail-gateway-token-0123456789abcdef';

export async function dovecot(): Promise<Dovecot> {
  const server = await startDovecot();
  cleanups.push(() => server.stop());
  return server;
}

export function mailConfig(
  imap: Dovecot,
  extra: { modelUrl?: string; hookUrl?: string; port?: number; watch?: object } = {},
) {
  return {
    gateway: { auth: { token: GATEWAY } },
    server: { port: extra.port ?? 0 },
    hooks: {
      enabled: true,
      token: TOKEN,
      presets: ['mail'],
      mail: {
        account: 'me@example.com',
        watch: {
          imap: {
            host: '127.0.0.1',
            port: imap.port,
            secure: false,
            user: imap.user,
            password: '${TEST_IMAP_PASSWORD}',
          },
          pollIntervalSeconds: 1,
          ...(extra.hookUrl ? { hookUrl: extra.hookUrl } : {}),
          ...extra.watch,
        },
      },
    },
    agents: { defaults: { model: 'fake/m', heartbeat: { every: '0' } } },
    models: { providers: { fake: { baseUrl: extra.modelUrl ?? 'http://127.0.0.1:9/v1', api: 'openai-chat' } } },
  };
}

/** A hook receiver that records every batch it accepts; `failFirst` answers 500 that many times first. */
export async function receiver(failFirst = 0) {
  const accepted: {
    key: string;
    body: { messages: { id: string; subject: string; body: string; bodyTruncated: boolean }[] };
  }[] = [];
  let refused = 0;
  const server = createServer((req: IncomingMessage, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => {
      raw += c.toString();
    });
    req.on('end', () => {
      if (req.headers.authorization !== `Bearer ${TOKEN}`) return res.writeHead(401).end();
      if (refused < failFirst) {
        refused++;
        return res.writeHead(500).end('{"ok":false}');
      }
      const key = String(req.headers['idempotency-key']);
      if (!accepted.some((a) => a.key === key)) accepted.push({ key, body: JSON.parse(raw) });
      res.writeHead(202, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/mail`,
    accepted,
    refusedCount: () => refused,
    ids: () => accepted.flatMap((a) => a.body.messages.map((m) => m.id)),
  };
}

export const env = { TEST_IMAP_PASSWORD: 'imap-secret-pass' };

/** `hookd mail watch` in its own process, ready once it has connected to the mailbox. */
export function watchProcess(dir: string, config: Record<string, unknown>): Promise<HookdProcess> {
  return startHookd({ dir, config, env, command: ['mail', 'watch'], readyPattern: /mail watch connected/ });
}

// Dovecot comes from Debian's dovecot-imapd, which .ci/run installs. On a machine without it
// these tests are skipped (and say so), except under CI, where a missing Dovecot fails them.
const hasDovecot = existsSync('/usr/sbin/dovecot');
if (!hasDovecot && !process.env.CI)
  console.warn('mail tests skipped: /usr/sbin/dovecot is not installed (apt-get install dovecot-imapd)');
/** Whether the mail e2e files run here. */
export const mailTestsRun = hasDovecot || Boolean(process.env.CI);
