import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { Pool } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type HookdProcess, startHookd } from '../helpers/hookd-process.js';

const TOKEN = 'fuzz-hook-token-0123456789abcdef';
const TOTAL = 10_000;

/** A seeded generator, so a failure can be replayed (FUZZ_SEED=n). */
function rng(seed: number) {
  let s = seed >>> 0 || 1;
  const next = () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 4294967296;
  };
  return {
    next,
    int: (n: number) => Math.floor(next() * n),
    pick: <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)] as T,
  };
}

type R = ReturnType<typeof rng>;

const PATHS = [
  '/hooks/wake',
  '/hooks/agent',
  '/hooks/gh',
  '/hooks/mail',
  '/hooks/ingest',
  '/hooks/nothing',
  '/hooks',
  '/hooks/',
  '/hooks/%2e%2e/%2e%2e',
  '/hooks/wake?token=x&token=y',
  '/elsewhere',
  `/hooks/${'a'.repeat(3000)}`,
];
const FIELDS = [
  'text',
  'mode',
  'message',
  'name',
  'sessionKey',
  'wakeMode',
  'deliver',
  'channel',
  'to',
  'model',
  'thinking',
  'timeoutSeconds',
  'source',
  'messages',
  'repository',
];
const CONTENT_TYPES = [
  'application/json',
  'text/plain',
  'application/x-www-form-urlencoded',
  'application/vnd.x+json',
  'application/xml',
  'multipart/form-data',
  '',
  ';;;',
  'application/json; charset=utf-16',
  'text/plain; charset=latin1',
];

function randomValue(r: R, depth = 0): unknown {
  switch (r.int(depth > 3 ? 7 : 10)) {
    case 0:
      return null;
    case 1:
      return r.next() < 0.5;
    case 2:
      return r.pick([0, -1, 1e308, -1e308, 2 ** 53 + 1, 0.1, Number.MIN_VALUE]);
    case 3:
      return r.pick([
        '',
        ' ',
        'now',
        'next-heartbeat',
        'chatnet',
        'last',
        'builtin/echo',
        'nope/x',
        '\u0000',
        '\ud800',
        'x'.repeat(r.int(5000)),
        '{{constructor}}',
        '<<<EXTERNAL_UNTRUSTED_CONTENT>>>',
      ]);
    case 4:
      return String.fromCharCode(...Array.from({ length: r.int(50) }, () => r.int(0xffff)));
    case 5:
      return r.int(1000) - 500;
    case 6:
      return 'ok';
    case 7:
      return Array.from({ length: r.int(5) }, () => randomValue(r, depth + 1));
    default: {
      const o: Record<string, unknown> = {};
      for (let i = r.int(6); i > 0; i--)
        o[r.pick([...FIELDS, '__proto__', 'constructor', 'prototype', 'id', 'from'])] = randomValue(r, depth + 1);
      return o;
    }
  }
}

function nested(depth: number, open: string, close: string, inner = '1'): string {
  return open.repeat(depth) + inner + close.repeat(depth);
}

/** One bad (or odd) request body: mostly malformed, sometimes nearly valid. */
function randomBody(r: R): Buffer | string {
  switch (r.int(12)) {
    case 0:
      return Buffer.from(Array.from({ length: r.int(2000) }, () => r.int(256)));
    case 1:
      return nested(r.pick([100, 1000, 10_000, 100_000]), '[', ']');
    case 2:
      return nested(r.pick([100, 1000, 5000]), '{"a":', '}');
    case 3:
      return JSON.stringify({ text: 'x'.repeat(r.pick([1000, 100_000, 250_000])) });
    case 4:
      return `{"timeoutSeconds": 1e400, "message": "m", "text": ${r.pick(['1e999', '-0', '123456789012345678901234567890'])}}`;
    case 5:
      return Buffer.concat([
        Buffer.from('{"text":"'),
        Buffer.from([0xff, 0xfe, 0xc3, 0x28, 0xe2, 0x82]),
        Buffer.from('"}'),
      ]);
    case 6:
      return '{"__proto__":{"polluted":1},"constructor":{"prototype":{"x":1}},"text":"p","message":"p"}';
    case 7:
      return '{"text":"a","text":"b","message":1,"message":"dup"}';
    case 8:
      return JSON.stringify(randomValue(r));
    case 9:
      return `{"source":"mail","messages":${JSON.stringify(Array.from({ length: r.pick([0, 1, 101, 500]) }, () => randomValue(r)))}}`;
    case 10:
      return r.pick(['', ' ', '{', '}', 'null', '[]', '"', 'text=a&text=b&__proto__=x', '\ufeff{"text":"bom"}']);
    default:
      return JSON.stringify(Object.fromEntries(FIELDS.map((f) => [f, randomValue(r)])));
  }
}

