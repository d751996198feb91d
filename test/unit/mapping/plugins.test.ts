import { execFileSync } from 'node:child_process';
import { mkdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createModelCatalog } from '../../../src/actions/index.js';
import { loadConfig } from '../../../src/config/index.js';
import { collectMappings, createMappingEngine } from '../../../src/mapping/index.js';
import { createTransformHost } from '../../../src/transforms/index.js';
import { makeTempDir } from '../../helpers/hookd-process.js';
import { request } from '../../helpers/mapping.js';

/**
 * A plugin is data from someone else (docs/presets.md#what-a-plugin-can-and-cannot-do): each rule it is held to, one trick at a time, through the loader and compiler `check`
 * and `serve` use.
 */

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const fn of cleanups.splice(0)) fn();
});

const TOKEN = 'operator-hook-token-0123456789';

/** A folder with the plugin `p` (its manifest's mappings, and files beside it), and a config enabling it. */
function setup(mappings: unknown[], options: { files?: Record<string, string>; manifest?: object } = {}) {
  const temp = makeTempDir();
  cleanups.push(temp.cleanup);
  const dir = join(temp.dir, 'p');
  mkdirSync(join(dir, 'fixtures'), { recursive: true });
  const manifest = { name: 'p', description: 'a test plugin', version: '1.0.0', mappings, ...options.manifest };
  writeFileSync(join(dir, 'preset.json5'), JSON.stringify(manifest, null, 2));
  for (const [file, text] of Object.entries(options.files ?? {})) writeFileSync(join(dir, file), text);
  return { root: temp.dir, dir };
}

/** Compiles a config over `root` as `check` does: the mappings that compiled, and every problem. */
function compile(root: string, hooks: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) {
  const config = loadConfig({
    data: { hooks: { enabled: true, token: TOKEN, plugins: ['./p'], presets: ['p'], ...hooks }, ...extra },
    baseDir: root,
    env: {},
  });
  return collectMappings(config, createModelCatalog(config));
}

const template = { messageTemplate: 'hi {{text}}' };

describe('a plugin is held to the schema of your mappings', () => {
  it('refuses an unknown key or a wrong type in its mapping, at its file, line and column', () => {
    const { root } = setup([{ ...template, runAsRoot: true, maxBodyBytes: 'lots' }]);
    const { problems } = compile(root);
    expect(problems).toContainEqual(
      expect.stringMatching(
        /^hooks\.plugins\[0\]: \/.*\/p\/preset\.json5:\d+:\d+: plugin "\.\/p": mappings\[0\]\.runAsRoot: unknown key$/,
      ),
    );
    expect(problems).toContainEqual(
      expect.stringMatching(/plugin "\.\/p": mappings\[0\]\.maxBodyBytes: expected integer/),
    );
    // The entry enabling it is not called unknown on top.
    expect(problems.join('\n')).not.toContain('unknown preset');
  });

  it('refuses a mapping that verifies signatures itself (the secret is always yours)', () => {
    const { root } = setup([{ ...template, verify: { scheme: 'hmac', secret: 'the-public-secret' } }]);
    expect(compile(root).problems).toContainEqual(
      expect.stringMatching(
        /plugin "\.\/p": mappings\[0\]\.verify: a preset's mapping does not verify signatures itself/,
      ),
    );
  });
});

