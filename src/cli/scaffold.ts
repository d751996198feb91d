/**
 * The files `hookd init` writes (docs/transforms.md#a-folder-of-your-own): a config, one
 * example transform typed from its schema, a fixture for `hookd test`, and what TypeScript and
 * npm need to check it. Pure: init.ts decides what is written where.
 */

/** What the scaffold names: the folder's package name, and the versions it depends on. */
export interface ScaffoldOptions {
  readonly name: string;
  /**
   * The folder hookd runs from (its package root): while hookd is not on the npm registry, the
   * folder depends on it there (`file:`, which `npm install` links).
   */
  readonly hookdRoot: string;
  readonly typescriptVersion: string;
  /** hookd's dependencies that build on install (its own `allowScripts`). */
  readonly buildsOnInstall: readonly string[];
}

/** The example's mapping: its id, its path under /hooks/, and a delivery it takes. */
export const EXAMPLE = {
  id: 'example',
  payload: { source: 'ci', severity: 'warning', summary: 'Build failed on main' },
} as const;

/** The variable of `.env` the config's hook token comes from. */
export const TOKEN_VARIABLE = 'HOOKD_HOOK_TOKEN';

const CONFIG = `// hookd's configuration (every key: docs/configuration.md in hookd's repository).
// \${NAME} is the environment variable NAME, or its line in .env beside this file.
{
  server: { host: '127.0.0.1', port: 8787 },
  hooks: {
    enabled: true,
    // What senders present as "Authorization: Bearer <token>"; the value is in .env.
    token: '\${${TOKEN_VARIABLE}}',
    mappings: [
      {
        id: '${EXAMPLE.id}',
        match: { path: '${EXAMPLE.id}' },
        // Each delivery is checked against the schema first: 400 PAYLOAD_INVALID otherwise.
        schema: 'transforms/${EXAMPLE.id}.schema.ts',
        transform: { module: '${EXAMPLE.id}.ts' },
      },
    ],
  },
  // builtin/echo answers with what it was asked: replace it with your model provider.
  agents: { defaults: { model: 'builtin/echo' } },
  storage: { path: 'data/hookd.db' },
}
`;

const SCHEMA = `// The payload /hooks/${EXAMPLE.id} takes. hookd validates each delivery against it and reads
// this file as data (never runs it): keep it to \`export default { … } as const\`.
export default {
  type: 'object',
  required: ['source', 'summary'],
  properties: {
    source: { type: 'string', minLength: 1 },
    severity: { type: 'string', enum: ['info', 'warning', 'critical'] },
    summary: { type: 'string', minLength: 1 },
  },
} as const;
`;

const TRANSFORM = `// /hooks/${EXAMPLE.id} → an agent run per source; info is skipped. Runs sandboxed: no Node
// APIs, no network, only the request it is given. Test it with \`npm test\` (hookd test).
import { defineTransform, type FromSchema } from 'hookd/transform';
import type schema from './${EXAMPLE.id}.schema.js';

export default defineTransform<FromSchema<typeof schema>>(({ payload }) => {
  const severity = payload.severity ?? 'warning';
  if (severity === 'info') return null; // nothing worth a run: answered 204
  return {
    kind: 'agent',
    name: 'Example',
    message: \`\${severity}: \${payload.summary}\`,
    sessionKey: \`hook:${EXAMPLE.id}:\${payload.source}\`,
  };
});
`;

const fixture = (description: string, payload: object, expect: unknown) =>
  `${JSON.stringify({ description, payload, expect }, null, 2)}\n`;

const TSCONFIG = `${JSON.stringify(
  {
    compilerOptions: {
      target: 'ES2022',
      lib: ['ES2023'],
      // Transforms are bundled (by esbuild, inside hookd): resolve imports the way a bundler does.
      module: 'ESNext',
      moduleResolution: 'Bundler',
      // No Node or DOM types: a transform has neither.
      types: [],
      strict: true,
      noEmit: true,
      skipLibCheck: true,
    },
    include: ['transforms'],
  },
  null,
  2,
)}\n`;

/** The scaffold's package.json: hookd for the types (and `npx hookd`), TypeScript to check them. */
export function packageJson(options: ScaffoldOptions): Record<string, unknown> {
  return {
    name: options.name,
    private: true,
    scripts: { start: 'hookd serve', test: 'hookd test', check: 'hookd check && tsc' },
    dependencies: { hookd: `file:${options.hookdRoot}` },
    devDependencies: { typescript: `^${options.typescriptVersion}` },
    allowScripts: Object.fromEntries(options.buildsOnInstall.map((name) => [name, true])),
  };
}

const README = `# Webhooks, through hookd

- \`hookd.json5\`: the gateway's configuration; its hook token is in \`.env\` (keep that file private).
- \`transforms/${EXAMPLE.id}.ts\`: what \`POST /hooks/${EXAMPLE.id}\` becomes, typed from \`transforms/${EXAMPLE.id}.schema.ts\`.
- \`transforms/fixtures/${EXAMPLE.id}/*.json\`: recorded deliveries and what they must become.

Next:

\`\`\`sh
npm install          # hookd (from the folder package.json names) and TypeScript
npm test             # hookd test: every fixture through its mapping (--update records what comes out)
npm run check        # hookd check, and tsc on the transforms
npm start            # hookd serve: the gateway on http://127.0.0.1:8787
\`\`\`

hookd is not on the npm registry yet: \`package.json\` depends on the hookd that wrote this
folder, where it is installed (a \`file:\` path, which \`npm install\` links). Any other command:
\`npx --no hookd <command>\` (\`--no\`: never fetch a package of that name).

Then send it a delivery:

\`\`\`sh
curl -sS -X POST http://127.0.0.1:8787/hooks/${EXAMPLE.id} -H "Authorization: Bearer $(sed -n 's/^${TOKEN_VARIABLE}=//p' .env)" -H 'Content-Type: application/json' -d '${JSON.stringify(EXAMPLE.payload)}'
\`\`\`

A new source: a mapping in \`hookd.json5\` (\`match.path\` is its \`/hooks/<path>\`), a transform
in \`transforms/\` importing \`defineTransform\` from \`hookd/transform\`, and a fixture
\`transforms/fixtures/<mapping id>/<case>.json\`: \`{ "headers": {…}, "payload": {…}, "expect": […] }\`
(\`expect\`: the actions it must become, or \`null\` when it is skipped).
`;

/** Every file of the scaffold but package.json, `.env` and `.gitignore`, by path relative to its folder. */
export function scaffoldFiles(): Record<string, string> {
  const warning = EXAMPLE.payload;
  return {
    'hookd.json5': CONFIG,
    [`transforms/${EXAMPLE.id}.ts`]: TRANSFORM,
    [`transforms/${EXAMPLE.id}.schema.ts`]: SCHEMA,
    [`transforms/fixtures/${EXAMPLE.id}/warning.json`]: fixture('A warning from CI: one agent run', warning, [
      {
        kind: 'agent',
        name: 'Example',
        message: `warning: ${warning.summary}`,
        sessionKey: `hook:${EXAMPLE.id}:${warning.source}`,
      },
    ]),
    [`transforms/fixtures/${EXAMPLE.id}/info.json`]: fixture(
      'An info event: skipped (204)',
      { ...warning, severity: 'info' },
      null,
    ),
    'tsconfig.json': TSCONFIG,
    'README.md': README,
  };
}

/** The lines `.gitignore` needs: the installed packages, the store, and the secrets. */
export const GITIGNORE_LINES = ['node_modules/', 'data/', '.env'] as const;
