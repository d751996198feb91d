import { describe, expect, it } from 'vitest';
import { toMailMessage, truncateUtf8 } from '../../../src/mail/index.js';

const options = {
  uid: 7,
  uidValidity: '1700',
  mailbox: 'INBOX',
  flags: ['\\Seen'],
  includeBody: true,
  maxBodyBytes: 20000,
};

describe('toMailMessage', () => {
  it('prefers text/plain and fills every field of the preset payload', async () => {
    const raw = Buffer.from(
      [
        'From: Ada Lovelace <ada@example.org>',
        'To: me@example.com, you@example.com',
        'Subject: Engine notes',
        'Message-ID: <n1@example.org>',
        'References: <root@example.org>',
        'Date: Sun, 22 Nov 2026 10:00:00 +0000',
        'MIME-Version: 1.0',
        'Content-Type: multipart/alternative; boundary="b"',
        '',
        '--b',
        'Content-Type: text/plain; charset=utf-8',
        '',
        'Plain   text\r\nsecond line',
        '--b',
        'Content-Type: text/html; charset=utf-8',
        '',
        '<p>HTML <b>version</b></p>',
        '--b--',
        '',
      ].join('\r\n'),
    );
    expect(await toMailMessage(raw, options)).toEqual({
      id: '1700-7',
      threadId: '<root@example.org>',
      from: '"Ada Lovelace" <ada@example.org>',
      to: 'me@example.com, you@example.com',
      subject: 'Engine notes',
      date: '2026-11-22T10:00:00.000Z',
      // The body is there: a snippet of it would say the same twice in the preset's message.
      snippet: '',
      body: 'Plain   text\nsecond line',
      bodyTruncated: false,
      attachments: [],
      labels: ['INBOX', '\\Seen'],
    });
  });

  it('states a cut body and the attachments (name, type, size) in the body the model reads', async () => {
    const raw = Buffer.from(
      [
        'From: ci@example.org',
        'Subject: Nightly report',
        'MIME-Version: 1.0',
        'Content-Type: multipart/mixed; boundary="m"',
        '',
        '--m',
        'Content-Type: text/plain; charset=utf-8',
        '',
        'x'.repeat(3000),
        '--m',
        'Content-Type: application/pdf; name="report.pdf"',
        'Content-Disposition: attachment; filename="report.pdf"',
        'Content-Transfer-Encoding: base64',
        '',
        Buffer.alloc(2048, 1).toString('base64'),
        '--m--',
        '',
      ].join('\r\n'),
    );
    const message = await toMailMessage(raw, { ...options, maxBodyBytes: 1000 });
    expect(message.bodyTruncated).toBe(true);
    expect(message.attachments).toEqual([{ filename: 'report.pdf', contentType: 'application/pdf', size: 2048 }]);
    expect(message.body).toBe(
      `${'x'.repeat(1000)}\n\n[The body was cut: 1000 bytes of 2.9 KB shown.]\n\n[Attachments, not shown: report.pdf (application/pdf, 2.0 KB).]`,
    );
    expect(message.snippet).toBe('');
  });

  it('reduces an HTML-only message to text', async () => {
    const raw = Buffer.from(
      'Subject: h\r\nContent-Type: text/html\r\n\r\n<html><body><h1>Alert</h1><p>Disk <b>full</b></p></body></html>\r\n',
    );
    const message = await toMailMessage(raw, options);
    expect(message.body).toMatch(/ALERT|Alert/);
    expect(message.body).toContain('Disk full');
    expect(message.body).not.toContain('<');
  });

  it('leaves the body out when includeBody is false', async () => {
    const message = await toMailMessage(Buffer.from('Subject: s\r\n\r\nsecret body\r\n'), {
      ...options,
      includeBody: false,
    });
    expect(message.body).toBe('');
    expect(message.snippet).toBe('secret body');
  });
});

describe('truncateUtf8', () => {
  it('cuts at a byte limit without breaking a character', () => {
    expect(truncateUtf8('abc', 3)).toEqual({ text: 'abc', truncated: false });
    expect(truncateUtf8('ääää', 5)).toEqual({ text: 'ää', truncated: true });
    expect(truncateUtf8('a😀b', 4)).toEqual({ text: 'a', truncated: true });
  });
});
