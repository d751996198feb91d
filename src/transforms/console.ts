/**
 * A transform's `console.*` (docs/operations.md#limits): lines go to the gateway's log under the host's own
 * level and bindings, at most 16 lines and 8 KiB per call, at the levels the logger keeps.
 */
import { SAVED_BUILTINS } from './sandbox-prelude.js';

export const CONSOLE_LEVELS = ['debug', 'info', 'warn', 'error'] as const;
export type ConsoleLevel = (typeof CONSOLE_LEVELS)[number];

export const MAX_CONSOLE_LINES = 16;
export const MAX_CONSOLE_CHARS = 8192;

/** Where a transform's console lines go, as the host decides. */
export interface ConsoleSink {
  /** The levels the logger keeps: calls at other levels are not even formatted. */
  readonly enabled: readonly ConsoleLevel[];
  write(level: ConsoleLevel, text: string): void;
  /** Told once per call how many lines went over the call's budget. */
  dropped(lines: number): void;
}

/**
 * The script run in the isolate before the transform's own code: it takes the host's log
 * function out of the global object (so that transform code can never call it directly) and
 * defines `console`, which formats only enabled levels and keeps the call's budget itself: a
 * line is cut to 8 KiB before it is copied out, and once 16 lines or 8 KiB are spent nothing
 * more crosses to the host (an isolate that kept calling the host was not stopped at its time
 * limit). Only the number dropped crosses, at the first and when the call ends. It uses the
 * built-ins saved before the bundle runs, and hands `begin`/`end` to the call script (which
 * runs before the bundle too) as `__hookdConsoleCall`.
 */
export function consolePrelude(enabled: readonly ConsoleLevel[]): string {
  const on = (level: ConsoleLevel) => JSON.stringify(enabled.includes(level));
  return `
(() => {${SAVED_BUILTINS}
  const log = globalThis.__hookdLog;
  delete globalThis.__hookdLog;
  const MAX = ${MAX_CONSOLE_CHARS};
  let lines = 0;
  let chars = 0;
  let dropped = 0;
  const show = (v) => {
    try {
      const s = typeof v === 'string' ? v : stringify(v);
      return slice(typeof s === 'string' ? s : toText(v), 0, MAX);
    } catch {
      try { return slice(toText(v), 0, MAX); } catch { return '[unprintable]'; }
    }
  };
  const write = (level) => (...args) => {
    if (lines >= ${MAX_CONSOLE_LINES} || chars >= MAX) {
      if (++dropped === 1) log('dropped', dropped);
      return;
    }
    let text = '';
    for (let i = 0; i < args.length; i++) {
      text += (text ? ' ' : '') + show(args[i]);
      if (text.length >= MAX) break;
    }
    text = slice(text, 0, MAX);
    if (chars + text.length > MAX) {
      if (++dropped === 1) log('dropped', dropped);
      return;
    }
    lines++;
    chars += text.length;
    log(level, text);
  };
  const level = (name, on) => (on ? write(name) : () => {});
  globalThis.__hookdConsoleCall = {
    begin: () => { lines = 0; chars = 0; dropped = 0; },
    end: () => { if (dropped > 1) log('dropped', dropped); },
  };
  globalThis.console = {
    log: level('info', ${on('info')}),
    info: level('info', ${on('info')}),
    debug: level('debug', ${on('debug')}),
    warn: level('warn', ${on('warn')}),
    error: level('error', ${on('error')}),
  };
})();`;
}

/**
 * The host's side of the console: the level checked, the per-call budget counted. Lines are
 * held until the call ends (at most 16 lines and 8 KiB), so that a call cut off to run again
 * elsewhere leaves none.
 */
export function createConsoleBudget(sink: ConsoleSink) {
  const levels = new Set<string>(CONSOLE_LEVELS);
  let lines: [ConsoleLevel, string][] = [];
  let chars = 0;
  let dropped = 0;
  return {
    /**
     * The callback the isolate's `console` calls: a line, or how many lines it dropped so far.
     * The isolate keeps the budget; it is counted here again, in case anything goes past it.
     */
    write(level: unknown, text: unknown): void {
      if (level === 'dropped' && typeof text === 'number') {
        dropped = Math.max(dropped, text);
        return;
      }
      if (typeof level !== 'string' || !levels.has(level) || typeof text !== 'string') return;
      if (lines.length >= MAX_CONSOLE_LINES || chars + text.length > MAX_CONSOLE_CHARS) {
        dropped++;
        return;
      }
      lines.push([level as ConsoleLevel, text]);
      chars += text.length;
    },
    /** Starts a call's budget. */
    begin(): void {
      lines = [];
      chars = 0;
      dropped = 0;
    },
    /** Ends a call: writes its lines and reports what went over its budget, unless `discard`. */
    end(discard = false): void {
      const held = lines;
      lines = [];
      if (discard) return;
      for (const [level, text] of held) sink.write(level, text);
      if (dropped > 0) sink.dropped(dropped);
    },
  };
}
