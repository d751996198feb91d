import type { ActionSink, RequestLogRecord } from '../actions/index.js';
import type { Cancel, Clock } from '../clock.js';
import { newId } from '../ids.js';

/**
 * The requests refused at the door, in the request log (docs/runtime.md#request-log-and-replay):
 * at most `perMinute` records per client address per minute, then one record per minute that
 * counts the rest ("57 more refused from 203.0.113.9"). A flood from many addresses is bounded
 * too: `perMinute` × 10 records a minute in all, and surplus counts kept for 256 addresses (the
 * others share one count). They are written in commits of their own, batched per event-loop
 * turn, never in the accepts' group commit: they may be lost in a crash.
 */
export interface RefusedLog {
  /**
   * Counts a refused request; `build` makes its record when it is within the caps (it is not
   * called otherwise: a flood costs a counter, not a record).
   */
  refused(client: string, answer: RefusedAnswer, build: () => RequestLogRecord): void;
  /** Writes what is held (the batch, and this minute's counts); later refusals are still counted. */
  flush(): void;
}

/** What a refused request was answered, as its minute's count keeps it. */
export interface RefusedAnswer {
  readonly status: number;
  readonly code?: string;
  readonly path: string;
}

export interface RefusedLogOptions {
  /** Records per client address per minute (`hooks.log.refusedPerMinute`). */
  readonly perMinute: number;
  readonly sink: Pick<ActionSink, 'recordRefused'>;
  readonly clock: Clock;
}

const MINUTE_MS = 60_000;
/** Records of all addresses per minute, as a multiple of the per-address cap. */
const ALL_CLIENTS_FACTOR = 10;
/** Addresses whose surplus is counted apart each minute. */
const MAX_COUNTED_CLIENTS = 256;

interface Surplus {
  count: number;
  /** `401 UNAUTHORIZED` → how many. */
  readonly answers: Map<string, number>;
  last?: RefusedAnswer;
}

interface ClientMinute {
  recorded: number;
  readonly surplus: Surplus;
}

const newSurplus = (): Surplus => ({ count: 0, answers: new Map() });

/** Creates the refused requests' part of the log. */
export function createRefusedLog(options: RefusedLogOptions): RefusedLog {
  const { perMinute, sink, clock } = options;
  const allClients = perMinute * ALL_CLIENTS_FACTOR;
  let minute = Math.floor(clock.now() / MINUTE_MS);
  let clients = new Map<string, ClientMinute>();
  let others = newSurplus();
  let recordedThisMinute = 0;
  let batch: RequestLogRecord[] = [];
  let writing = false;
  let minuteEnd: Cancel | undefined;

  const write = () => {
    writing = false;
    if (batch.length === 0) return;
    const records = batch;
    batch = [];
    sink.recordRefused(records);
  };
  const hold = (record: RequestLogRecord) => {
    batch.push(record);
    if (writing) return;
    writing = true;
    setImmediate(write);
  };
  /** The minute's counts as records, then a new minute. */
  const closeMinute = () => {
    minuteEnd?.();
    minuteEnd = undefined;
    const at = (minute + 1) * MINUTE_MS - 1;
    for (const [client, { surplus }] of clients) if (surplus.count > 0) hold(surplusRecord(at, surplus, client));
    if (others.count > 0) hold(surplusRecord(at, others));
    clients = new Map();
    others = newSurplus();
    recordedThisMinute = 0;
    minute = Math.floor(clock.now() / MINUTE_MS);
  };
  const count = (surplus: Surplus, answer: RefusedAnswer) => {
    surplus.count++;
    surplus.last = answer;
    const key = `${answer.status}${answer.code ? ` ${answer.code}` : ''}`;
    surplus.answers.set(key, (surplus.answers.get(key) ?? 0) + 1);
    // The counts are written when the minute ends, whether or not anything else arrives.
    minuteEnd ??= clock.setTimeout(closeMinute, (minute + 1) * MINUTE_MS - clock.now());
  };

  return {
    refused(client, answer, build) {
      if (Math.floor(clock.now() / MINUTE_MS) !== minute) closeMinute();
      let entry = clients.get(client);
      if (!entry) {
        if (clients.size >= MAX_COUNTED_CLIENTS) return count(others, answer);
        entry = { recorded: 0, surplus: newSurplus() };
        clients.set(client, entry);
      }
      if (entry.recorded >= perMinute || recordedThisMinute >= allClients) return count(entry.surplus, answer);
      entry.recorded++;
      recordedThisMinute++;
      hold(build());
    },
    flush() {
      closeMinute();
      write();
    },
  };
}

/** One record standing for a minute's surplus of refusals: of one address, or of the others. */
function surplusRecord(at: number, surplus: Surplus, client?: string): RequestLogRecord {
  const answers = [...surplus.answers].sort((a, b) => b[1] - a[1]);
  const [status = '0', code] = (answers[0]?.[0] ?? '0').split(' ');
  const from = client ?? 'other addresses';
  const detail = answers.map(([answer, n]) => `${answer} × ${n}`).join(', ');
  return {
    id: newId(),
    receivedAt: at,
    path: surplus.last?.path ?? '',
    url: '',
    ...(client ? { client } : {}),
    status: Number(status),
    ...(code ? { code } : {}),
    reason: `${surplus.count} more refused from ${from} in this minute (${detail})`,
    eventIds: [],
    runIds: [],
    durationMs: 0,
    headers: {},
    credentials: {},
    authenticated: false,
    body: Buffer.alloc(0),
    bodyBytes: 0,
    truncated: false,
    redacted: false,
    bodyWhole: false,
    moreRefused: surplus.count,
  };
}
