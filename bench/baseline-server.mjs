// The baseline: a bare node:http server that parses the same JSON and answers 202. Plain
// JavaScript, so that it starts the way the gateway's built JavaScript does (start-up rows).
import { createServer } from 'node:http';

const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    try {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      if (typeof body.message !== 'string') throw new Error('message required');
      res.writeHead(202, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ ok: true, runId: 'baseline' }));
    } catch {
      res.writeHead(400).end();
    }
  });
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ port: server.address().port })}\n`);
});