let hookd: HookdProcess;
beforeAll(async () => {
  hookd = await startHookd({
    config: {
      hooks: {
        enabled: true,
        token: TOKEN,
        presets: ['mail'],
        mappings: [
          {
            match: { path: 'gh' },
            name: 'GH {{repository.name}}',
            sessionKey: 'hook:gh:{{repository.name}}',
            messageTemplate: '{{action}} {{repository}} {{constructor}}',
            to: '{{sender}}',
          },
          { match: { path: 'ingest', source: 'ci' }, action: 'wake', textTemplate: '{{build}}', forEach: 'builds' },
        ],
      },
      agents: { defaults: { heartbeat: { every: '0' }, maxConcurrentRuns: 2 } },
      log: { level: 'info' },
    },
  });
});
afterAll(() => hookd?.stop());

describe('fuzzing the hook endpoints over real sockets', () => {
  it(`answers ${TOTAL.toLocaleString('en')} generated bad requests with no 5xx and no crash, in bounded memory`, async () => {
    const seed = Number(process.env.FUZZ_SEED ?? 20261122);
    const r = rng(seed);
    const pool = new Pool(hookd.url, { connections: 16, pipelining: 1 });
    const histogram = new Map<string, number>();
    const fiveXX: string[] = [];
    const rssStart = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${hookd.child.pid}/status`, 'utf8'))?.[1]) / 1024;
    let sent = 0;
    const one = async () => {
      const i = sent++;
      const method =
        r.next() < 0.9 ? 'POST' : r.pick(['GET', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD', 'PROPFIND', 'TRACE']);
      const headers: Record<string, string> = {};
      if (r.next() < 0.85)
        headers.authorization =
          r.next() < 0.95 ? `Bearer ${TOKEN}` : r.pick(['Bearer', 'Basic eA==', `bearer  ${TOKEN}x`, '']);
      const type = r.pick(CONTENT_TYPES);
      if (type) headers['content-type'] = type;
      if (r.next() < 0.1) headers['idempotency-key'] = r.pick(['k1', 'k2', ' ', 'x'.repeat(300)]);
      if (r.next() < 0.05) headers['x-request-id'] = r.pick(['\u00ff', 'x'.repeat(200), '../../']);
      const body = method === 'GET' || method === 'HEAD' ? undefined : randomBody(r);
      try {
        const res = await pool.request({
          path: r.pick(PATHS),
          method,
          headers,
          ...(body === undefined ? {} : { body }),
        });
        await res.body.dump();
        const key = String(res.statusCode);
        histogram.set(key, (histogram.get(key) ?? 0) + 1);
        if (res.statusCode >= 500) fiveXX.push(`#${i} ${method} → ${res.statusCode}`);
      } catch (err) {
        histogram.set(
          `error:${(err as { code?: string }).code ?? 'unknown'}`,
          (histogram.get(`error:${(err as { code?: string }).code}`) ?? 0) + 1,
        );
      }
    };
    const workers = Array.from({ length: 16 }, async () => {
      while (sent < TOTAL - 200) await one();
    });
    await Promise.all(workers);

    // The last 200 are malformed HTTP over raw sockets.
    const { port } = new URL(hookd.url);
    const rawRequests = [
      'POST /hooks/wake HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n{}',
      'POST /hooks/wake HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n0\r\n\r\n',
      'POST /hooks/wake HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n',
      `GET /${'x'.repeat(100_000)} HTTP/1.1\r\nHost: x\r\n\r\n`,
      `POST /hooks/wake HTTP/1.1\r\nHost: x\r\nX-Big: ${'y'.repeat(20_000)}\r\n\r\n`,
      'BREW /hooks/wake HTTP/1.1\r\nHost: x\r\n\r\n',
      '\u0000\u0001\u0002garbage\r\n\r\n',
      'POST /hooks/wake HTTP/9.9\r\n\r\n',
    ];
    for (let i = 0; i < 200; i++, sent++) {
      const payload = rawRequests[i % rawRequests.length] as string;
      const status = await new Promise<string>((resolve) => {
        const socket = connect(Number(port), '127.0.0.1');
        let answer = '';
        socket.on('data', (c) => {
          answer += c.toString();
        });
        socket.on('error', () => resolve(answer.slice(9, 12) || 'reset'));
        socket.on('close', () => resolve(answer.slice(9, 12) || 'closed'));
        socket.setTimeout(2000, () => socket.destroy());
        socket.end(payload);
      });
      histogram.set(`raw:${status}`, (histogram.get(`raw:${status}`) ?? 0) + 1);
      if (status.startsWith('5')) fiveXX.push(`raw #${i} → ${status}`);
    }
    await pool.close();

    const health = await fetch(`${hookd.url}/healthz`);
    expect(health.status).toBe(200);
    expect(hookd.child.exitCode).toBeNull();
    const rssEnd = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${hookd.child.pid}/status`, 'utf8'))?.[1]) / 1024;
    console.log(
      `fuzz: ${sent} requests (seed ${seed}); statuses ${JSON.stringify(Object.fromEntries([...histogram].sort()))}; RSS ${rssStart.toFixed(0)} → ${rssEnd.toFixed(0)} MB`,
    );
    expect(fiveXX).toEqual([]);
    expect(sent).toBeGreaterThanOrEqual(TOTAL);
    expect(rssEnd).toBeLessThan(600);
  }, 120_000);
});
