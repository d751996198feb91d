import { Socket } from 'node:net';
import type { FromSchema } from 'json-schema-to-ts';
import type { Transporter } from 'nodemailer';
import { hookdError } from '../errors.js';
import { cut } from './http-try.js';
import { defineChannelKind, type KindEnv } from './kind.js';

const schema = {
  type: 'object',
  properties: {
    host: { type: 'string', minLength: 1 },
    port: { type: 'integer', minimum: 1, maximum: 65535, default: 587 },
    secure: { type: 'boolean', description: 'true for TLS from the start (port 465); false upgrades with STARTTLS' },
    user: { type: 'string', minLength: 1 },
    password: { type: 'string' },
    allowInsecureLogin: {
      type: 'boolean',
      description: 'send the login over a connection without TLS (a relay you trust on a private link)',
    },
    from: { type: 'string', minLength: 3 },
  },
  required: ['host', 'from'],
} as const;
type Entry = FromSchema<typeof schema> & { readonly port: number };

/** What a subject keeps of the reply's first line, at most. */
const SUBJECT_CHARS = 70;
/** How long one try may wait on the server (the runtime bounds a try at 15 s too). */
const SMTP_TIMEOUT_MS = 15_000;

/** `hookd: <the reply's first line>`, its Markdown marks left out. */
export function subjectOf(text: string): string {
  const first = text.split('\n').find((line) => line.trim() !== '') ?? '';
  const plain = first
    .replace(/^\s*(#{1,6}|>|[-*+]|\d+\.)\s+/, '')
    .replace(/[*_~`]/g, '')
    .trim();
  return `hookd: ${plain.length > SUBJECT_CHARS ? `${plain.slice(0, SUBJECT_CHARS - 1)}…` : plain}`;
}

interface SmtpFailure {
  readonly message: string;
  readonly responseCode?: number;
  readonly response?: string;
  /** The command the server refused (`STARTTLS`, `AUTH PLAIN`, …). */
  readonly command?: string;
}

/** Why a login was not sent: the server took no STARTTLS (`requireTLS`). */
const NO_STARTTLS =
  'the server takes no STARTTLS, and a login goes over TLS only (secure: true; allowInsecureLogin for a relay you trust)';

/**
 * A failed send as the runtime's retries read it: a reply of the server is refused with its code
 * (4xx, SMTP's "try again later", is retried; 5xx is not); no reply (a connection refused, a
 * timeout, a TLS failure) is CHANNEL_UNREACHABLE, retried.
 */
function classified(env: KindEnv, err: SmtpFailure) {
  const code = err.responseCode;
  if (typeof code !== 'number')
    return hookdError('CHANNEL_UNREACHABLE', { channel: env.id, reason: cut(env, err.message) });
  // A server that refuses STARTTLS for good (5xx); a 4xx is its own words, and retried.
  const description = err.command === 'STARTTLS' && code >= 500 ? NO_STARTTLS : cut(env, err.response ?? err.message);
  return hookdError('CHANNEL_REFUSED', {
    channel: env.id,
    status: code,
    description,
    transient: code < 500,
    protocol: 'SMTP',
  });
}

/** Rejects with `signal`'s reason once it aborts (the send's socket is then destroyed by its caller). */
function abortable<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

const base64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');

/**
 * `email` (docs/channels.md#email): the reply as a plain-text mail to `to` through an SMTP server
 * (nodemailer), subject `hookd: <first line>`, whole (a mail has no length limit to split at). The
 * login is optional; the password is masked.
 */
export const email = defineChannelKind<Entry>({
  keys: schema,
  problems: (entry) =>
    entry.password !== undefined && entry.user === undefined ? ['user: required with password'] : [],
  // The password as it goes over the wire too: AUTH LOGIN sends it base64-encoded alone, AUTH
  // PLAIN as base64 of NUL, user, NUL, password; a server may quote either back in its refusal.
  secrets: (entry) =>
    entry.password === undefined
      ? []
      : [entry.password, base64(entry.password), base64(`\0${entry.user ?? ''}\0${entry.password}`)],
  create: (entry, env) => {
    const secure = entry.secure ?? entry.port === 465;
    // nodemailer loads on the first mail, so that a gateway without this kind never pays for it.
    // Each send has a transport of its own over a socket of hookd's, which an abort destroys.
    const open = async (socket: Socket): Promise<Transporter> => {
      const { createTransport } = await import('nodemailer');
      return createTransport({
        socket,
        host: entry.host,
        port: entry.port,
        secure,
        // A login goes over TLS only: without TLS from the start, the server must take STARTTLS,
        // or anyone on the way who strips its offer from the EHLO reply reads the password.
        ...(entry.user === undefined ? {} : { auth: { user: entry.user, pass: entry.password ?? '' } }),
        ...(entry.user !== undefined && !secure && entry.allowInsecureLogin !== true ? { requireTLS: true } : {}),
        connectionTimeout: SMTP_TIMEOUT_MS,
        greetingTimeout: SMTP_TIMEOUT_MS,
        socketTimeout: SMTP_TIMEOUT_MS,
      });
    };
    return {
      split: (text) => [text],
      async send(message, signal) {
        const socket = new Socket();
        const mail = {
          from: entry.from,
          to: message.to,
          subject: subjectOf(message.text),
          text: message.text,
          messageId: `<${message.id}@hookd>`,
        };
        try {
          await abortable(
            open(socket).then((transporter) => transporter.sendMail(mail)),
            signal,
          );
        } catch (err) {
          throw signal.aborted ? err : classified(env, err as SmtpFailure);
        } finally {
          // Sent, failed or cut off by the try's deadline: a try the runtime gave up on must not
          // go on and deliver the mail beside its retry.
          socket.destroy();
        }
      },
    };
  },
});
