import { createRequire } from 'node:module';
import { type Bindings, type DestinationStream, type LevelWithSilent, type Logger, pino } from 'pino';
import type { PrettyOptions, PrettyStream } from 'pino-pretty';
import { SCHEME_MASKS } from './schemes/index.js';

/** pino-pretty (and what it pulls in) is loaded only for a terminal, not by a service. */
const loadPretty = () => createRequire(import.meta.url)('pino-pretty') as (options: PrettyOptions) => PrettyStream;

export type { Logger } from 'pino';

/** Where a log line's headers sit: `headers.<name>`, or `headers["<name>"]` for one with a dash. */
const headerPaths = (at: string, names: readonly string[]) =>
  names.map((name) => (/^[a-z]+$/.test(name) ? `${at}.${name}` : `${at}["${name}"]`));

/** Keys censored one level down, under any key of a line or of a child's bindings. */
const NESTED_SECRETS = ['token', 'secret', 'apiKey', 'botToken', 'password'] as const;
const CENSOR = '[redacted]';

/**
 * Paths pino censors wherever they appear in a log line (security rule 3, docs/security.md#logs):
 * the tokens and the signature schemes' headers; under `req.headers`, those that carry a secret
 * itself; an error's own secret fields (after pino serialises it). NESTED_SECRETS under any other
 * key are censored by censorNested.
 */
export const REDACT_PATHS = [
  'token',
  ...NESTED_SECRETS.map((key) => `err.${key}`),
  'authorization',
  ...headerPaths('headers', [
    'authorization',
    'x-service-token',
    ...SCHEME_MASKS.headers,
    'cookie',
    'proxy-authorization',
  ]),
  ...headerPaths('req.headers', ['authorization', 'x-service-token', ...SCHEME_MASKS.secrets, 'cookie']),
  'query.token',
  'req.query.token',
];

/**
 * A line (or a child's bindings) with NESTED_SECRETS censored in its values that are objects, as
 * a copy; the line itself when none holds one (most lines: nothing is copied). pino's wildcard
 * paths (`*.token`) did this by running every value of every line through its redaction, which
 * doubled a line's cost (4.2 against 2.2 µs, and 14 KB of garbage a run's `run done` line).
 * An error under `err` is left to REDACT_PATHS: pino serialises it after this runs.
 */
export function censorNested<T extends object>(line: T): T {
  let copy: Record<string, unknown> | undefined;
  for (const key in line) {
    const value: unknown = line[key];
    if (typeof value !== 'object' || value === null || key === 'err') continue;
    if (!NESTED_SECRETS.some((secret) => Object.hasOwn(value, secret))) continue;
    const censored: Record<string, unknown> = { ...value };
    for (const secret of NESTED_SECRETS) if (Object.hasOwn(value, secret)) censored[secret] = CENSOR;
    copy ??= { ...(line as Record<string, unknown>) };
    copy[key] = censored;
  }
  return copy ? (copy as T) : line;
}

/** What pino's error serializer makes: an object with this prototype. */
const SERIALIZED_ERROR = Object.getPrototypeOf(pino.stdSerializers.err({ message: '' } as Error)) as object;
/** How deep an error's plain fields are written out before they are only named. */
const MAX_FIELD_DEPTH = 4;

/**
 * An error as pino writes it (message and stack with their causes'), its fields that are live
 * objects named instead of written out: pg-pool's idle error carries the connection's whole
 * `client` (its cancel key, its TLS options), which pino would write as one 8 KB line
 * (docs/security.md#logs). Plain objects, arrays, dates and nested errors are kept.
 */
export function serializeError(err: unknown): unknown {
  const serialized = pino.stdSerializers.err(err as Error) as unknown;
  return serialized === err ? livesNamed(err, 0) : namedInPlace(serialized as Record<string, unknown>, 0);
}

/** A serialized error (ours to change) with its fields' live objects named. */
function namedInPlace(serialized: Record<string, unknown>, depth: number): Record<string, unknown> {
  for (const key of Object.keys(serialized)) serialized[key] = livesNamed(serialized[key], depth + 1);
  return serialized;
}

