import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { parseEnv } from 'node:util';
import JSON5 from 'json5';
import type { Config } from '../config/index.js';
import { readRegularFile } from '../read-file.js';
import { gatewayTokenFile } from '../store/index.js';

/**
 * What `hookd serve` prints once it listens (docs/cli.md#hookd-serve): where it is, the console
 * and where its gateway token is kept, and a curl for one configured endpoint that reads the hook
 * token where the config takes it from (`.env`, the environment, the data folder): never the
 * token itself.
 */

/** A `${NAME}` standing alone, as a config names the variable a secret comes from. */
const VARIABLE = /^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$/;

/** A word for the shell, single-quoted. */
const quote = (text: string) => `'${text.replaceAll("'", `'\\''`)}'`;

/** What the config file says at `path` before `${NAME}` is replaced; undefined when it cannot be read. */
function rawValue(file: string | undefined, path: readonly string[]): unknown {
  if (file === undefined) return undefined;
  try {
    let node: unknown = JSON5.parse(readFileSync(file, 'utf8'));
    for (const key of path) node = (node as Record<string, unknown> | undefined)?.[key];
    return node;
  } catch {
    return undefined;
  }
}

/** The `.env` beside the config, and whether it sets `name`. */
function dotenvWith(file: string | undefined, name: string): string | undefined {
  if (file === undefined) return undefined;
  const dotenv = join(dirname(file), '.env');
  if (!existsSync(dotenv)) return undefined;
  return parseEnv(readFileSync(dotenv, 'utf8'))[name] === undefined ? undefined : dotenv;
}

/** Where the gateway token is: a variable (in `.env` or the environment), the config file, or the generated file. */
export function gatewayTokenPlace(config: Config, cwd: string): string {
  if (config.gateway.auth.token === undefined) return `in ${gatewayTokenFile(config.storage.path)}`;
  const shown = config.file ? relative(cwd, config.file) || config.file : 'the config';
  const raw = rawValue(config.file, ['gateway', 'auth', 'token']);
  const name = typeof raw === 'string' ? VARIABLE.exec(raw)?.[1] : undefined;
  if (!name) return `in ${shown} (gateway.auth.token)`;
  const dotenv = dotenvWith(config.file, name);
  return `in $${name}${dotenv ? `, set in ${dotenv}` : ', set in the environment hookd was started with'}`;
}

/** The hook token as the shell reads it (a command or a variable), and what that needs; undefined for a literal one. */
function hookTokenWord(config: Config, tokenFile: string | undefined): { word: string; note: string } | undefined {
  if (tokenFile) return { word: `$(cat ${quote(tokenFile)})`, note: `read from ${tokenFile}` };
  const raw = rawValue(config.file, ['hooks', 'token']);
  const name = typeof raw === 'string' ? VARIABLE.exec(raw)?.[1] : undefined;
  if (!name) return undefined;
  const dotenv = dotenvWith(config.file, name);
  // The value as a .env holds it, bare or in quotes (node's parseEnv takes both).
  const value = `s/^${name}=["']\\{0,1\\}\\([^"']*\\)["']\\{0,1\\}[[:space:]]*$/\\1/p`;
  if (dotenv) return { word: `$(sed -n ${quote(value)} ${quote(dotenv)})`, note: `read from ${dotenv}` };
  return { word: `$${name}`, note: `read from $${name}: set it in this shell too` };
}

/** A case of a mapping's fixture folder, one that makes an action when there is one: its headers and payload. */
function caseToSend(config: Config, names: readonly string[]) {
  for (const name of names) {
    const dir = join(config.hooks.transformsDir, 'fixtures', name);
    if (!existsSync(dir)) continue;
    const cases = readdirSync(dir)
      .filter((f) => f.endsWith('.json'))
      .sort()
      .flatMap((f) => {
        // A regular file only: a FIFO named `*.json` kept serve from starting.
        const file = readRegularFile(join(dir, f), 1_048_576);
        if (!('text' in file)) return [];
        try {
          const read = JSON.parse(file.text) as {
            headers?: Record<string, string>;
            payload?: unknown;
            expect?: unknown;
          };
          return 'payload' in read ? [read] : [];
        } catch {
          return []; // not a case: hookd test says so
        }
      });
    const chosen = cases.find((c) => c.expect !== null && c.expect !== undefined) ?? cases[0];
    if (chosen) return { headers: chosen.headers ?? {}, payload: chosen.payload };
  }
  return undefined;
}

/** The endpoint the curl posts to: a mapping the hook token opens that has a fixture to send, else /hooks/wake. */
function endpointOf(config: Config): { path: string; headers: Record<string, string>; body: unknown } {
  for (const m of config.hooks.mappings) {
    const path = m.match?.path?.replace(/^\/+|\/+$/g, '');
    if (!path || m.verify) continue;
    const found = caseToSend(
      config,
      [m.id, path].filter((n): n is string => n !== undefined),
    );
    if (found) return { path, headers: found.headers, body: found.payload };
  }
  return { path: 'wake', headers: {}, body: { text: 'Hello from curl' } };
}

/** A curl that sends one configured endpoint a request it takes, and what its token word needs; undefined without hooks. */
export function readyCurl(
  config: Config,
  url: string,
  tokenFile?: string,
): { readonly curl: string; readonly note: string } | undefined {
  if (!config.hooks.enabled) return undefined;
  const token = hookTokenWord(config, tokenFile);
  const endpoint = endpointOf(config);
  const auth = token ? `-H "Authorization: Bearer ${token.word}"` : `-H 'Authorization: Bearer <hooks.token>'`;
  const headers = Object.entries({ 'Content-Type': 'application/json', ...endpoint.headers })
    .filter(([name]) => !/^(authorization|x-service-token|content-length|host)$/i.test(name))
    .map(([name, value]) => `-H ${quote(`${name}: ${value}`)}`);
  const curl = [
    `curl -sS -X POST ${url}${config.hooks.path}/${endpoint.path}`,
    auth,
    ...headers,
    `-d ${quote(JSON.stringify(endpoint.body))}`,
  ];
  return {
    curl: curl.join(' '),
    note: token ? `the hook token ${token.note}` : 'put the hook token (hooks.token) in place of <hooks.token>',
  };
}
