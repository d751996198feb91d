import { execFile } from 'node:child_process';
import { chmodSync, copyFileSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import JSON5 from 'json5';
import { afterAll, describe, expect, it } from 'vitest';
import { type HookdProcess, makeTempDir, ROOT, startHookd } from '../helpers/hookd-process.js';

const run = promisify(execFile);

/**
 * Every fenced shell block marked `runnable` in README.md and docs/ runs as written, in a
 * sandbox folder holding the files the docs define (```json5 file=NAME blocks, README's first),
 * the files of docs/examples/ the docs link to, and the variables the docs name, with `hookd`
 * on the PATH (this checkout's bin/hookd.js, as `npm i -g` would put it). A block marked
 * `gateway` (or `gateway=FILE`) runs beside a gateway serving that config (hookd.json5 by
 * default). One substitution only: `127.0.0.1:8787` is the spawned gateway's address.
 */
interface Block {
  readonly doc: string;
  readonly line: number;
  readonly info: string;
  readonly text: string;
}

function blocksOf(doc: string): Block[] {
  const lines = readFileSync(join(ROOT, doc), 'utf8').split('\n');
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\S+)(.*)$/.exec(lines[i] as string);
    if (!open) continue;
    const end = lines.indexOf('```', i + 1);
    blocks.push({
      doc,
      line: i + 1,
      info: `${open[1]}${open[2]}`.trim(),
      text: lines.slice(i + 1, end).join('\n'),
    });
    i = end;
  }
  return blocks;
}

const DOCS = ['README.md', ...readdirSync(join(ROOT, 'docs')).map((f) => `docs/${f}`)].filter((f) => f.endsWith('.md'));
const ALL = DOCS.flatMap(blocksOf);
const fileOf = (b: Block) => /(?:^|\s)file=(\S+)/.exec(b.info)?.[1];
const RUNNABLE = ALL.filter((b) => /^(sh|bash)\s.*\brunnable\b/.test(b.info));

const env = {
  HOOKD_HOOK_TOKEN: 'docs-hook-token-0123456789abcdef',
  GITHUB_WEBHOOK_SECRET: 'docs-github-secret',
  HOOKD_CONFIG: '',
};

const gateways: HookdProcess[] = [];
const cleanups: (() => void)[] = [];
afterAll(async () => {
  for (const g of gateways) await g.stop();
  for (const cleanup of cleanups) cleanup();
});

/** A sandbox with README's files, then the doc's own, and the files of docs/examples/. */
function sandbox(doc: string): string {
  const temp = makeTempDir('hookd-docs-');
  cleanups.push(temp.cleanup);
  for (const b of ALL.filter((b) => fileOf(b) && (b.doc === 'README.md' || b.doc === doc))) {
    writeFileSync(join(temp.dir, fileOf(b) as string), `${b.text}\n`);
  }
  for (const example of readdirSync(EXAMPLES)) copyFileSync(join(EXAMPLES, example), join(temp.dir, example));
  return temp.dir;
}

const EXAMPLES = join(ROOT, 'docs/examples');

/** A folder holding `hookd`: this checkout's CLI, as an installed hookd is called. */
function hookdOnPath(): string {
  const temp = makeTempDir('hookd-docs-bin-');
  cleanups.push(temp.cleanup);
  const bin = join(temp.dir, 'hookd');
  writeFileSync(bin, `#!/bin/sh\nexec "${process.execPath}" --no-node-snapshot "${join(ROOT, 'bin/hookd.js')}" "$@"\n`);
  chmodSync(bin, 0o755);
  return temp.dir;
}
const BIN = hookdOnPath();

/** A gateway serving `config` from the sandbox, on a free port (the docs' own file stays as written). */
async function gatewayFor(dir: string, config: string): Promise<HookdProcess> {
  const parsed = JSON5.parse(readFileSync(join(dir, config), 'utf8')) as { server?: object };
  const served = join(dir, `.served-${config}`);
  writeFileSync(served, JSON.stringify({ ...parsed, server: { ...parsed.server, port: 0 } }));
  const gateway = await startHookd({ dir, args: ['--config', served], env });
  gateways.push(gateway);
  return gateway;
}

describe('how the docs call the CLI', () => {
  it("say hookd …: the clone's `npm run hookd -- …` once, in the development section of README.md", () => {
    const said = DOCS.flatMap((doc) =>
      readFileSync(join(ROOT, doc), 'utf8')
        .split('\n')
        .flatMap((line, i) => (line.includes('npm run hookd') ? [`${doc}:${i + 1}`] : [])),
    );
    expect(said).toHaveLength(1);
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8').split('\n');
    const development = readme.indexOf('## Development');
    expect(Number((said[0] as string).split(':')[1])).toBeGreaterThan(development + 1);
    expect(development).toBeGreaterThan(0);
  });

  it("print hints that say hookd …, never the clone's npm script", () => {
    const files = ['src', 'presets'].flatMap((dir) =>
      readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' }).map((f) => join(dir, f)),
    );
    const saying = files.filter(
      (f) => /\.(ts|md|json5?)$/.test(f) && readFileSync(join(ROOT, f), 'utf8').includes('npm run hookd'),
    );
    expect(saying).toEqual([]);
  });
});

describe('the documented commands', () => {
  it('finds the runnable blocks: every sh block of README.md and docs/ but the npm ones CI runs itself', () => {
    const sh = ALL.filter((b) => /^(sh|bash)\b/.test(b.info));
    const unmarked = sh.filter((b) => !RUNNABLE.includes(b)).map((b) => `${b.doc}:${b.line}`);
    expect(unmarked.every((at) => at.startsWith('README.md'))).toBe(true);
    expect(RUNNABLE.length).toBeGreaterThanOrEqual(6);
  });

  it.each(RUNNABLE.map((b) => [`${b.doc}:${b.line}`, b] as const))('%s runs as written', async (_at, block) => {
    const dir = sandbox(block.doc);
    const wanted = /\bgateway(?:=(\S+))?/.exec(block.info);
    const gateway = wanted ? await gatewayFor(dir, wanted[1] ?? 'hookd.json5') : undefined;
    const script = block.text.replaceAll('http://127.0.0.1:8787', gateway?.url ?? 'http://127.0.0.1:8787');
    const result = await run('bash', ['-euo', 'pipefail', '-c', script], {
      cwd: dir,
      env: {
        ...process.env,
        ...env,
        PATH: `${BIN}:${process.env.PATH}`,
        ...(gateway ? { HOOKD_URL: gateway.url } : {}),
      },
      timeout: 60_000,
    }).catch((err: { code: number; stdout: string; stderr: string }) => err);
    expect('code' in result ? `exit ${result.code}: ${result.stderr}${result.stdout}` : 'exit 0').toBe('exit 0');
  });
});
