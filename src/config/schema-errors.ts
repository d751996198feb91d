import type { ErrorObject } from 'ajv';
import { joinPath } from './env.js';
import { didYouMean } from './suggest.js';

function pointerToPath(pointer: string): string {
  if (!pointer) return '';
  return pointer
    .slice(1)
    .split('/')
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((path, key) => joinPath(path, key), '');
}

/** Turns ajv errors into `path: expected …` lines, one per problem. */
export function formatSchemaErrors(errors: readonly ErrorObject[]): string[] {
  return [...new Set(selectErrors(errors).map(describeError))];
}

/** The index of the `anyOf` branch an error belongs to. */
function branchOf(e: ErrorObject, owner: ErrorObject): number {
  return Number(e.schemaPath.slice(owner.schemaPath.length + 1).split('/')[0]);
}

/** The one `anyOf` branch whose type fits the value, when exactly one does. */
function fittingBranch(owner: ErrorObject, errors: readonly ErrorObject[]): number | undefined {
  const inside = errors.filter((b) => b !== owner && b.schemaPath.startsWith(`${owner.schemaPath}/`));
  const misfits = new Set(
    inside.filter((b) => b.keyword === 'type' && b.instancePath === owner.instancePath).map((b) => branchOf(b, owner)),
  );
  const fits = [...new Set(inside.map((b) => branchOf(b, owner)))].filter((i) => !misfits.has(i));
  return fits.length === 1 ? fits[0] : undefined;
}

/**
 * A failed `anyOf` is one summary line, unless exactly one branch has the value's type:
 * then that branch's own errors are the precise ones.
 */
function selectErrors(errors: readonly ErrorObject[]): ErrorObject[] {
  const anyOf = errors.filter((e) => e.keyword === 'anyOf');
  const ownerOf = (e: ErrorObject) => anyOf.find((a) => a !== e && e.schemaPath.startsWith(`${a.schemaPath}/`));
  return errors.filter((e) => {
    const owner = ownerOf(e);
    if (owner) return fittingBranch(owner, errors) === branchOf(e, owner);
    return e.keyword !== 'anyOf' || fittingBranch(e, errors) === undefined;
  });
}

function describeError(e: ErrorObject): string {
  const path = pointerToPath(e.instancePath);
  const at = (suffix: string) => `${path ? `${path}: ` : ''}${suffix}`;
  const described = (e.parentSchema as { description?: string } | undefined)?.description;
  const params = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'additionalProperties': {
      const key = String(params.additionalProperty);
      const known = Object.keys((e.parentSchema as { properties?: object } | undefined)?.properties ?? {});
      return `${joinPath(path, key)}: unknown key${meant(key, known)}`;
    }
    case 'required':
      return `${joinPath(path, String(params.missingProperty))}: required`;
    case 'type':
      return at(`expected ${described ?? String(params.type)}, got ${typeName(e.data)}`);
    case 'enum': {
      const allowed = params.allowedValues as unknown[];
      const strings = allowed.filter((v): v is string => typeof v === 'string');
      const hint = typeof e.data === 'string' ? meant(e.data, strings) : '';
      return at(`expected one of ${allowed.map((v) => JSON.stringify(v)).join(', ')}${hint}`);
    }
    case 'pattern':
    case 'anyOf':
    case 'const':
      return at(`expected ${described ?? `a value that ${e.message ?? 'is valid'}`}, got ${quotedValue(e.data)}`);
    case 'propertyNames':
      return at(`has an invalid key: expected ${described ?? 'a valid name'}`);
    default:
      return at(
        described && e.keyword === 'minLength'
          ? `expected ${described}`
          : `expected a value that ${e.message ?? 'is valid'}`,
      );
  }
}

/** ` (did you mean "x"?)` when one of `candidates` is close to `word`, else nothing. */
function meant(word: string, candidates: readonly string[]): string {
  const guess = didYouMean(word, candidates);
  return guess === undefined ? '' : ` (did you mean ${JSON.stringify(guess)}?)`;
}

/** The longest a problem quotes a wrong value: the rest is `…`. */
const QUOTED_CHARS = 120;

/**
 * A wrong value as a config problem quotes it (`hookd check`'s output gets pasted into issues):
 * a URL without its user info, query or fragment, where credentials sit (`https://user:pass@…`,
 * `?key=…`), and no longer than `QUOTED_CHARS`.
 */
export function quotedValue(value: unknown): string {
  const text = typeof value === 'string' ? urlShown(value) : (JSON.stringify(value) ?? String(value));
  const cut = text.length > QUOTED_CHARS ? `${text.slice(0, QUOTED_CHARS)}…` : text;
  return typeof value === 'string' ? JSON.stringify(cut) : cut;
}

/**
 * A URL (`scheme://…`, or `user:password@host` without one) without its user info, query or
 * fragment; any other text as it is. The user info runs to the last `@` before the query: a
 * password pasted with a `/` in it is no less a password.
 */
function urlShown(text: string): string {
  const start = /^[a-z][a-z\d+.-]*:\/\//i.exec(text)?.[0].length ?? 0;
  const query = text.search(/[?#]/);
  const end = query === -1 ? text.length : query;
  const at = text.lastIndexOf('@', end - 1);
  const login = at >= start && (start > 0 || text.slice(0, at).includes(':'));
  if (start === 0 && !login) return text;
  const shown = login ? `${text.slice(0, start)}…@${text.slice(at + 1, end)}` : text.slice(0, end);
  return end < text.length ? `${shown}${text[end]}…` : shown;
}

function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}
