import { type AddressInfo, createServer } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import { createChannels } from '../../../src/channels/index.js';
import { loadConfig } from '../../../src/config/index.js';
import type { ChatChannel } from '../../../src/runtime/index.js';
import { type FakeService, startFakeService, startFakeSmtp } from '../../helpers/fake-service.js';

/** What each kind sends beyond the contract (docs/channels.md): its format, its fallbacks, its headers. */

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of cleanups.splice(0).reverse()) await close();
});
const channelOf = (entry: Record<string, unknown>): ChatChannel =>
  createChannels(loadConfig({ data: { channels: { out: entry } }, env: {} })).get('out') as ChatChannel;
const service = async (success: Parameters<typeof startFakeService>[0]): Promise<FakeService> => {
  const fake = await startFakeService(success);
  cleanups.push(() => fake.close());
  return fake;
};
const signal = () => AbortSignal.timeout(10_000);
const body = (fake: FakeService, i = 0) => JSON.parse(fake.requests[i]?.body ?? '{}') as Record<string, unknown>;

describe('telegram', () => {
  it('sends HTML with its characters escaped, and plain text again when Telegram cannot parse it', async () => {
    const fake = await service(() => ({ status: 200, body: { ok: true } }));
    const channel = channelOf({ kind: 'telegram', apiBase: fake.url, botToken: 'tg-token-123' });
    await channel.sendMessage('42', '# Report\n- a < b & **c**\n```sh\necho <x>\n```', signal());
    expect(body(fake)).toEqual({
      chat_id: '42',
      parse_mode: 'HTML',
      text: '<b>Report</b>\n• a &lt; b &amp; <b>c</b>\n<pre><code class="language-sh">echo &lt;x&gt;</code></pre>',
    });
    fake.answerNext({ status: 400, body: { ok: false, description: "Bad Request: can't parse entities: bad tag" } });
    await channel.sendMessage('42', 'odd **markup**', signal());
    expect(body(fake, 2)).toEqual({ chat_id: '42', text: 'odd **markup**' });
  });

  it('links only to web pages and mail addresses: a link cannot mention a user', async () => {
    const fake = await service(() => ({ status: 200, body: { ok: true } }));
    const channel = channelOf({ kind: 'telegram', apiBase: fake.url, botToken: 'tg-token-123' });
    await channel.sendMessage(
      '42',
      '[boss](tg://user?id=42) [x](javascript:go) [ok](https://x.example/?a="b"&c)',
      signal(),
    );
    expect(body(fake).text).toBe(
      '[boss](tg://user?id=42) [x](javascript:go) <a href="https://x.example/?a=&quot;b&quot;&amp;c">ok</a>',
    );
  });

  it('defaults apiBase to the public Bot API', () => {
    expect(loadConfig({ data: { channels: { tg: { kind: 'telegram', botToken: 't' } } }, env: {} })).toBeDefined();
    // The default is filled in by the kind's own keys (not the config layer): the channel is made without one.
    expect(channelOf({ kind: 'telegram', botToken: 't' }).id).toBe('out');
  });
});

describe('slack', () => {
  it('posts mrkdwn to chat.postMessage with the bot token', async () => {
    const fake = await service(() => ({ status: 200, body: { ok: true } }));
    await channelOf({ kind: 'slack', botToken: 'xoxb-1', apiBase: fake.url }).sendMessage(
      'C1',
      '**Deploy** of [api](https://x.example/a) ~~failed~~ <now>',
      signal(),
    );
    expect(fake.requests[0]).toMatchObject({ url: '/chat.postMessage', headers: { authorization: 'Bearer xoxb-1' } });
    expect(body(fake)).toEqual({ channel: 'C1', text: '*Deploy* of <https://x.example/a|api> ~failed~ &lt;now&gt;' });
  });

  it('links only to web pages and mail addresses, escaped: a link cannot mention anyone', async () => {
    const fake = await service(() => ({ status: 200, body: { ok: true } }));
    await channelOf({ kind: 'slack', botToken: 'xoxb-1', apiBase: fake.url }).sendMessage(
      'C1',
      '<!channel> [everyone](!channel) [boss](@U024BE7LH) [here](!here) [grp](!subteam^S123)\n' +
        '[a|b](https://x.example/?q=<!channel>&r=|) [mail](mailto:a@x.example)',
      signal(),
    );
    expect(body(fake).text).toBe(
      '&lt;!channel&gt; [everyone](!channel) [boss](@U024BE7LH) [here](!here) [grp](!subteam^S123)\n' +
        '<https://x.example/?q=%3C!channel%3E&amp;r=%7C|a|b> <mailto:a@x.example|mail>',
    );
  });

  it('sends to an incoming webhook without a recipient', async () => {
    const fake = await service(() => ({ status: 200, body: 'ok' }));
    const channel = channelOf({ kind: 'slack', webhookUrl: `${fake.url}/services/T/B/x` });
    expect(channel.needsRecipient).toBe(false);
    await channel.sendMessage('', 'hi', signal());
    expect(fake.requests[0]?.url).toBe('/services/T/B/x');
    expect(body(fake)).toEqual({ text: 'hi' });
  });
});

