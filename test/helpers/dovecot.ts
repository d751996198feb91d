import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { ImapFlow } from 'imapflow';
import { makeTempDir } from './hookd-process.js';

export interface Dovecot {
  readonly port: number;
  readonly user: string;
  readonly password: string;
  /** APPENDs a raw RFC 822 message to INBOX over IMAP. */
  append(raw: string): Promise<void>;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * A real Dovecot (Debian's dovecot-imapd, installed by .ci/run) on a loopback port, with a
 * throwaway config, a passwd-file user and maildirs owned by the unprivileged dovecot user.
 */
export async function startDovecot(): Promise<Dovecot> {
  const temp = makeTempDir('hookd-dovecot-');
  const dir = temp.dir;
  const port = await freePort();
  const user = 'me@example.com';
  const password = 'imap-secret-pass';
  // Dovecot's auth and mail processes run as the dovecot user: they must reach the folder.
  chmodSync(dir, 0o755);
  for (const sub of ['run', 'state', 'home']) mkdirSync(join(dir, sub));
  writeFileSync(join(dir, 'passwd'), `${user}:{PLAIN}${password}\n`);
  const { uid, gid } = await import('node:os').then((os) => {
    const info = os.userInfo();
    return { uid: info.uid, gid: info.gid };
  });
  const mailUser = uid === 0 ? 'dovecot' : String(uid);
  const mailGroup = uid === 0 ? 'dovecot' : String(gid);
  if (uid === 0) {
    const { execFileSync } = await import('node:child_process');
    const ids = execFileSync('id', ['dovecot']).toString();
    chownSync(join(dir, 'home'), Number(/uid=(\d+)/.exec(ids)?.[1]), Number(/gid=(\d+)/.exec(ids)?.[1]));
  }
  writeFileSync(
    join(dir, 'dovecot.conf'),
    `base_dir = ${dir}/run
state_dir = ${dir}/state
log_path = ${dir}/dovecot.log
instance_name = hookd-test-${port}
protocols = imap
listen = 127.0.0.1
ssl = no
disable_plaintext_auth = no
auth_mechanisms = plain login
first_valid_uid = 1
passdb {
  driver = passwd-file
  args = scheme=PLAIN username_format=%u ${dir}/passwd
}
userdb {
  driver = static
  args = uid=${mailUser} gid=${mailGroup} home=${dir}/home/%u
}
mail_location = maildir:~/Maildir
service imap-login {
  inet_listener imap {
    address = 127.0.0.1
    port = ${port}
  }
  inet_listener imaps {
    port = 0
  }
  chroot =
}
service anvil {
  chroot =
}
`,
  );
  const child: ChildProcess = spawn('/usr/sbin/dovecot', ['-F', '-c', join(dir, 'dovecot.conf')], { stdio: 'ignore' });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const client = () =>
    new ImapFlow({ host: '127.0.0.1', port, secure: false, auth: { user, pass: password }, logger: false });
  // Ready when a login works.
  for (let i = 0; ; i++) {
    const probe = client();
    try {
      await probe.connect();
      await probe.logout();
      break;
    } catch (err) {
      if (i > 50) throw new Error(`dovecot did not start: ${(err as Error).message}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return {
    port,
    user,
    password,
    async append(raw) {
      const c = client();
      await c.connect();
      await c.append('INBOX', raw);
      await c.logout();
    },
    async stop() {
      child.kill('SIGTERM');
      await exited;
      temp.cleanup();
    },
  };
}

/** A plain RFC 822 message. */
export function rfc822(n: number, body = `Body of message ${n}.`): string {
  return [
    `From: Sender ${n} <sender${n}@example.org>`,
    'To: me@example.com',
    `Subject: Test message ${n}`,
    `Message-ID: <m${n}@example.org>`,
    'Date: Sun, 22 Nov 2026 10:00:00 +0000',
    'Content-Type: text/plain; charset=utf-8',
    '',
    body,
    '',
  ].join('\r\n');
}