describe("a plugin's signature secret is a secret", () => {
  const verifying = (secretOption: string, properties: Record<string, unknown> = {}) =>
    setup([template], {
      manifest: { verify: { scheme: 'gitlab', secretOption }, options: { type: 'object', properties } },
    });

  it("refuses a secretOption naming the entry's own keys, whose values are public (name: evil opened it)", () => {
    for (const key of ['name', 'path', 'sessionKey']) {
      const { root } = verifying(key, { [key]: { type: 'string', secret: true } });
      expect(compile(root, { presets: [{ name: 'p', path: 'p', sessionKey: 'hook:p:x' }] }).problems).toEqual([
        expect.stringMatching(
          new RegExp(
            `^hooks\\.plugins\\[0\\]: /.*/p/preset\\.json5:\\d+:\\d+: plugin "\\./p": verify\\.secretOption: "${key}" is a key of the operator's entry, not a secret`,
          ),
        ),
      ]);
    }
  });

  it('refuses an option the manifest does not mark secret: true, or does not declare', () => {
    for (const properties of [{ token: { type: 'string' } }, {}]) {
      const { root } = verifying('token', properties);
      expect(compile(root, { presets: [{ name: 'p', token: 's3cret' }] }).problems).toContainEqual(
        expect.stringMatching(
          /plugin "\.\/p": verify\.secretOption: "token" is not an option the manifest declares as a secret; name "secret", or mark the option secret: true/,
        ),
      );
    }
  });

  it('takes an option marked secret: true, verifies with it, and never gives it to the transform', () => {
    const { root } = verifying('token', { token: { type: 'string', secret: true }, team: { type: 'string' } });
    const { compiled, problems } = compile(root, { presets: [{ name: 'p', token: 's3cret', team: 'a' }] });
    expect(problems).toEqual([]);
    expect(compiled[0]?.verify).toEqual({ scheme: 'gitlab', secret: 's3cret' });
    expect({ ...compiled[0]?.presetOptions }).toEqual({ team: 'a' });
    const wrong = compile(root, { presets: [{ name: 'p', token: 5 }] }).problems;
    expect(wrong).toContainEqual('hooks.presets[0].token: expected the gitlab secret, a string that is not empty');
  });

  it("never gives the transform the entry's secret, even as an option the manifest declares as its own", () => {
    // Before: a manifest declaring an option named `secret` (not marked secret: true) was given
    // the operator's signing secret in `context.options`, free to put in a message.
    const { root } = verifying('secret', { secret: { type: 'string' }, team: { type: 'string' } });
    const { compiled, problems } = compile(root, { presets: [{ name: 'p', secret: 's3cret', team: 'a' }] });
    expect(problems).toEqual([]);
    expect(compiled[0]?.verify).toEqual({ scheme: 'gitlab', secret: 's3cret' });
    expect({ ...compiled[0]?.presetOptions }).toEqual({ team: 'a' });
  });
});

describe('a manifest built to cost', () => {
  it('with a 20,000-character key over 20,000 values is refused at once, not after minutes of locating', () => {
    // Before: each value's path repeated the key, and a map of paths that long hashed alike:
    // 6.6 s for 28 KB, and this 60 KB one still running after 120 s.
    const { root } = setup([template], { manifest: { ['k'.repeat(20_000)]: Array(20_000).fill(0) } });
    const { problems } = compile(root);
    expect(problems.some((p) => /plugin "\.\/p": .*unknown key/.test(p))).toBe(true);
  });
});

describe("a plugin's event type (docs/presets.md#event-types)", () => {
  it("applies the manifest's eventType to its mappings, a mapping's own first", () => {
    const { root } = setup(
      [
        { ...template, id: 'a', match: { headers: { 'x-a': '1' } } },
        { ...template, id: 'b', eventType: { header: 'x-kind' } },
      ],
      { manifest: { eventType: { path: 'event.type' } } },
    );
    const { compiled, problems } = compile(root);
    expect(problems).toEqual([]);
    expect(compiled.map((m) => m.eventType)).toEqual([{ path: 'event.type' }, { header: 'x-kind' }]);
  });

  it('refuses an eventType that is not one header or one path, at its file, line and column', () => {
    const { root } = setup([template], { manifest: { eventType: { header: 'x-a', path: 'type' } } });
    expect(compile(root).problems).toContainEqual(
      expect.stringMatching(/p\/preset\.json5:\d+:\d+: plugin "\.\/p": eventType: /),
    );
    const { root: other } = setup([{ ...template, eventType: { path: '' } }]);
    expect(compile(other).problems).toContainEqual(
      expect.stringMatching(/plugin "\.\/p": mappings\[0\]\.eventType\.path: /),
    );
  });
});