/** `value` with every object that is not plain data replaced by its class's name, as a copy. */
function livesNamed(value: unknown, depth: number): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? String(value) : value.toISOString();
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto === SERIALIZED_ERROR) return namedInPlace(value as Record<string, unknown>, depth);
  const plain = Array.isArray(value) || proto === Object.prototype || proto === null;
  if (!plain) return `[${(value as { constructor?: { name?: string } }).constructor?.name || 'Object'}]`;
  if (depth >= MAX_FIELD_DEPTH) return Array.isArray(value) ? '[Array]' : '[Object]';
  if (Array.isArray(value)) return value.map((item) => livesNamed(item, depth + 1));
  const copy: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) copy[key] = livesNamed(item, depth + 1);
  return copy;
}

export interface LoggerOptions {
  level: LevelWithSilent;
  /** Where lines go; default stdout, pretty-printed when it is a TTY. */
  destination?: DestinationStream;
}

/** Creates the one root logger; modules call `log.child({ component })`. */
export function createLogger(options: LoggerOptions): Logger {
  const base = {
    level: options.level,
    base: { pid: process.pid },
    redact: { paths: REDACT_PATHS, censor: CENSOR },
    serializers: { err: serializeError },
    formatters: { log: censorNested, bindings: censorNested },
  };
  if (options.destination) return replacingChildren(pino(base, options.destination));
  if (process.stdout.isTTY) return replacingChildren(pino(base, loadPretty()({ colorize: true, sync: true })));
  // Lines are gathered into writes of 4 KiB, or flushed 100 ms after the first: one write per
  // line cost about 30 µs of a run's CPU (a thread-pool hand-off each). Flushed at exit; a
  // SIGKILL loses at most the last 100 ms of lines.
  return replacingChildren(pino(base, pino.destination({ fd: 1, sync: false, minLength: 4096, periodicFlush: 100 })));
}

/**
 * A child's binding replaces its parent's of the same name: pino repeats it otherwise
 * (`"component":"runs","component":"attempts"`, which JSON readers take as the last alone), and
 * a module binds its `component` without knowing what its caller bound. Such a child is made
 * from the root with the bindings merged, at the parent's level; children are inherited
 * prototypes, so every descendant of `root` does the same. A child's bindings are censored
 * as a line is (censorNested).
 */
function replacingChildren(root: Logger): Logger {
  const child = root.child;
  root.child = function (this: Logger, given, options) {
    // pino formats only the root's bindings (formatters.bindings), not a child's.
    const bindings = censorNested(given);
    // The bound keys as pino writes them (`,"pid":1,"component":"http"`): a request's child
    // (`reqId`) is made at the cost of a substring search, the bindings parsed only on a match.
    const written = (this as unknown as Record<symbol, string>)[pino.symbols.chindingsSym] ?? '';
    if (!Object.keys(bindings).some((key) => written.includes(`${JSON.stringify(key)}:`)))
      return child.call(this, bindings, options);
    const own = this.bindings();
    if (!Object.keys(bindings).some((key) => key in own)) return child.call(this, bindings, options);
    return child.call(root, { ...own, ...bindings }, { level: this.level, ...options });
  } as Logger['child'];
  return root;
}

type LogArgs = Parameters<Logger['info']>;

/**
 * A request's logger that becomes pino's child of `parent` (with `bindings`) only when something
 * logs through it. fastify makes one per request, and pino's child serializes and redacts its
 * bindings on the spot (about 1 µs and 2 KB a request): a hook request that logs nothing never
 * needs it. The `childLoggerFactory` of src/app.ts.
 */
export class LazyChildLogger {
  private made: Logger | undefined;
  constructor(
    private readonly parent: Logger,
    private readonly bindings: Bindings,
  ) {}
  private get real(): Logger {
    this.made ??= this.parent.child(this.bindings);
    return this.made;
  }
  get level(): string {
    return this.made ? this.made.level : this.parent.level;
  }
  set level(level: string) {
    this.real.level = level;
  }
  fatal(...args: LogArgs) {
    this.real.fatal(...args);
  }
  error(...args: LogArgs) {
    this.real.error(...args);
  }
  warn(...args: LogArgs) {
    this.real.warn(...args);
  }
  info(...args: LogArgs) {
    this.real.info(...args);
  }
  debug(...args: LogArgs) {
    this.real.debug(...args);
  }
  trace(...args: LogArgs) {
    this.real.trace(...args);
  }
  silent(...args: LogArgs) {
    this.real.silent(...args);
  }
  child(bindings: Bindings): Logger {
    return this.real.child(bindings);
  }
}
