import { BUNDLE_GLOBAL } from './compile.js';
import { BUNDLE_FILENAME } from './locate.js';

/**
 * Removes what escapes the isolate's memory limit: WebAssembly memory is allocated outside
 * V8's heap (a filled `new WebAssembly.Memory({ initial: 16000 })` took 1-2 GB per call),
 * and SharedArrayBuffer with Atomics can block a thread.
 */
export const WITHOUT_WASM =
  'delete globalThis.WebAssembly; delete globalThis.SharedArrayBuffer; delete globalThis.Atomics;';

/** An error's text crossing out of the sandbox, at most (docs/operations.md#limits). */
export const MAX_ERROR_CHARS = 1024;
/** An error's stack crossing out of the sandbox, at most: enough for the frames that are located. */
const MAX_STACK_CHARS = 4096;

/**
 * The code that runs inside the isolate after the bundle: picks the export, and defines
 * `__hookdCall(json)` which parses the context, awaits the transform and answers a JSON
 * envelope — so only strings ever cross the boundary.
 */
export function prelude(exportName: string | undefined, maxResultBytes: number): string {
  const pick = exportName
    ? `m[${JSON.stringify(exportName)}]`
    : `(typeof m.default === 'function' ? m.default : m.transform)`;
  return `
(() => {
  const m = globalThis.${BUNDLE_GLOBAL} ?? {};
  const fn = ${pick};
  globalThis.__hookdReady = typeof fn === 'function';
  // Bounded in here, so that a huge message or result is never copied to the host.
  const text = (err) => {
    try {
      const message = err && typeof err.message === 'string' ? err.message : String(err);
      return message.length > ${MAX_ERROR_CHARS} ? message.slice(0, ${MAX_ERROR_CHARS}) + '…' : message;
    } catch {
      return 'the transform threw something that cannot be shown';
    }
  };
  // The stack is the bundle's (V8 frames of ${BUNDLE_FILENAME}); the host maps it to the author's source.
  const stackOf = (err) => {
    try {
      const stack = err && typeof err.stack === 'string' ? err.stack : '';
      return stack.length > ${MAX_STACK_CHARS} ? stack.slice(0, ${MAX_STACK_CHARS}) : stack;
    } catch {
      return '';
    }
  };
  const fail = (err) => JSON.stringify({ ok: false, error: text(err) || 'the transform threw', stack: stackOf(err) });
  const done = (value) => {
    if (value === undefined) return '{"ok":true}';
    let json;
    try { json = JSON.stringify({ ok: true, value }); } catch (err) { return fail('its result is not JSON: ' + text(err)); }
    if (json.length > ${maxResultBytes}) return fail('its result is over ${maxResultBytes} characters of JSON');
    return json;
  };
  let settled;
  // Sync transforms answer at once. An async one can only wait on microtasks (the sandbox
  // has no timers or I/O), so it has settled by the time the call returns: __hookdSettled reads it.
  globalThis.__hookdCall = (json, rawBody) => {
    try {
      const input = JSON.parse(json);
      input.rawBody = rawBody;
      if (!('payload' in input)) input.payload = JSON.parse(rawBody.charCodeAt(0) === 0xfeff ? rawBody.slice(1) : rawBody);
      const value = fn(input);
      if (!value || typeof value.then !== 'function') return done(value);
      settled = '{"ok":false,"error":"the transform returned a promise that never settled"}';
      value.then((v) => { try { settled = done(v); } catch (err) { settled = fail(err); } }, (err) => { settled = fail(err); });
      return '';
    } catch (err) {
      return fail(err);
    }
  };
  globalThis.__hookdSettled = () => settled;
})();`;
}