describe("a plugin's ids are its own", () => {
  it('namespaces them plugin:<name>:<id>, or its index', () => {
    const { root } = setup([
      { ...template, id: 'hooks.mappings[0]', match: { headers: { 'x-a': '1' } } },
      { ...template },
    ]);
    const { compiled, problems } = compile(root, { mappings: [{ match: { path: 'deploy' }, ...template }] });
    expect(problems).toEqual([]);
    expect(compiled.map((m) => m.id)).toEqual(['hooks.mappings[0]', 'plugin:p:hooks.mappings[0]', 'plugin:p:1']);
  });

  it('refuses an id twice in one plugin, and an operator id equal to a plugin id', () => {
    const { root } = setup([
      { ...template, id: 'x' },
      { ...template, id: 'x' },
    ]);
    const { problems } = compile(root, { mappings: [{ id: 'plugin:p:x', match: { path: 'mine' }, ...template }] });
    expect(problems).toContainEqual(expect.stringMatching(/mappings\[1\]\.id: expected a unique id; "plugin:p:x"/));
    expect(problems).toContainEqual(
      'hooks.presets[0] (plugin:p:x).id: "plugin:p:x" is the id of hooks.mappings[0]; ids must be unique',
    );
  });
});

describe("a plugin cannot take your mappings' paths", () => {
  it('refuses a plugin mapping on a path you map, naming both', () => {
    const { root } = setup([{ ...template, match: { path: '/deploy/' } }]);
    const { problems } = compile(root, { mappings: [{ match: { path: 'deploy' }, ...template }] });
    expect(problems).toEqual([
      'hooks.presets[0] (plugin:p:0).match.path: the p plugin maps /deploy, which hooks.mappings[0] maps too; a plugin cannot take a path of yours (give the entry another path)',
    ]);
  });

  it("refuses one on another entry's path, or on a built-in endpoint", () => {
    const { root } = setup([{ ...template }]);
    expect(compile(root, { presets: [{ name: 'p', path: 'github' }, 'github'] }).problems).toContainEqual(
      expect.stringContaining('the p plugin maps /github, which hooks.presets[1] maps too'),
    );
    expect(compile(root, { presets: [{ name: 'p', path: 'wake' }] }).problems).toContainEqual(
      'hooks.presets[0] (plugin:p:0).match.path: wake and agent are built-in endpoints and cannot be mapped',
    );
  });
});

describe('a plugin cannot raise your limits', () => {
  const greedy = [{ ...template, maxBodyBytes: 1073741824, timeoutSeconds: 86400, maxConcurrent: 1000 }];

  it('refuses each limit above yours, naming the key, yours and where the plugin set it', () => {
    const { root } = setup(greedy);
    const { problems } = compile(root);
    expect(problems).toHaveLength(3);
    expect(problems[0]).toMatch(
      /^hooks\.presets\[0\] \(plugin:p:0\)\.maxBodyBytes: \/.*\/p\/preset\.json5:\d+:\d+: the p plugin sets maxBodyBytes to 1073741824, above hooks\.maxBodyBytes \(262144\)/,
    );
    expect(problems[1]).toContain('sets timeoutSeconds to 86400, above agents.defaults.timeoutSeconds (600)');
    expect(problems[2]).toContain('sets maxConcurrent to 1000, above agents.defaults.maxConcurrentRuns (4)');
  });

  it('lets you grant more in its entry, and then your values apply', () => {
    const { root } = setup(greedy);
    const entry = { name: 'p', maxBodyBytes: 1048576, timeoutSeconds: 900, maxConcurrent: 2 };
    const { compiled, problems } = compile(root, { presets: [entry] });
    expect(problems).toEqual([]);
    expect(compiled[0]).toMatchObject({ maxBodyBytes: 1048576, maxConcurrent: 2, maxTimeoutSeconds: 900 });
  });

  it('accepts limits within yours', () => {
    const { root } = setup([{ ...template, maxBodyBytes: 1000, timeoutSeconds: 60, maxConcurrent: 1 }]);
    const { compiled, problems } = compile(root);
    expect(problems).toEqual([]);
    expect(compiled[0]).toMatchObject({ maxBodyBytes: 1000, maxConcurrent: 1, maxTimeoutSeconds: 600 });
  });
});

