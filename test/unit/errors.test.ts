import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type ErrorCode, errorBody, errorCatalogue, hasStatus, hookdError, isHookdError } from '../../src/errors.js';

const root = join(import.meta.dirname, '..', '..');
const codes = Object.keys(errorCatalogue) as ErrorCode[];

/** The `| \`CODE\` | status | when |` rows of docs/errors.md: code → status (undefined for —). */
function documented(): Map<string, number | undefined> {
  const rows = new Map<string, number | undefined>();
  const text = readFileSync(join(root, 'docs', 'errors.md'), 'utf8');
  for (const match of text.matchAll(/^\| `([A-Z_]+)` \| (\d{3}|—) \|/gm)) {
    rows.set(match[1] as string, match[2] === '—' ? undefined : Number(match[2]));
  }
  return rows;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? sourceFiles(join(dir, entry.name))
      : entry.name.endsWith('.ts')
        ? [join(dir, entry.name)]
        : [],
  );
}

describe('the error catalogue', () => {
  it('documents every code in docs/errors.md with its status, and nothing else', () => {
    const docs = documented();
    for (const code of codes) {
      expect(docs.has(code), `${code} is missing from docs/errors.md`).toBe(true);
      expect(docs.get(code), `${code}: status in docs/errors.md`).toBe(
        (errorCatalogue[code] as { status?: number }).status,
      );
    }
    for (const code of docs.keys()) expect(codes, `docs/errors.md lists ${code}`).toContain(code);
  });

  it('has every code raised somewhere in src/', () => {
    const sources = sourceFiles(join(root, 'src'))
      .filter((file) => !file.endsWith(join('src', 'errors.ts')))
      .map((file) => readFileSync(file, 'utf8'))
      .join('\n');
    const unused = codes.filter((code) => !sources.includes(`'${code}'`));
    expect(unused).toEqual([]);
  });

  it('is the only place in src/ that makes an error: every error a user can see carries a code', () => {
    const uncatalogued = sourceFiles(join(root, 'src'))
      .filter((file) => !file.endsWith(join('src', 'errors.ts')))
      .flatMap((file) =>
        readFileSync(file, 'utf8')
          .split('\n')
          .flatMap((line, i) =>
            /\bnew [A-Za-z]*Error\(|\bthrow Error\(/.test(line) ? [`${file.slice(root.length + 1)}:${i + 1}`] : [],
          ),
      );
    expect(uncatalogued).toEqual([]);
  });

  it('builds each message from its template and values', () => {
    expect(hookdError('PAYLOAD_TOO_LARGE', { limitBytes: 1024 }).message).toBe(
      'payload too large: the limit is 1024 bytes',
    );
    expect(hookdError('PAYLOAD_TOO_LARGE', {}).message).toBe('payload too large');
    expect(hookdError('INVALID_FIELD', { field: 'mode', expected: 'one of now, next-heartbeat' }).message).toBe(
      'mode: expected one of now, next-heartbeat',
    );
    expect(hookdError('NOT_FOUND', { resource: 'run', id: 'r1' }).message).toBe('no run r1');
    expect(hookdError('NOT_FOUND').message).toBe('not found');
    const config = hookdError('CONFIG_INVALID', { problems: ['a: required', 'b: unknown key'], file: '/x.json5' });
    expect(config.message).toBe('/x.json5: invalid configuration:\n  - a: required\n  - b: unknown key');
    expect(config.params.problems).toEqual(['a: required', 'b: unknown key']);
  });

  it('matches on code, never on message text', () => {
    const err = hookdError('QUEUE_FULL', undefined, { headers: { 'retry-after': '30' } });
    expect(isHookdError(err)).toBe(true);
    expect(isHookdError(err, 'QUEUE_FULL', 'INTERNAL')).toBe(true);
    expect(isHookdError(err, 'INTERNAL')).toBe(false);
    expect(isHookdError(new Error('QUEUE_FULL'))).toBe(false);
    expect(err.statusCode).toBe(503);
    expect(err.headers).toEqual({ 'retry-after': '30' });
  });

  it('shows 4xx messages and exposed 5xx messages, and hides the rest', () => {
    expect(errorBody(hookdError('TEXT_REQUIRED'))).toEqual({
      ok: false,
      error: 'text required',
      code: 'TEXT_REQUIRED',
    });
    expect(errorBody(hookdError('TRANSFORM_FAILED', { reason: 'boom' })).error).toBe('transform failed: boom');
    expect(errorBody(hookdError('INTERNAL', undefined, { cause: new Error('/secret/path') })).error).toBe(
      'internal error',
    );
    expect(errorBody(hookdError('MODEL_REFUSED', { status: 401, excerpt: 'bad key sk-123' })).error).toBe(
      'internal error',
    );
  });

  it('gives a status only to the errors that answer requests', () => {
    expect(hasStatus('UNAUTHORIZED')).toBe(true);
    expect(hasStatus('CONFIG_INVALID')).toBe(false);
    expect(hookdError('CONFIG_INVALID', { problems: [] }).statusCode).toBe(500);
  });
});
