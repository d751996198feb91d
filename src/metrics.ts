import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { BreakerView, OverviewView } from './views.js';

/** What the gauges read at scrape time. */
export interface MetricSources {
  queueDepth(): number;
  runsByStatus(): Promise<Record<string, number>>;
  /** This node's clock against a shared store's (ms, ahead when positive); undefined on the embedded store. */
  clockSkewMs?(): number | undefined;
  /** This node's circuit breakers (docs/runtime.md#circuit-breakers). */
  breakers?(): readonly BreakerView[];
  /** Resolves once the store answers (PostgreSQL); without it, the count of runs tells. */
  ping?(): Promise<unknown>;
}

/** The Prometheus metrics of one gateway (docs/operations.md#health-and-observability). */
export interface Metrics {
  readonly registry: Registry;
  /** Counts a request answered `status` at `endpoint` (read by the counter of requests at scrape time). */
  countRequest(endpoint: string, status: number): void;
  /** Transform call durations by mapping. */
  readonly transformSeconds: Histogram<'mapping'>;
  /** Reply deliveries by outcome. */
  readonly deliveries: Counter<'status'>;
  /** Ends of the transform process (`hooks.transforms.isolation: "process"`), by how. */
  readonly transformProcessEnds: Counter<'end'>;
  /** Connects the gauges to the runtime once it exists. */
  attach(sources: MetricSources): void;
  /** Transform calls since start: how many, their mean, and the bucket bound 95 % stay within. */
  transformLatency(): Promise<TransformLatency>;
}

/** Transform calls since start and their latency (null figures: no call, or past the largest bucket). */
export type TransformLatency = NonNullable<OverviewView['transforms']>;

/**
 * How long a scrape waits for the store's count of runs: a database out of reach (30 s a query)
 * would hold the scrape past Prometheus's own time-out (10 s), and a failed scrape shows nothing.
 */
const STORE_READ_WAIT_MS = 2000;

/** Creates the metrics in a registry of their own. */
export function createMetrics(options: { storeReadWaitMs?: number } = {}): Metrics {
  const registry = new Registry();
  const attached: AttachedSources = { storeReadWaitMs: options.storeReadWaitMs ?? STORE_READ_WAIT_MS };
  const countRequest = requestCounter(registry);
  const transformSeconds = new Histogram({
    name: 'hookd_transform_duration_seconds',
    help: 'Transform call duration by mapping',
    labelNames: ['mapping'] as const,
    buckets: [0.00001, 0.00005, 0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1],
    registers: [registry],
  });
  const deliveries = new Counter({
    name: 'hookd_deliveries_total',
    help: 'Reply deliveries by outcome (sent, skipped, failed)',
    labelNames: ['status'] as const,
    registers: [registry],
  });
  const transformProcessEnds = new Counter({
    name: 'hookd_transform_process_ends_total',
    help: 'Ends of the transform process (isolation "process"): a signal, an exit code, or stopped when a call got no answer',
    labelNames: ['end'] as const,
    registers: [registry],
  });
  registerGauges(registry, attached);
  return {
    registry,
    countRequest,
    transformSeconds,
    deliveries,
    transformProcessEnds,
    attach(next) {
      attached.sources = next;
    },
    transformLatency: () => transformLatencyOf(transformSeconds),
  };
}

/**
 * The counter of requests by endpoint and status, counted in plain maps and read at scrape time:
 * prom-client's inc with labels hashes them (sorting their names, joining a key) on every request.
 */
function requestCounter(registry: Registry): (endpoint: string, status: number) => void {
  const answered = new Map<string, Map<number, number>>();
  new Counter({
    name: 'hookd_requests_total',
    help: 'HTTP requests by endpoint (wake, agent, mapped; hooks for those refused before routing; admin, health, other) and status',
    labelNames: ['endpoint', 'status'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const [endpoint, statuses] of answered)
        for (const [status, n] of statuses) this.inc({ endpoint, status: String(status) }, n);
    },
  });
  return (endpoint, status) => {
    let statuses = answered.get(endpoint);
    if (!statuses) {
      statuses = new Map();
      answered.set(endpoint, statuses);
    }
    statuses.set(status, (statuses.get(status) ?? 0) + 1);
  };
}