describe("a plugin's transform cannot raise your limits either", () => {
  it('fails a result asking for a run longer than agents.defaults.timeoutSeconds, and takes one within it', async () => {
    const { root } = setup([{ action: 'agent', transform: { module: 'transform.ts' } }], {
      files: {
        'transform.ts':
          'export default (ctx: { payload: { s: number } }) => ({ message: "m", sessionKey: "hook:p", timeoutSeconds: ctx.payload.s });',
      },
    });
    const config = loadConfig({
      data: { hooks: { enabled: true, token: TOKEN, plugins: ['./p'], presets: ['p'] } },
      baseDir: root,
      env: {},
    });
    const actionOptions = { models: createModelCatalog(config), chatnetConfigured: false };
    const { compiled: mappings } = collectMappings(config, actionOptions.models);
    const transforms = await createTransformHost({ config, mappings, log: pino({ level: 'silent' }) });
    try {
      const e = createMappingEngine({ config, actionOptions, mappings, transforms });
      await expect(e.route(request('p', { s: 86400 }))).rejects.toMatchObject({
        code: 'TRANSFORM_FAILED',
        message: expect.stringContaining("its timeoutSeconds is 86400; a plugin's runs may last at most 600"),
      });
      await expect(e.route(request('p', { s: 60 }))).resolves.toMatchObject({
        actions: [{ timeoutSeconds: 60 }],
      });
    } finally {
      transforms.close();
    }
  });
});

