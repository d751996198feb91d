// A no-latency OpenAI-compatible model server for the bench; with BENCH_MODEL_STALL=1 it never
// answers, so that the runs a scenario creates stay paused.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

const reply = JSON.stringify({ choices: [{ index: 0, message: { role: 'assistant', content: 'HEARTBEAT_OK' } }] });
const stall = process.env.BENCH_MODEL_STALL === '1';
const server = createServer((req, res) => {
  req.resume();
  if (stall) return;
  req.on('end', () => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(reply);
  });
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ port: (server.address() as AddressInfo).port })}\n`);
});
