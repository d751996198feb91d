/**
 * A transform's `console.*` (docs/operations.md#limits): lines go to the gateway's log under the host's own
 * level and bindings, at most 16 lines and 8 KiB per call, at the levels the logger keeps.
 */

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
 * function out of the global object (so that transform code can never call it directly)
 * and defines `console`, which formats only enabled levels and cuts each line to 8 KiB
 * before it is copied out.
 */
export function consolePrelude(enabled: readonly ConsoleLevel[]): string {
  return `
(() => {
  const log = globalThis.__hookdLog;
  delete globalThis.__hookdLog;
  const enabled = new Set(${JSON.stringify(enabled)});
  const MAX = ${MAX_CONSOLE_CHARS};
  const show = (v) => {
    try {
      const s = typeof v === 'string' ? v : JSON.stringify(v);
      return (typeof s === 'string' ? s : String(v)).slice(0, MAX);
    } catch {
      try { return String(v).slice(0, MAX); } catch { return '[unprintable]'; }
    }
  };
  const write = (level) => (...args) => {
    if (!enabled.has(level)) return;
    let text = '';
    for (const arg of args) {
      text += (text ? ' ' : '') + show(arg);
      if (text.length >= MAX) break;
    }
    log(level, text.slice(0, MAX));
  };
  globalThis.console = { log: write('info'), info: write('info'), debug: write('debug'), warn: write('warn'), error: write('error') };
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
    /** The callback the isolate's `console` calls. */
    write(level: unknown, text: unknown): void {
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
