// The gateway every bench scenario starts: its bodies, its config and how it is started.
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { startChild, TOKEN } from './lib.js';

export const ROOT = resolve(import.meta.dirname, '..');

export const filler = 'lorem ipsum dolor sit amet '.repeat(70).slice(0, 1850);
export const agentBody = JSON.stringify({
  title: 'Build failed',
  body: filler,
  source: 'ci',
  message: `Build failed: ${filler}`,
  wakeMode: 'next-heartbeat',
  deliver: false,
});
export const mailBody = JSON.stringify({
  source: 'mail',
  account: 'me@example.com',
  historyId: '1',
  messages: Array.from({ length: 10 }, (_, i) => ({
    id: `m${i}`,
    threadId: `t${i}`,
    from: 'a@example.com',
    to: 'me@example.com',
    subject: `Subject ${i}`,
    date: '2026-11-22T09:00:00Z',
    snippet: 'snippet',
    body: filler.slice(0, 400),
    labels: ['INBOX'],
  })),
});

/** Writes the bench's config (a template mapping, `transforms` transform mappings, a spinning one, the mail preset) into `dir`. */
export function hookdConfig(
  dir: string,
  modelPort: number,
  transforms = 1,
  requestLog = true,
  storage: Record<string, unknown> = {},
  refusedRecorded = true,
  isolation: 'inline' | 'process' = 'inline',
) {
  const mappings = [
    {
      id: 'template',
      match: { path: 'template' },
      messageTemplate: '{{title}}: {{body}}',
      wakeMode: 'next-heartbeat',
      deliver: false,
    },
    ...Array.from({ length: transforms }, (_, i) => ({
      id: `transform${i || ''}`,
      match: { path: i === 0 ? 'transform' : `transform${i}` },
      transform: { module: 'agent.ts' },
    })),
    { id: 'spin', match: { path: 'spin' }, transform: { module: 'spin.ts' } },
  ];
  const config = {
    server: { port: 0 },
    hooks: {
      enabled: true,
      token: TOKEN,
      transformsDir: 'transforms',
      presets: ['mail'],
      mappings,
      transforms: { isolation },
      idempotency: {},
      log: { enabled: requestLog, ...(refusedRecorded ? {} : { refusedPerMinute: 0 }) },
    },
    agents: { defaults: { model: 'bench/m', heartbeat: { every: '0' }, maxQueuedRuns: 10_000_000 } },
    models: { providers: { bench: { baseUrl: `http://127.0.0.1:${modelPort}/v1`, api: 'openai-chat' } } },
    storage: { path: join(dir, 'data/hookd.db'), ...storage },
    log: { level: 'info' },
  };
  writeFileSync(join(dir, 'hookd.json5'), JSON.stringify(config));
  return join(dir, 'hookd.json5');
}

/** Starts `hookd serve` on `dir`'s config; answers once it listens, with the time it took. */
export async function startHookd(dir: string) {
  const started = performance.now();
  const { child, port } = await startChild(
    [join(ROOT, 'bin/hookd.js'), 'serve', '--config', join(dir, 'hookd.json5')],
    dir,
  );
  return { child, port, readyMs: performance.now() - started };
}
