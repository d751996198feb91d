import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';

/** One request a fake service took. */
export interface RecordedRequest {
  readonly method: string;
  /** The path and query string. */
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

/** What a fake answers one request. */
export interface FakeAnswer {
  readonly status: number;
  readonly body?: string | object;
  readonly headers?: Readonly<Record<string, string>>;
}

export interface FakeService {
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  /** Every request, the scripted ones included. */
  readonly requests: RecordedRequest[];
  /** The next requests get these answers, in order; then `success` answers again. */
  answerNext(...answers: FakeAnswer[]): void;
  close(): Promise<void>;
}

/**
 * A real HTTP service on port 0 (a chat API, an incoming webhook, a receiver): it records every
 * request and answers with `success` unless answers were scripted with `answerNext`.
 */
export async function startFakeService(success: (request: RecordedRequest) => FakeAnswer): Promise<FakeService> {
  const requests: RecordedRequest[] = [];
  const scripted: FakeAnswer[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const request = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString(),
      };
      requests.push(request);
      const answer = scripted.shift() ?? success(request);
      const text = typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body ?? {});
      const type = typeof answer.body === 'string' ? 'text/plain' : 'application/json';
      res.writeHead(answer.status, { 'content-type': type, ...answer.headers }).end(text);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    answerNext: (...answers) => scripted.push(...answers),
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** One mail a fake SMTP server took. */
export interface ReceivedMail {
  readonly from: string;
  readonly to: readonly string[];
  readonly subject: string;
  readonly text: string;
  /** The login it came with, if any. */
  readonly user?: string;
}

export interface FakeSmtp {
  readonly port: number;
  readonly mails: ReceivedMail[];
  /** The user names of the logins tried (AUTH commands received), right or wrong. */
  readonly logins: string[];
  /** The next recipients are refused with these SMTP replies (`code` and text), in order. */
  refuseNext(...replies: { code: number; text: string }[]): void;
  close(): Promise<void>;
}

/**
 * A real SMTP server on port 0 (the `smtp-server` package): plain SMTP without STARTTLS, a login
 * optional (`password` checked when one is given), every mail parsed and kept.
 */
export async function startFakeSmtp(login?: { user: string; password: string }): Promise<FakeSmtp> {
  const mails: ReceivedMail[] = [];
  const logins: string[] = [];
  const refusals: { code: number; text: string }[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    allowInsecureAuth: true,
    logger: false,
    onAuth(auth, _session, done) {
      logins.push(auth.username ?? '');
      if (login && auth.username === login.user && auth.password === login.password)
        done(null, { user: auth.username });
      else done(Object.assign(new Error('Invalid username or password'), { responseCode: 535 }));
    },
    onRcptTo(_address, _session, done) {
      const refusal = refusals.shift();
      if (refusal) done(Object.assign(new Error(refusal.text), { responseCode: refusal.code }));
      else done();
    },
    onData(stream, session, done) {
      simpleParser(stream).then(
        (mail) => {
          mails.push({
            from: session.envelope.mailFrom === false ? '' : session.envelope.mailFrom.address,
            to: session.envelope.rcptTo.map((r) => r.address),
            subject: mail.subject ?? '',
            text: (mail.text ?? '').replace(/\n$/, ''),
            ...(typeof session.user === 'string' ? { user: session.user } : {}),
          });
          done();
        },
        (err: Error) => done(err),
      );
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return {
    port,
    mails,
    logins,
    refuseNext: (...replies) => refusals.push(...replies),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
