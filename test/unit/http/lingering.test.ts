import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { AUTH, createTestApp } from '../../helpers/app.js';

describe('lingering close of a refused body', () => {
  it('does not hold up the server closing when the client stops sending after its 413', async () => {
    const t = await createTestApp({ hooks: { maxBodyBytes: 4096 } });
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = t.app.server.address() as { port: number };
    const socket = connect(port, '127.0.0.1');
    let answer = '';
    socket.on('data', (chunk) => {
      answer += chunk.toString();
    });
    socket.on('error', () => undefined);
    // 300 KB announced, 10 KB sent, then nothing more: the client waits on its answer.
    socket.write(
      `POST /hooks/agent HTTP/1.1\r\nHost: x\r\nAuthorization: ${AUTH.authorization}\r\n` +
        'Content-Type: application/json\r\nContent-Length: 300000\r\n\r\n',
    );
    socket.write('x'.repeat(10_000));
    await expect.poll(() => answer).toContain('413');
    const closing = Date.now();
    await t.close();
    expect(Date.now() - closing).toBeLessThan(2000);
    socket.destroy();
  });
});
