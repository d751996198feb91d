import { hookdError } from '../errors.js';

const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** Parses a validated duration (`45s`, `10m`, `1h`, `0`) into milliseconds; 0 means off. */
export function parseDurationMs(value: string | number): number {
  if (value === 0 || value === '0') return 0;
  const match = /^([1-9][0-9]*)(ms|s|m|h|d)$/.exec(String(value));
  if (!match) throw hookdError('CONFIG_INVALID', { problems: [`not a duration: ${String(value)}`] });
  return Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS];
}