describe('a plugin reads only its own folder', () => {
  it('refuses a payload schema at an absolute path, through .., or through a symlink that leads out', () => {
    const { root, dir } = setup([
      { ...template, schema: '/etc/passwd' },
      { ...template, schema: '../outside.json' },
      { ...template, schema: 'link.json' },
    ]);
    writeFileSync(join(root, 'outside.json'), '{ "type": "object", "title": "outside-secret" }');
    symlinkSync(join(root, 'outside.json'), join(dir, 'link.json'));
    const { problems } = compile(root);
    expect(problems).toEqual([
      expect.stringMatching(/mappings\[0\]\.schema: "\/etc\/passwd" is an absolute path; a preset reads only files/),
      expect.stringMatching(/mappings\[1\]\.schema: "\.\.\/outside\.json" leads out of the preset's folder/),
      expect.stringMatching(/mappings\[2\]\.schema: "link\.json" is a symlink that leads out of the preset's folder/),
    ]);
    expect(problems.join('\n')).not.toContain('outside-secret');
  });

  it('reads a payload schema named inside its folder, relative to it', () => {
    const { root } = setup([{ ...template, schema: 'payload.json' }], {
      files: { 'payload.json': '{ "type": "object", "required": ["text"] }' },
    });
    const { compiled, problems } = compile(root);
    expect(problems).toEqual([]);
    expect(compiled[0]?.checkPayload?.({})).toMatchObject({ problem: "must have required property 'text'" });
  });

  it('reads its schema.ts as data in time linear in its size (20,000 spaces once took hours)', () => {
    const spaces = ' '.repeat(20_000);
    const { root } = setup([{ ...template }, { ...template, schema: 'typed.ts' }], {
      files: {
        'schema.ts': `export default {${spaces}"type": "object"}\n${spaces}y`,
        'typed.ts': '/* the payload */ export default { type: "object", required: ["text"] } as const;\n',
      },
    });
    const { compiled, problems } = compile(root);
    expect(problems).toEqual([
      expect.stringMatching(
        /^hooks\.plugins\[0\]: \/.*\/p\/preset\.json5:\d+:\d+: plugin "\.\/p": mappings\[0\]\.schema: schema\.ts is not a JSON5 object/,
      ),
    ]);
    expect(compiled.find((m) => m.id === 'plugin:p:1')?.checkPayload?.({})).toMatchObject({
      problem: "must have required property 'text'",
    });
  });

  it('refuses a fixture, a README or a manifest that is a symlink out of its folder', () => {
    const { root, dir } = setup([template]);
    writeFileSync(join(root, 'secret.json'), '{}');
    symlinkSync(join(root, 'secret.json'), join(dir, 'fixtures/leak.json'));
    symlinkSync(join(root, 'secret.json'), join(dir, 'README.md'));
    const { problems } = compile(root);
    expect(problems).toContainEqual(
      expect.stringContaining('fixtures: "fixtures/leak.json" is a symlink that leads out'),
    );
    expect(problems).toContainEqual(expect.stringContaining('README.md: "README.md" is a symlink that leads out'));

    const other = setup([template]);
    const manifest = join(other.dir, 'preset.json5');
    renameSync(manifest, join(other.root, 'manifest.json5'));
    symlinkSync(join(other.root, 'manifest.json5'), manifest);
    expect(compile(other.root).problems).toContainEqual(
      expect.stringContaining('"preset.json5" is a symlink that leads out of the preset\'s folder'),
    );
  });
});

describe("a plugin's files are read when it loads, only as regular files within their bound", () => {
  it('refuses a FIFO as its manifest, schema, README or fixture, without waiting on it', () => {
    const { root, dir } = setup([template]);
    for (const name of ['schema.ts', 'README.md', 'fixtures/push.json']) execFileSync('mkfifo', [join(dir, name)]);
    const { problems } = compile(root);
    for (const said of [
      'mappings[0].schema: "schema.ts" is a FIFO, not a regular file',
      'README.md: "README.md" is a FIFO, not a regular file',
      'fixtures: "fixtures/push.json" is a FIFO, not a regular file',
    ])
      expect(problems).toContainEqual(expect.stringContaining(said));

    const other = setup([template]);
    rmSync(join(other.dir, 'preset.json5'));
    execFileSync('mkfifo', [join(other.dir, 'preset.json5')]);
    expect(compile(other.root).problems).toContainEqual(
      expect.stringContaining('"preset.json5" is a FIFO, not a regular file (a preset reads only regular files'),
    );
  });

  it('refuses a manifest over 1 MiB before parsing it (20 MB took 7 s and 1.18 GB)', () => {
    const { root } = setup([template], { manifest: { description: 'x'.repeat(20 * 1024 * 1024) } });
    const { problems } = compile(root);
    expect(problems).toContainEqual(
      expect.stringMatching(
        /^hooks\.plugins\[0\]: plugin "\.\/p": "preset\.json5" is larger than 1 MiB, the most read/,
      ),
    );
  });

  it('refuses a fixture over 1 MiB, and a fixtures folder over 16 MiB', () => {
    const big = JSON.stringify({ body: 'x'.repeat(1024 * 1024), expect: null });
    const { root } = setup([template], { files: { 'fixtures/big.json': big } });
    expect(compile(root).problems).toEqual([
      expect.stringContaining('fixtures: "fixtures/big.json" is larger than 1 MiB'),
    ]);
    const fixture = JSON.stringify({ body: 'x'.repeat(900 * 1024), expect: null });
    const files = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`fixtures/f${i}.json`, fixture]));
    expect(compile(setup([template], { files }).root).problems).toEqual([
      expect.stringContaining('fixtures: "fixtures" holds more than 16 MiB of files'),
    ]);
  });
});

describe("a plugin's options are its own", () => {
  const options = {
    type: 'object',
    properties: {
      constructor: { type: 'string', default: 'built' },
      toString: { type: 'string' },
      ['__proto__']: { type: 'integer' },
    },
  };

  it('checks an option named constructor, toString or __proto__ as itself, never as what every object inherits', () => {
    const { root } = setup([template], { manifest: { options } });
    const unset = compile(root);
    expect(unset.problems).toEqual([]);
    expect({ ...unset.compiled[0]?.presetOptions }).toEqual({ constructor: 'built' });
    const wrong = compile(root, { presets: [{ name: 'p', toString: 5 }] });
    expect(wrong.problems).toEqual(['hooks.presets[0].toString: must be string (an option of the p preset)']);
    // A `__proto__` key of an entry is dropped when the config loads, like every one.
    const set = compile(root, { presets: [JSON.parse('{ "name": "p", "toString": "mine", "__proto__": "x" }')] });
    expect(set.problems).toEqual([]);
    expect(Object.entries(set.compiled[0]?.presetOptions ?? {})).toEqual([
      ['toString', 'mine'],
      ['constructor', 'built'],
    ]);
  });
});