describe('discord', () => {
  it('waits for the message, posts into the thread `to` names, and pings no one', async () => {
    const fake = await service(() => ({ status: 200, body: { id: '1' } }));
    const channel = channelOf({ kind: 'discord', webhookUrl: `${fake.url}/api/webhooks/1/tok` });
    await channel.sendMessage('', '@everyone **up**', signal());
    await channel.sendMessage('998877', 'in a thread', signal());
    expect(fake.requests.map((r) => r.url)).toEqual([
      '/api/webhooks/1/tok?wait=true',
      '/api/webhooks/1/tok?wait=true&thread_id=998877',
    ]);
    expect(body(fake)).toEqual({ content: '@everyone **up**', allowed_mentions: { parse: [] } });
  });

  it('pings no one through a Markdown link either: the reply goes as written, no mention allowed', async () => {
    const fake = await service(() => ({ status: 200, body: { id: '1' } }));
    const reply = '[boss](<@123456789>) [all](@everyone) [team](<@&42>) <@123456789>';
    await channelOf({ kind: 'discord', webhookUrl: `${fake.url}/api/webhooks/1/tok` }).sendMessage('', reply, signal());
    expect(body(fake)).toEqual({ content: reply, allowed_mentions: { parse: [] } });
  });
});

describe('email', () => {
  it('sends a plain-text mail, subject hookd: and its first line, logging in when a user is set', async () => {
    const smtp = await startFakeSmtp({ user: 'hookd', password: 'pw' });
    cleanups.push(() => smtp.close());
    const entry = { kind: 'email', host: '127.0.0.1', port: smtp.port, from: 'hookd@example.test' };
    // The fake server offers no STARTTLS: a login without TLS only when the entry allows it.
    await channelOf({ ...entry, user: 'hookd', password: 'pw', allowInsecureLogin: true }).sendMessage(
      'me@example.test',
      '## Disk **full**\nsda1 at 99 %',
      signal(),
    );
    await channelOf(entry).sendMessage('me@example.test', 'no login', signal());
    expect(smtp.mails).toEqual([
      {
        from: 'hookd@example.test',
        to: ['me@example.test'],
        subject: 'hookd: Disk full',
        text: '## Disk **full**\nsda1 at 99 %',
        user: 'hookd',
      },
      { from: 'hookd@example.test', to: ['me@example.test'], subject: 'hookd: no login', text: 'no login' },
    ]);
  });

  it('never sends a login in clear text to a server that offers no STARTTLS', async () => {
    const smtp = await startFakeSmtp({ user: 'hookd', password: 'pw-never-in-clear' });
    cleanups.push(() => smtp.close());
    const entry = { kind: 'email', host: '127.0.0.1', port: smtp.port, from: 'hookd@example.test' };
    const refused = channelOf({ ...entry, user: 'hookd', password: 'pw-never-in-clear' }).sendMessage(
      'me@example.test',
      'kept',
      signal(),
    );
    await expect(refused).rejects.toThrow(/takes no STARTTLS/);
    await expect(refused).rejects.toMatchObject({ params: { transient: false } });
    expect(smtp.mails).toEqual([]);
    expect(smtp.logins).toEqual([]);
  });

  it('retries a server that refuses STARTTLS for now (454), in its own words', async () => {
    const busy = createServer((socket) => {
      socket.write('220 busy.example ESMTP\r\n');
      socket.on('data', (line) => {
        const command = line.toString().toUpperCase();
        if (command.startsWith('EHLO')) socket.write('250-busy.example\r\n250 STARTTLS\r\n');
        else if (command.startsWith('STARTTLS'))
          socket.write('454 4.7.0 TLS not available due to temporary reason\r\n');
        else if (command.startsWith('QUIT')) socket.end('221 bye\r\n');
      });
    });
    await new Promise<void>((done) => busy.listen(0, '127.0.0.1', done));
    cleanups.push(() => new Promise((done) => busy.close(() => done())));
    const port = (busy.address() as AddressInfo).port;
    const entry = { kind: 'email', host: '127.0.0.1', port, user: 'hookd', password: 'pw', from: 'hookd@example.test' };
    const refused = channelOf(entry).sendMessage('me@example.test', 'later', signal());
    await expect(refused).rejects.toThrow(/TLS not available due to temporary reason/);
    await expect(refused).rejects.toMatchObject({ params: { transient: true } });
  });

  it('masks the password in the forms a login sends it (base64), when a server quotes them back', async () => {
    const password = 'pw-SECRET-1';
    for (const method of ['PLAIN', 'LOGIN']) {
      // A server that refuses the login quoting what it was sent, as some do in their 535.
      const quoting = createServer((socket) => {
        socket.write('220 quoting.example ESMTP\r\n');
        let step = '';
        socket.on('data', (chunk) => {
          for (const line of chunk.toString().split('\r\n').filter(Boolean)) {
            const command = line.toUpperCase();
            if (command.startsWith('EHLO')) socket.write(`250-quoting.example\r\n250 AUTH ${method}\r\n`);
            else if (command.startsWith('AUTH PLAIN'))
              socket.write(`535 5.7.8 Authentication failed for ${line.slice(11)}\r\n`);
            else if (command.startsWith('AUTH LOGIN')) {
              step = 'user';
              socket.write('334 VXNlcm5hbWU6\r\n');
            } else if (step === 'user') {
              step = 'password';
              socket.write('334 UGFzc3dvcmQ6\r\n');
            } else if (step === 'password') socket.write(`535 5.7.8 Authentication failed for ${line}\r\n`);
            else if (command.startsWith('QUIT')) socket.end('221 bye\r\n');
          }
        });
      });
      await new Promise<void>((done) => quoting.listen(0, '127.0.0.1', done));
      cleanups.push(() => new Promise((done) => quoting.close(() => done())));
      const port = (quoting.address() as AddressInfo).port;
      const entry = { kind: 'email', host: '127.0.0.1', port, user: 'hookd', password, from: 'hookd@example.test' };
      const refused = await channelOf({ ...entry, allowInsecureLogin: true })
        .sendMessage('me@example.test', 'x', signal())
        .catch((err: Error) => err);
      const message = (refused as Error).message;
      expect(message, method).toMatch(/535 5\.7\.8 Authentication failed for \[REDACTED\]$/);
      for (const form of [
        password,
        Buffer.from(password).toString('base64'),
        Buffer.from(`\0hookd\0${password}`).toString('base64'),
      ])
        expect(message, method).not.toContain(form);
    }
  });

  it('closes the connection of a try its deadline cut off: it cannot deliver beside its retry', async () => {
    let open = 0;
    const silent = createServer((socket) => {
      open++;
      socket.on('close', () => open--);
    });
    await new Promise<void>((done) => silent.listen(0, '127.0.0.1', done));
    cleanups.push(() => new Promise((done) => silent.close(() => done())));
    const port = (silent.address() as AddressInfo).port;
    const entry = { kind: 'email', host: '127.0.0.1', port, from: 'hookd@example.test' };
    const cut = new AbortController();
    const sending = channelOf(entry).sendMessage('me@example.test', 'late', cut.signal);
    await expect.poll(() => open).toBe(1);
    cut.abort(new Error('try deadline'));
    await expect(sending).rejects.toThrow('try deadline');
    // Before: the connection stayed until SMTP's own 15 s greeting timeout.
    await expect.poll(() => open, { timeout: 5000 }).toBe(0);
  });
});

