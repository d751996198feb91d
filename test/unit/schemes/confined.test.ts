import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type SignatureScheme, signatureSchemes, verifySchema } from '../../../src/schemes/index.js';

/**
 * What hookd knows of a signature scheme lives in its module (docs/presets.md#adding-a-signature-scheme):
 * the rest of src/ asks the registry and never names a scheme or one of its headers, and the
 * docs have one row per registered scheme.
 */
const root = join(import.meta.dirname, '..', '..', '..');
const src = join(root, 'src');
const pathOf = (file: string) => relative(root, file).split(sep).join('/');

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? filesUnder(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
  );
}

/**
 * The shipped migrations keep the masked header names of their day as SQL: append only, they
 * are history, not knowledge of today's schemes.
 */
const FROZEN = ['src/store/sqlite/migrations.ts', 'src/store/postgres/schema.ts'];

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Where `text` names a scheme as a string literal (`'stripe'`, `"stripe"`; a comment's `stripe` is prose). */
const namesScheme = (text: string, name: string) => new RegExp(`(['"])${escapeRegExp(name)}\\1`).test(text);

/** Where `text` mentions a header, in any case. */
const mentionsHeader = (text: string, header: string) => text.toLowerCase().includes(header);

/** The places in src/ that name `scheme` or one of its headers outside its module. */
function leaks(files: readonly { path: string; text: string }[], scheme: SignatureScheme): string[] {
  const own = `src/schemes/${scheme.name}.ts`;
  const headers = [...new Set([...scheme.headers, ...scheme.masks.headers])];
  return files.flatMap(({ path, text }) => {
    if (path === own) return [];
    const name = namesScheme(text, scheme.name) ? [`${path}: names the ${scheme.name} scheme`] : [];
    const inSchemes = path.startsWith('src/schemes/') || FROZEN.includes(path);
    const named = inSchemes ? [] : headers.filter((header) => mentionsHeader(text, header));
    return [...name, ...named.map((header) => `${path}: names ${header} (of the ${scheme.name} scheme)`)];
  });
}

const SOURCES = filesUnder(src).map((file) => ({ path: pathOf(file), text: readFileSync(file, 'utf8') }));

describe('signature schemes are confined to their modules', () => {
  it('lives each in src/schemes/<its name>.ts', () => {
    const modules = new Set(SOURCES.map(({ path }) => path));
    expect(signatureSchemes.filter((s) => !modules.has(`src/schemes/${s.name}.ts`)).map((s) => s.name)).toEqual([]);
  });

  it('names no scheme and none of its headers anywhere else in src/', () => {
    expect(signatureSchemes.flatMap((scheme) => leaks(SOURCES, scheme))).toEqual([]);
  });

  it('builds the config schema of verify from the registered schemes', () => {
    expect(verifySchema.properties.scheme.enum).toEqual(signatureSchemes.map((s) => s.name));
    const keys = signatureSchemes.flatMap((s) => Object.keys(s.configSchema));
    expect(Object.keys(verifySchema.properties).sort()).toEqual([...new Set(['scheme', 'secret', ...keys])].sort());
  });

  it('would catch a switch on a scheme name and a header list outside the module', () => {
    const stripe = signatureSchemes.find((s) => s.name === 'stripe') as SignatureScheme;
    const files = [
      { path: 'src/ingress/x.ts', text: "switch (config.scheme) {\n  case 'stripe':" },
      { path: 'src/log.ts', text: 'const paths = [\'headers["Stripe-Signature"]\'];' },
      { path: 'src/schemes/registry.ts', text: 'byName.get("stripe")' },
      { path: 'src/mapping/x.ts', text: 'a stripe preset, stripes and the `stripe-ish` name' },
      { path: 'src/schemes/stripe.ts', text: "name: 'stripe', headers: ['stripe-signature']" },
    ];
    expect(leaks(files, stripe)).toEqual([
      'src/ingress/x.ts: names the stripe scheme',
      'src/log.ts: names stripe-signature (of the stripe scheme)',
      'src/schemes/registry.ts: names the stripe scheme',
    ]);
  });
});

describe('the table of provider signatures (docs/security.md#provider-signatures)', () => {
  const security = readFileSync(join(root, 'docs', 'security.md'), 'utf8');
  const section = security.slice(security.indexOf('## Provider signatures'), security.indexOf('## Session keys'));
  const rows = [...section.matchAll(/^\| `([a-z0-9-]+)` \|(.*)\|$/gm)]
    .filter((m) => m[1] !== 'scheme')
    .map((m) => ({
      name: m[1] as string,
      masks: ((m[2] as string).split('|').at(-1) as string).toLowerCase(),
    }));

  it('has one row per registered scheme, in the order of the registry', () => {
    expect(rows.map((row) => row.name)).toEqual(signatureSchemes.map((s) => s.name));
  });

  it("names in each row's Masks column the headers its scheme masks", () => {
    const covered = (cell: string, header: string) =>
      cell.includes(`\`${header}\``) ||
      [...cell.matchAll(/`([a-z0-9-]+)\*`/g)].some((m) => header.startsWith(m[1] as string));
    const missing = signatureSchemes.flatMap((scheme) => {
      const cell = rows.find((row) => row.name === scheme.name)?.masks ?? '';
      return scheme.masks.headers.filter((header) => !covered(cell, header)).map((h) => `${scheme.name}: ${h}`);
    });
    expect(missing).toEqual([]);
  });
});
