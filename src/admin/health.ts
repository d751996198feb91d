import type { FastifyInstance } from 'fastify';
import type { BreakerView } from '../views.js';

export interface HealthRoutesOptions {
  /** This node's circuit breakers, when the runtime is attached. */
  readonly breakers?: () => readonly BreakerView[];
}

/**
 * `GET /healthz`: 200 `{ ok: true, breakers }` once the app is ready; `breakers` lists the
 * destinations whose breaker holds tries back (docs/operations.md#health-and-observability).
 * A breaker open is no reason to take the node out of a balancer: `ok` stays true.
 */
export async function healthRoutes(app: FastifyInstance, options: HealthRoutesOptions): Promise<void> {
  app.get('/healthz', async () => ({
    ok: true,
    breakers: options.breakers?.().filter((b) => b.state !== 'closed') ?? [],
  }));
}