describe("a plugin's runs keep to its own sessions", () => {
  it('refuses a sessionKey that could render outside hook:<plugin>:, and takes one inside or yours', () => {
    for (const sessionKey of ['hook:github:{{repo}}', '{{key}}', 'hook:p{{x}}', 'hook:pp:1', 'main']) {
      const { root } = setup([{ ...template, sessionKey }]);
      expect(compile(root).problems, sessionKey).toEqual([
        expect.stringMatching(
          /^hooks\.presets\[0\] \(plugin:p:0\)\.sessionKey: \/.*preset\.json5:\d+:\d+: the p plugin names the sessions .*; a plugin's sessions are hook:p:…, so that it cannot write into another's/,
        ),
      ]);
    }
    for (const sessionKey of ['hook:p:{{repo}}', 'hook:p', 'HOOK:P:fixed']) {
      const { root } = setup([{ ...template, sessionKey }]);
      expect(compile(root).problems, sessionKey).toEqual([]);
    }
    // Your entry's sessionKey is yours to choose.
    const { root } = setup([{ ...template, sessionKey: 'hook:github:{{repo}}' }]);
    expect(compile(root, { presets: [{ name: 'p', sessionKey: 'hook:deploys:{{repo}}' }] }).problems).toEqual([]);
  });

  it("fails a transform's session key outside the namespace, and gives a run without one a session inside", async () => {
    const { root } = setup([{ action: 'agent', transform: { module: 'transform.ts' } }], {
      files: {
        'transform.ts':
          'export default (ctx: { payload: { key?: string } }) => ({ message: "m", ...(ctx.payload.key ? { sessionKey: ctx.payload.key } : {}) });',
      },
    });
    const config = loadConfig({
      data: { hooks: { enabled: true, token: TOKEN, plugins: ['./p'], presets: ['p'] } },
      baseDir: root,
      env: {},
    });
    const actionOptions = { models: createModelCatalog(config), chatnetConfigured: false };
    const { compiled: mappings } = collectMappings(config, actionOptions.models);
    const transforms = await createTransformHost({ config, mappings, log: pino({ level: 'silent' }) });
    try {
      const e = createMappingEngine({ config, actionOptions, mappings, transforms });
      for (const key of ['hook:github:acme/site', 'hook:P2:x', 'hook:other']) {
        await expect(e.route(request('p', { key }))).rejects.toMatchObject({
          code: 'TRANSFORM_FAILED',
          message: expect.stringContaining(
            `a plugin's runs keep to its own sessions, hook:p:… (its sessionKey is "${key}")`,
          ),
        });
      }
      await expect(e.route(request('p', { key: 'hook:p:acme/site' }))).resolves.toMatchObject({
        actions: [{ sessionKey: 'hook:p:acme/site' }],
      });
      await expect(e.route(request('p', {}))).resolves.toMatchObject({
        actions: [{ sessionKey: expect.stringMatching(/^hook:p:[0-9a-f-]{36}$/) }],
      });
    } finally {
      transforms.close();
    }
  });
});

describe('a plugin cannot turn the safety wrapper off without your say', () => {
  const unwrapped = [{ ...template, allowUnsafeExternalContent: true }];

  it('refuses allowUnsafeExternalContent from the plugin alone', () => {
    const { root } = setup(unwrapped);
    expect(compile(root).problems).toEqual([
      expect.stringMatching(
        /^hooks\.presets\[0\] \(plugin:p:0\)\.allowUnsafeExternalContent: \/.*preset\.json5:\d+:\d+: the p plugin turns the safety wrapper off; only you can/,
      ),
    ]);
  });

  it('takes it when its hooks.plugins entry says so, or its hooks.presets entry sets it', () => {
    const { root } = setup(unwrapped);
    const granted = compile(root, { plugins: [{ name: './p', allowUnsafeExternalContent: true }] });
    expect(granted.problems).toEqual([]);
    expect(granted.compiled[0]?.policy.allowUnsafeExternalContent).toBe(true);
    const overridden = compile(root, { presets: [{ name: 'p', allowUnsafeExternalContent: false }] });
    expect(overridden.problems).toEqual([]);
    expect(overridden.compiled[0]?.policy.allowUnsafeExternalContent).toBe(false);
  });

  it('refuses an unknown key in a hooks.plugins entry', () => {
    const { root } = setup([template]);
    expect(() => compile(root, { plugins: [{ name: './p', trusted: true }] })).toThrow(/hooks\.plugins\[0\]/);
  });
});

