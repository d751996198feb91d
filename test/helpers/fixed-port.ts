import { closeSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { until } from './http.js';

/** True while the process `pid` is alive. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Takes the lock file once no live process holds it; true when taken. */
function tryLock(path: string): boolean {
  try {
    const fd = openSync(path, 'wx');
    writeSync(fd, String(process.pid));
    closeSync(fd);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    const holder = Number(readFileSync(path, 'utf8').trim());
    // A holder that died (a killed test run) leaves its file: taken over.
    if (Number.isInteger(holder) && holder > 0 && !alive(holder)) rmSync(path, { force: true });
    return false;
  }
}

/** True when nothing listens on 127.0.0.1:`port`. */
const free = (port: number) =>
  new Promise<boolean>((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });

/**
 * Holds loopback port `port` for a test that must listen on it (the embedded default's 8787):
 * across every test process on this machine (two clones' suites side by side), one at a time,
 * and only once nothing else listens there. Resolves with the release.
 */
export async function holdFixedPort(port: number, timeoutMs = 300_000): Promise<() => void> {
  const path = join(tmpdir(), `hookd-test-port-${port}.lock`);
  await until(async () => (tryLock(path) ? true : undefined), `the lock of port ${port}`, timeoutMs);
  const release = () => rmSync(path, { force: true });
  try {
    await until(async () => ((await free(port)) ? true : undefined), `port ${port} free`, timeoutMs);
  } catch (err) {
    release();
    throw err;
  }
  return release;
}
