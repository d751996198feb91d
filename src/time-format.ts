/**
 * The one way hookd shows a time to people, in the CLI and the console alike: the local date
 * and time, `2026-11-27 05:01:02`, the same width on every row and sortable by eye. JSON (the
 * admin API, `--json`) keeps ISO 8601 in UTC.
 */

const pad = (n: number) => String(n).padStart(2, '0');

/** `2026-11-27 05:01:02` in the local time zone; an ISO string, epoch ms or a Date; text that is no time as it is. */
export function localTime(at: string | number | Date): string {
  const time = at instanceof Date ? at : new Date(at);
  if (Number.isNaN(time.getTime())) return String(at);
  const date = `${time.getFullYear()}-${pad(time.getMonth() + 1)}-${pad(time.getDate())}`;
  return `${date} ${pad(time.getHours())}:${pad(time.getMinutes())}:${pad(time.getSeconds())}`;
}