describe('webhook', () => {
  const secret = `whsec_${Buffer.from('a-secret-of-enough-bytes').toString('base64')}`;

  it("refuses user info in its url at config time (it would not be sent), and masks a query's token a receiver quotes", async () => {
    expect(() => channelOf({ kind: 'webhook', url: 'https://hook:s3cret@receiver.example/in', secret })).toThrow(
      /channels\.out\.url: expected an http\(s\) URL without user:password@/,
    );
    const fake = await service((request) => ({ status: 401, body: `need auth; got url ${request.url}` }));
    const refused = await channelOf({ kind: 'webhook', url: `${fake.url}/in?token=QUERYSECRET`, secret })
      .sendMessage('', 'hi', signal())
      .catch((err: Error) => err);
    expect((refused as Error).message).toMatch(/got url \/in\?\[REDACTED\]/);
    expect((refused as Error).message).not.toContain('QUERYSECRET');
    // A receiver quoting only the value, or one pair of several.
    for (const [query, answer] of [
      ['token=QUERYSECRET', 'invalid token QUERYSECRET'],
      ['token=QUERY%20SECRET&v=2', 'bad token=QUERY%20SECRET; token QUERY SECRET'],
    ]) {
      const quoting = await service(() => ({ status: 401, body: answer }));
      const quoted = await channelOf({ kind: 'webhook', url: `${quoting.url}/in?${query}`, secret })
        .sendMessage('', 'hi', signal())
        .catch((err: Error) => err);
      expect((quoted as Error).message).not.toMatch(/QUERY/);
    }
    // A query too short to be a token is left as it is: masking `a` would blot out every a.
    const short = await channelOf({ kind: 'webhook', url: `${fake.url}/in?a`, secret })
      .sendMessage('', 'hi', signal())
      .catch((err: Error) => err);
    expect((short as Error).message).toMatch(/need auth; got url \/in\?a$/);
  });

  it('posts the message signed with Standard Webhooks headers that standardwebhooks verifies', async () => {
    const fake = await service(() => ({ status: 200 }));
    const channel = channelOf({ kind: 'webhook', url: `${fake.url}/in`, secret, headers: { 'x-team': 'ops' } });
    await channel.about?.({ runId: 'r1', sessionKey: 'hook:s1' }).sendMessage('', 'Build **failed**', signal());
    const request = fake.requests[0];
    const headers = request?.headers as Record<string, string>;
    expect(headers['x-team']).toBe('ops');
    const verified = new Webhook(secret).verify(request?.body ?? '', headers);
    expect(verified).toEqual({
      type: 'message',
      channel: 'out',
      to: null,
      text: 'Build **failed**',
      runId: 'r1',
      sessionKey: 'hook:s1',
    });
    expect(headers['webhook-id']).toMatch(/^msg_/);
  });

  it('keeps webhook-id across the retries of one delivery, and gives the next delivery its own', async () => {
    const fake = await service(() => ({ status: 204 }));
    fake.answerNext({ status: 503, body: 'down' });
    const channel = channelOf({ kind: 'webhook', url: `${fake.url}/in`, secret });
    const delivery = channel.about?.({
      alert: { id: 'a1', kind: 'firing', condition: 'deliveryFailures', source: 'x' },
    });
    await expect(delivery?.sendMessage('ops', 'alert', signal())).rejects.toMatchObject({ code: 'CHANNEL_REFUSED' });
    await delivery?.sendMessage('ops', 'alert', signal());
    await channel.about?.({}).sendMessage('ops', 'alert', signal());
    const ids = fake.requests.map((r) => r.headers['webhook-id']);
    expect(ids[0]).toBe(ids[1]);
    expect(ids[2]).not.toBe(ids[0]);
    expect(body(fake, 1)).toMatchObject({ to: 'ops', alert: { id: 'a1', kind: 'firing' } });
  });

  it("gives a run's reply the same webhook-id however often it is delivered: a restart, a redelivery", async () => {
    const fake = await service(() => ({ status: 204 }));
    const about = { runId: 'r-42', sessionKey: 'hook:r-42' };
    // Two gateways' channels (a restart between two deliveries of one run), and another run.
    await channelOf({ kind: 'webhook', url: `${fake.url}/in`, secret })
      .about?.(about)
      .sendMessage('', 'done', signal());
    await channelOf({ kind: 'webhook', url: `${fake.url}/in`, secret })
      .about?.(about)
      .sendMessage('', 'done', signal());
    const other = channelOf({ kind: 'webhook', url: `${fake.url}/in`, secret });
    await other.about?.({ runId: 'r-43', sessionKey: 'hook:r-43' }).sendMessage('', 'done', signal());
    const ids = fake.requests.map((r) => r.headers['webhook-id']);
    expect(ids[0]).toMatch(/^msg_[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(ids[1]).toBe(ids[0]);
    expect(ids[2]).not.toBe(ids[0]);
  });
});