/** The sources the gauges read, once the runtime exists (none before: the gauges stay unset). */
export interface AttachedSources {
  sources?: MetricSources;
  readonly storeReadWaitMs: number;
  /** The count of runs this scrape reads: both gauges that show it share one read. */
  reading?: Promise<Record<string, number> | undefined>;
}

/** What `read` resolves with, or undefined when it failed or took longer than `waitMs`. */
function within<T>(read: () => Promise<T>, waitMs: number): Promise<T | undefined> {
  return new Promise<T | undefined>((resolve) => {
    const late = setTimeout(() => resolve(undefined), waitMs);
    late.unref();
    const settle = (value: T | undefined) => {
      clearTimeout(late);
      resolve(value);
    };
    read().then(settle, () => settle(undefined));
  });
}

/** The store's count of runs by status (which may come from a cache), or undefined as `within` says. */
function runsNow(attached: AttachedSources): Promise<Record<string, number> | undefined> {
  const sources = attached.sources;
  if (!sources) return Promise.resolve(undefined);
  attached.reading ??= within(() => sources.runsByStatus(), attached.storeReadWaitMs).finally(() => {
    attached.reading = undefined;
  });
  return attached.reading;
}

/** True when the store answered within the wait: its ping, else the count of runs. */
async function storeUp(attached: AttachedSources): Promise<boolean> {
  const ping = attached.sources?.ping;
  if (!ping) return (await runsNow(attached)) !== undefined;
  return (await within(async () => ping().then(() => true), attached.storeReadWaitMs)) === true;
}

/** The gauges read at scrape time from `attached.sources`: queue depth, runs by status, clock skew, breakers. */
export function registerGauges(registry: Registry, attached: AttachedSources): void {
  new Gauge({
    name: 'hookd_run_queue_depth',
    help: 'Agent runs queued or executing',
    registers: [registry],
    collect() {
      if (attached.sources) this.set(attached.sources.queueDepth());
    },
  });
  new Gauge({
    name: 'hookd_runs',
    help: 'Agent runs in the store by status',
    labelNames: ['status'] as const,
    registers: [registry],
    async collect() {
      if (!attached.sources) return;
      const counts = await runsNow(attached);
      this.reset();
      for (const [status, n] of Object.entries(counts ?? {})) this.set({ status }, n);
    },
  });
  new Gauge({
    name: 'hookd_store_up',
    help: '1 when the store answered within 2 s (PostgreSQL: a SELECT 1, never a cached count), 0 when it failed or was late',
    registers: [registry],
    async collect() {
      if (attached.sources) this.set((await storeUp(attached)) ? 1 : 0);
    },
  });
  new Gauge({
    name: 'hookd_clock_skew_seconds',
    help: "This node's clock minus the shared database's (PostgreSQL only; expiry and leases follow the database's)",
    registers: [registry],
    collect() {
      const skewMs = attached.sources?.clockSkewMs?.();
      if (skewMs !== undefined) this.set(skewMs / 1000);
    },
  });
  new Gauge({
    name: 'hookd_breaker_open',
    help: "1 while a destination's circuit breaker holds its tries back (open or half-open), 0 when closed; target: provider/model or a channel's id",
    labelNames: ['target'] as const,
    registers: [registry],
    collect() {
      const breakers = attached.sources?.breakers?.();
      if (!breakers) return;
      this.reset();
      for (const b of breakers) this.set({ target: b.target }, b.state === 'closed' ? 0 : 1);
    },
  });
}

/** A histogram's calls, their mean, and the bucket bound 95 % stay within, summed over every label. */
export async function transformLatencyOf(histogram: Histogram<string>): Promise<TransformLatency> {
  let calls = 0;
  let seconds = 0;
  // Cumulative counts per bucket bound, summed over every mapping.
  const within = new Map<number, number>();
  for (const { metricName, labels, value } of (await histogram.get()).values) {
    if (metricName?.endsWith('_count')) calls += value;
    else if (metricName?.endsWith('_sum')) seconds += value;
    else {
      const le = (labels as { le?: number | string }).le;
      if (typeof le === 'number') within.set(le, (within.get(le) ?? 0) + value);
    }
  }
  if (calls === 0) return { calls, meanMs: null, p95AtMostMs: null };
  const bound = [...within].sort(([a], [b]) => a - b).find(([, n]) => n >= calls * 0.95)?.[0];
  return { calls, meanMs: (seconds / calls) * 1000, p95AtMostMs: bound === undefined ? null : bound * 1000 };
}
