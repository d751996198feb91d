import { describe, expect, it } from 'vitest';
import { rfc822 } from '../helpers/dovecot.js';
import { isHeartbeat, lastUser, startFakeModel } from '../helpers/fake-model.js';
import { makeTempDir, runHookd, startHookd } from '../helpers/hookd-process.js';
import { cleanups, dovecot, env, mailConfig, mailTestsRun, receiver, watchProcess } from '../helpers/mail-watch.js';

describe.skipIf(!mailTestsRun)('the mail watch flow across restarts and failures, against a real Dovecot', () => {
  it('delivers every message once across a watcher killed and restarted between appends', async () => {
    const imap = await dovecot();
    const model = await startFakeModel((r) => (isHeartbeat(r) ? 'HEARTBEAT_OK' : 'noted'));
    cleanups.push(() => model.close());
    const temp = makeTempDir();
    cleanups.push(temp.cleanup);
    const gateway = await startHookd({
      config: mailConfig(imap, { modelUrl: model.url }),
      args: ['--no-mail-watch'],
      env,
    });
    cleanups.push(() => gateway.stop());
    const config = mailConfig(imap, { modelUrl: model.url, hookUrl: `${gateway.url}/hooks/mail` });
    let watcher = await watchProcess(temp.dir, config);
    await imap.append(rfc822(1));
    await expect.poll(() => model.requests.filter((r) => !isHeartbeat(r)).length, { timeout: 15_000 }).toBe(1);
    watcher.child.kill('SIGKILL');
    await watcher.exited;
    await imap.append(rfc822(2));
    await imap.append(rfc822(3));
    watcher = await watchProcess(temp.dir, config);
    cleanups.push(() => watcher.stop());
    // A second watcher on the same file is refused while this one runs (before: both watched).
    const second = await runHookd(['mail', 'watch'], { cwd: temp.dir, env: { ...process.env, ...env } });
    expect(second.code).toBe(1);
    expect(second.stderr).toMatch(/^hookd: process \d+ watches this mailbox already/m);
    await imap.append(rfc822(4));
    await expect.poll(() => model.requests.filter((r) => !isHeartbeat(r)).length, { timeout: 15_000 }).toBe(4);
    // The watcher posts in UID order, one batch after another: a message appended now reaches
    // the model after any message it would deliver twice.
    await imap.append(rfc822(5));
    const subjects = () =>
      model.requests.filter((r) => !isHeartbeat(r)).map((r) => /Subject: (Test message \d)/.exec(lastUser(r))?.[1]);
    await expect.poll(() => subjects().includes('Test message 5'), { timeout: 15_000 }).toBe(true);
    expect(subjects().sort()).toEqual([
      'Test message 1',
      'Test message 2',
      'Test message 3',
      'Test message 4',
      'Test message 5',
    ]);
  });

  it('keeps retrying while the hook answers 500, then delivers each message once; truncates a 1 MB body', async () => {
    const imap = await dovecot();
    const hook = await receiver(2);
    const temp = makeTempDir();
    cleanups.push(temp.cleanup);
    const watcher = await watchProcess(
      temp.dir,
      mailConfig(imap, { hookUrl: hook.url, watch: { maxBodyBytes: 20000 } }),
    );
    cleanups.push(() => watcher.stop());
    await imap.append(rfc822(1));
    await imap.append(rfc822(2, `${'ä'.repeat(600_000)}`));
    await expect.poll(() => hook.ids().length, { timeout: 20_000 }).toBe(2);
    expect(hook.refusedCount()).toBe(2);
    const messages = hook.accepted.flatMap((a) => a.body.messages);
    expect(new Set(hook.ids()).size).toBe(2);
    const big = messages.find((m) => m.subject === 'Test message 2');
    expect(big?.bodyTruncated).toBe(true);
    // The text is cut at maxBodyBytes; a note after it tells the model how much it sees.
    const [text, note] = (big?.body ?? '').split('\n\n');
    expect(Buffer.byteLength(text ?? '')).toBeLessThanOrEqual(20000);
    expect(Buffer.byteLength(text ?? '')).toBeGreaterThan(19990);
    expect(note).toMatch(/^\[The body was cut: 19\.\d KB of 1171\.9 KB shown\.\]$/);
    expect(messages.find((m) => m.subject === 'Test message 1')).toMatchObject({
      bodyTruncated: false,
      body: 'Body of message 1.',
    });
  });
});
