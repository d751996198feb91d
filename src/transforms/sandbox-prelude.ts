import { BUNDLE_GLOBAL } from './compile.js';
import { BUNDLE_FILENAME } from './locate.js';

/**
 * Removes what escapes the isolate's memory limit: WebAssembly memory is allocated outside
 * V8's heap (a filled `new WebAssembly.Memory({ initial: 16000 })` took 1-2 GB per call),
 * and SharedArrayBuffer with Atomics can block a thread.
 */
export const WITHOUT_WASM =
  'delete globalThis.WebAssembly; delete globalThis.SharedArrayBuffer; delete globalThis.Atomics;';

/**
 * Makes every ArrayBuffer fixed in size: a resizable one (`maxByteLength`) is not counted
 * against the isolate's memory limit, so a 16 MB isolate kept 2-3 GB in two of them. The
 * constructor drops its options; `resize` and `transfer` go.
 */
export const FIXED_ARRAY_BUFFERS = `(() => {
  const Fixed = ArrayBuffer;
  const proto = Fixed.prototype;
  for (const name of ['resize', 'transfer', 'transferToFixedLength']) delete proto[name];
  const Wrapped = new Proxy(Fixed, { construct: (target, args, newTarget) => Reflect.construct(target, [args[0]], newTarget) });
  Object.defineProperty(proto, 'constructor', { value: Wrapped, writable: true, configurable: true });
  globalThis.ArrayBuffer = Wrapped;
})();`;

/** An error's text crossing out of the sandbox, at most (docs/operations.md#limits). */
export const MAX_ERROR_CHARS = 1024;
/** An error's stack crossing out of the sandbox, at most: enough for the frames that are located. */
export const MAX_STACK_CHARS = 4096;

/**
 * The built-ins hookd's code in the isolate uses, saved before the transform's bundle runs: a
 * transform may replace `String.prototype.slice` or `JSON.stringify` in its realm, and a cap
 * looked up at call time would then be the transform's (docs/transforms.md#limits). Shared by
 * every script hookd runs before the bundle.
 */
export const SAVED_BUILTINS = `
  const call = Function.prototype.call;
  const slice = call.bind(String.prototype.slice);
  const charCodeAt = call.bind(String.prototype.charCodeAt);
  const stringify = JSON.stringify;
  const parse = JSON.parse;
  const toText = String;`;

/** What the call script hands the host before the bundle runs (then takes off the global object). */
export const CALL_GLOBALS = ['__hookdCall', '__hookdSettled'] as const;

/**
 * The script run in the isolate before the bundle (after the console's): defines
 * `__hookdCall(json, rawBody)`, which parses the context, calls the transform and answers a
 * JSON envelope (so only strings cross), and `__hookdSettled()` for an async one. The host
 * takes references to both before the bundle runs, so transform code can change neither, and
 * they use only the built-ins saved here. The export is handed over by `pickExport`.
 */
export function callPrelude(maxResultBytes: number): string {
  return `
(() => {${SAVED_BUILTINS}
  const consoleCall = globalThis.__hookdConsoleCall;
  delete globalThis.__hookdConsoleCall;
  let fn;
  globalThis.__hookdUse = (picked) => { fn = picked; return typeof picked === 'function'; };
  // Bounded in here, so that a huge message or result is never copied to the host.
  const text = (err) => {
    try {
      const message = err && typeof err.message === 'string' ? err.message : toText(err);
      return message.length > ${MAX_ERROR_CHARS} ? slice(message, 0, ${MAX_ERROR_CHARS}) + '…' : message;
    } catch {
      return 'the transform threw something that cannot be shown';
    }
  };
  // The stack is the bundle's (V8 frames of ${BUNDLE_FILENAME}); the host maps it to the author's source.
  const stackOf = (err) => {
    try {
      const stack = err && typeof err.stack === 'string' ? err.stack : '';
      return stack.length > ${MAX_STACK_CHARS} ? slice(stack, 0, ${MAX_STACK_CHARS}) : stack;
    } catch {
      return '';
    }
  };
  // Objects without a prototype: an Object.prototype.toJSON of the transform's is never asked.
  const fail = (err) => stringify({ __proto__: null, ok: false, error: text(err) || 'the transform threw', stack: stackOf(err) });
  const done = (value) => {
    if (value === undefined) return '{"ok":true}';
    let json;
    // Nested so deep that writing it ran out of stack (where that is depends on the thread the
    // call runs on): said as what it is, as the gateway's own depth check says it past 64 levels.
    try { json = stringify({ __proto__: null, ok: true, value }); } catch (err) { return fail(/call stack/i.test(text(err)) ? 'its result nests too deep to be written as JSON' : 'its result is not JSON: ' + text(err)); }
    if (typeof json !== 'string') return '{"ok":true}';
    if (json.length > ${maxResultBytes}) return fail('its result is over ${maxResultBytes} characters of JSON');
    return json;
  };
  const answer = (json) => { consoleCall.end(); return json; };
  let settled;
  // Sync transforms answer at once. An async one can only wait on microtasks (the sandbox
  // has no timers or I/O), so it has settled by the time the call returns: __hookdSettled reads it.
  globalThis.__hookdCall = (json, rawBody) => {
    consoleCall.begin();
    try {
      const input = parse(json);
      input.rawBody = rawBody;
      if (!('payload' in input)) input.payload = parse(charCodeAt(rawBody, 0) === 0xfeff ? slice(rawBody, 1) : rawBody);
      const value = fn(input);
      if (!value || typeof value.then !== 'function') return answer(done(value));
      settled = '{"ok":false,"error":"the transform returned a promise that never settled"}';
      value.then((v) => { try { settled = done(v); } catch (err) { settled = fail(err); } }, (err) => { settled = fail(err); });
      return '';
    } catch (err) {
      return answer(fail(err));
    }
  };
  globalThis.__hookdSettled = () => answer(settled);
})();`;
}

/** Run after the bundle, in its script: hands the transform's export to the call script. */
export function pickExport(exportName: string | undefined): string {
  const pick = exportName
    ? `m[${JSON.stringify(exportName)}]`
    : `(typeof m.default === 'function' ? m.default : m.transform)`;
  return `
(() => {
  const m = globalThis.${BUNDLE_GLOBAL} ?? {};
  const use = globalThis.__hookdUse;
  delete globalThis.__hookdUse;
  globalThis.__hookdReady = typeof use === 'function' && use(${pick}) === true;
})();`;
}
