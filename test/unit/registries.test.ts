import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CHANNEL_KINDS } from '../../src/channels/index.js';
import { PROVIDER_APIS } from '../../src/providers/index.js';

/**
 * A channel kind and a provider API are each one module, registered by name (docs/channels.md#adding-a-kind,
 * docs/runtime.md#adding-a-provider-api): nothing outside its module and its registry names one.
 */

const root = join(import.meta.dirname, '..', '..');
const src = join(root, 'src');
const filesUnder = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? filesUnder(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
  );
const sources = filesUnder(src).map((file) => ({ path: relative(root, file), text: readFileSync(file, 'utf8') }));

/**
 * Kind names that are words of hookd's own elsewhere, and the files where they mean that: the
 * content sources `webhook` and `email` (the safety wrapper's Source line), the signature schemes
 * `slack` and `webhook` (Standard Webhooks). A quoted name anywhere else is a kind named outside
 * its module.
 */
const OTHER_MEANINGS: Readonly<Record<string, readonly string[]>> = {
  webhook: [
    'src/action-shape.ts',
    'src/actions/validate.ts',
    'src/mapping/compile.ts',
    'src/runtime/safety/wrapper.ts',
    'src/runtime/heartbeat/heartbeat-turn.ts',
    'src/store/postgres/schema.ts',
    'src/store/sqlite/migrations.ts',
    'src/schemes/standard-webhooks.ts',
  ],
  email: ['src/action-shape.ts'],
  slack: ['src/schemes/slack.ts'],
};

const escaped = (name: string) => name.replace(/[-/\\^$*+?.()|[\]{}]/g, '\\$&');
/** The name as a string literal. */
const quoted = (name: string) => new RegExp(`['"\`]${escaped(name)}['"\`]`);
/** The name anywhere (identifiers and comments too), for names that are no other word of hookd's. */
const anywhere = (name: string) => new RegExp(escaped(name), 'i');

/** The files that name `name` although they are not `allowed`. */
function naming(name: string, allowed: readonly string[]): string[] {
  const pattern = name in OTHER_MEANINGS ? quoted(name) : anywhere(name);
  const elsewhere = OTHER_MEANINGS[name] ?? [];
  return sources
    .filter(({ path }) => !allowed.includes(path) && !elsewhere.includes(path))
    .filter(({ text }) => pattern.test(text))
    .map(({ path }) => path);
}

describe('the registries', () => {
  it.each(Object.keys(CHANNEL_KINDS))('name the channel kind %s only in its module and the registry', (kind) => {
    // The folders' indexes re-export a module's own factory, for that module's tests.
    const allowed = [`src/channels/${kind}.ts`, 'src/channels/registry.ts', 'src/channels/index.ts'];
    expect(naming(kind, allowed)).toEqual([]);
  });

  it.each(Object.keys(PROVIDER_APIS))('name the provider API %s only in its module and the registry', (api) => {
    const allowed = [`src/providers/${api}.ts`, 'src/providers/registry.ts', 'src/providers/index.ts'];
    expect(naming(api, allowed)).toEqual([]);
  });

  it('would catch a kind named in a delivery or a config check', () => {
    expect(quoted('slack').test("if (kind === 'slack') return 4000;")).toBe(true);
    expect(quoted('webhook').test('webhookUrl: string')).toBe(false);
    expect(anywhere('chatnet').test('const chatnetDefaultTo = 1;')).toBe(true);
  });
});
