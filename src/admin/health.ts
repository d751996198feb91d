import type { FastifyInstance } from 'fastify';

/** `GET /healthz`: 200 `{ ok: true }` once the app is ready. */
export async function healthRoutes(app: FastifyInstance): Promise<void> {
  app.get('/healthz', async () => ({ ok: true }));
}
