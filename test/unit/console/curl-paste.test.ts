import { execFile } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { curlOf } from '../../../console/curl.js';
import { makeTempDir, ROOT } from '../../helpers/hookd-process.js';

/**
 * "Copy as curl" pasted into an interactive bash through a real pty (docs/console.md#copy-as-curl),
 * with bracketed paste off and on: a body holding DEL or an ESC `[201~` (the end of a bracketed
 * paste) must neither run a command of its own nor reach the server as anything but its bytes.
 */

const PASTE = join(ROOT, 'test/helpers/paste.py');

let temp: ReturnType<typeof makeTempDir>;
let server: Server;
let received: Buffer[];
let origin: string;

beforeEach(async () => {
  temp = makeTempDir();
  received = [];
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push(Buffer.concat(chunks));
      res.end('{"ok":true}');
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterEach(async () => {
  await new Promise((done) => server.close(done));
  temp.cleanup();
});

/** Pastes `command` into bash through a pty (`mode`: bracketed paste on or off); what the terminal showed. */
async function paste(mode: 'on' | 'off', command: string): Promise<string> {
  const file = join(temp.dir, `command-${mode}.txt`);
  writeFileSync(file, command);
  const { stdout } = await promisify(execFile)('python3', [PASTE, mode, file, temp.dir], { timeout: 90_000 });
  return stdout;
}

describe('Copy as curl, pasted into bash', () => {
  for (const mode of ['off', 'on'] as const) {
    it(`runs nothing but curl and sends the body's exact bytes, bracketed paste ${mode}`, async () => {
      const bodies = [
        `${'\u007f'.repeat(7)};touch ${join(temp.dir, 'pwned-by-del')};#{"text":"seven DELs"}`,
        `\u001b[201~${'\u007f'.repeat(7)};touch ${join(temp.dir, 'pwned-by-esc')};#`,
        `{"text":"\u009b31m é 🎉\\t!! 'quoted' $(id) \`id\`\u202e\\u0000","tab":"\t","nl":"\n"}`,
      ];
      for (const body of bodies) {
        const command = curlOf({ url: '/hooks/note', headers: {}, credentials: {}, body }, origin);
        // Nothing the terminal would act on is in the copied text.
        // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it looks for
        expect(command).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202e]/);
        const shown = await paste(mode, command);
        expect(shown.trimEnd().endsWith('done'), shown).toBe(true);
      }
      expect(existsSync(join(temp.dir, 'pwned-by-del'))).toBe(false);
      expect(existsSync(join(temp.dir, 'pwned-by-esc'))).toBe(false);
      expect(received.map((b) => b.toString('hex'))).toEqual(bodies.map((b) => Buffer.from(b).toString('hex')));
    });
  }
});