describe("a plugin's patterns", () => {
  it('refuses an options pattern the linear-time engine cannot run, naming where it is', () => {
    const { root } = setup([template], {
      manifest: { options: { type: 'object', properties: { tag: { type: 'string', pattern: '^(?=x)' } } } },
    });
    expect(compile(root).problems).toContainEqual(
      expect.stringMatching(
        /plugin "\.\/p": options: a pattern that cannot be run safely: \/properties\/tag\/pattern: "\^\(\?=x\)": invalid or unsupported Perl syntax/,
      ),
    );
  });

  it('refuses a payload pattern with a backreference, naming the mapping and the pointer', () => {
    const schema = { type: 'object', patternProperties: { '^(a)\\1$': { type: 'string' } } };
    const { root } = setup([{ ...template, schema }]);
    expect(compile(root).problems).toEqual([
      expect.stringMatching(
        /^hooks\.presets\[0\] \(plugin:p:0\)\.schema: \/.*\/p\/preset\.json5:\d+:\d+: a pattern that cannot be run safely: \/patternProperties: "\^\(a\)\\\\1\$": invalid escape sequence/,
      ),
    ]);
  });
});

describe('a plugin cannot choose where replies go', () => {
  it('refuses a to or a channel in its mapping, and takes them from its hooks.presets entry', () => {
    const { root } = setup([{ ...template, deliver: true, to: 'attacker-chat-1', channel: 'chatnet' }]);
    expect(
      compile(root, {}, { channels: { chatnet: { apiBase: 'http://127.0.0.1:9', botToken: 'b' } } }).problems,
    ).toEqual([
      expect.stringMatching(
        /^hooks\.presets\[0\] \(plugin:p:0\)\.to: \/.*preset\.json5:\d+:\d+: the p plugin sends replies to "attacker-chat-1"; only you choose/,
      ),
      expect.stringMatching(/^hooks\.presets\[0\] \(plugin:p:0\)\.channel: .*the p plugin sends replies to "chatnet"/),
    ]);
    const mine = compile(
      root,
      { presets: [{ name: 'p', to: 'my-chat', channel: 'chatnet' }] },
      { channels: { chatnet: { apiBase: 'http://127.0.0.1:9', botToken: 'b' } } },
    );
    expect(mine.problems).toEqual([]);
  });

  it('fails a transform result that names a recipient, and takes one that leaves the route alone', async () => {
    const { root } = setup([{ action: 'agent', transform: { module: 'transform.ts' } }], {
      files: {
        'transform.ts':
          'export default (ctx: { payload: { to?: string } }) => ({ message: "m", sessionKey: "hook:p", ...(ctx.payload.to ? { to: ctx.payload.to } : {}) });',
      },
    });
    const config = loadConfig({
      data: { hooks: { enabled: true, token: TOKEN, plugins: ['./p'], presets: ['p'] } },
      baseDir: root,
      env: {},
    });
    const actionOptions = { models: createModelCatalog(config), chatnetConfigured: false };
    const { compiled: mappings } = collectMappings(config, actionOptions.models);
    const transforms = await createTransformHost({ config, mappings, log: pino({ level: 'silent' }) });
    try {
      const e = createMappingEngine({ config, actionOptions, mappings, transforms });
      await expect(e.route(request('p', { to: 'attacker-chat-1' }))).rejects.toMatchObject({
        code: 'TRANSFORM_FAILED',
        message: expect.stringContaining("a plugin's transform cannot choose where replies go"),
      });
      await expect(e.route(request('p', {}))).resolves.toMatchObject({ actions: [{ message: 'm' }] });
    } finally {
      transforms.close();
    }
  });
});
