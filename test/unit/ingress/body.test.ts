import { EventEmitter } from 'node:events';
import { createServer, type IncomingMessage, request, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { type BodyOutcome, classifyContentType, parseBody as parse, readBody } from '../../../src/ingress/body.js';

/** The outcome of reading one request whose body is sent as `parts`, each written on its own. */
async function readSent(parts: readonly string[]): Promise<BodyOutcome> {
  let outcome: BodyOutcome | undefined;
  const server = createServer((req, res) => {
    void readBody(req, res, req, { limitBytes: 1 << 20 }).then((read) => {
      outcome = read;
      res.end();
    });
  });
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  try {
    const { port } = server.address() as AddressInfo;
    await new Promise<void>((done, failed) => {
      const req = request({ port, host: '127.0.0.1', method: 'POST', headers: { 'content-type': 'application/json' } });
      req.on('response', (res) => res.resume().on('end', done));
      req.on('error', failed);
      const write = (i: number) => {
        if (i === parts.length) return void req.end();
        req.write(parts[i]);
        setTimeout(() => write(i + 1), 20);
      };
      write(0);
    });
  } finally {
    server.close();
  }
  return outcome as BodyOutcome;
}

describe('classifyContentType', () => {
  it.each([
    [undefined, 'json'],
    ['application/json', 'json'],
    ['application/json; charset=utf-8', 'json'],
    ['Application/JSON', 'json'],
    ['text/plain', 'json'],
    ['application/vnd.github+json', 'json'],
    ['application/cloudevents+json; charset=UTF-8', 'json'],
    ['application/x-www-form-urlencoded', 'form'],
    ['application/xml', undefined],
    ['multipart/form-data; boundary=x', undefined],
    ['text/html', undefined],
  ])('%j → %j', (header, kind) => expect(classifyContentType(header)).toBe(kind));
});

describe('parse', () => {
  it('treats an empty or blank body as {}', () => {
    expect(parse('json', Buffer.from(''))).toMatchObject({ ok: true, body: { payload: {} } });
    expect(parse('json', Buffer.from('  \n'))).toMatchObject({ ok: true, body: { payload: {} } });
  });

  it('strips a byte-order mark', () => {
    expect(parse('json', Buffer.from('\ufeff{"a":1}'))).toMatchObject({ ok: true, body: { payload: { a: 1 } } });
  });

  it('removes __proto__ and constructor.prototype keys instead of letting them through', () => {
    const outcome = parse(
      'json',
      Buffer.from('{"a":1,"__proto__":{"polluted":true},"constructor":{"prototype":{"x":1}}}'),
    );
    expect(outcome.ok).toBe(true);
    const value = outcome.ok ? (outcome.body.payload as Record<string, unknown>) : {};
    expect(value.a).toBe(1);
    expect(Object.hasOwn(value, '__proto__')).toBe(false);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  // Plain JSON.parse takes the texts that cannot spell these keys; every spelling must still be caught.
  it.each([
    ['__proto__', '{"a":1,"nested":{"__proto__":{"polluted":true}}}'],
    ['escaped underscore', '{"a":1,"\\u005f_proto__":{"polluted":true}}'],
    ['escaped letter', '{"a":1,"__pro\\u0074o__":{"polluted":true}}'],
    ['escaped constructor', '{"a":1,"constr\\u0075ctor":{"prototype":{"polluted":true}}}'],
    ['escaped prototype', '{"a":1,"constructor":{"pr\\u006ftotype":{"polluted":true}}}'],
  ])('removes a poisoning key written as %s', (_name, text) => {
    const outcome = parse('json', Buffer.from(text));
    expect(outcome.ok).toBe(true);
    const value = outcome.ok ? (outcome.body.payload as Record<string, Record<string, unknown>>) : {};
    expect(value.a).toBe(1);
    expect(JSON.stringify(value)).not.toContain('polluted');
  });

  it('parses a text with no poisoning spelling as is', () => {
    const outcome = parse('json', Buffer.from('{"a":{"b":[1,"protocol-less",null]}}'));
    expect(outcome).toMatchObject({ ok: true, body: { payload: { a: { b: [1, 'protocol-less', null] } } } });
  });

  it('reads a body sent whole or in chunks as the same bytes and payload', async () => {
    const text = JSON.stringify({ message: 'é'.repeat(900), n: 1 });
    const whole = await readSent([text]);
    const chunked = await readSent([text.slice(0, 7), text.slice(7, 1000), text.slice(1000)]);
    for (const outcome of [whole, chunked]) {
      expect(outcome.ok && outcome.body.rawBody.toString('utf8')).toBe(text);
      expect(outcome).toMatchObject({ ok: true, body: { payload: { message: 'é'.repeat(900), n: 1 } } });
    }
  });

  it('copies a body of many chunks as they come, keeping none but the first: a byte a segment costs no object a byte', async () => {
    const text = JSON.stringify({ message: 'abcdefghij'.repeat(3000) });
    const payload = new EventEmitter() as EventEmitter & { pause(): void };
    payload.pause = () => undefined;
    const req = { headers: { 'content-type': 'application/json' } } as unknown as IncomingMessage;
    const read = readBody(req, {} as ServerResponse, payload as unknown as NodeJS.ReadableStream, {
      limitBytes: 1 << 20,
    });
    // The first chunk a buffer of its own; every later one the same buffer refilled, as a reader
    // that kept chunks (a Buffer object for each byte) would show by repeating the last.
    const bytes = Buffer.from(text);
    payload.emit('data', Buffer.from(bytes.subarray(0, 5)));
    const shared = Buffer.alloc(3);
    for (let at = 5; at < bytes.length; at += 3) {
      const part = bytes.subarray(at, at + 3);
      part.copy(shared);
      payload.emit('data', shared.subarray(0, part.length));
    }
    payload.emit('end');
    const outcome = await read;
    expect(outcome.ok && outcome.body.rawBody.toString('utf8')).toBe(text);
  });

  it('keeps the raw bytes', () => {
    const raw = Buffer.from('{"x":"é"}');
    const outcome = parse('json', raw);
    expect(outcome.ok && outcome.body.rawBody).toBe(raw);
  });

  it('refuses JSON nested deeper than 64 levels, counting brackets outside strings only', () => {
    const deep = parse('json', Buffer.from(`${'['.repeat(65)}${']'.repeat(65)}`));
    expect(!deep.ok && deep.error.message).toBe('invalid JSON body: nested deeper than 64 levels');
    expect(parse('json', Buffer.from(`${'['.repeat(64)}${']'.repeat(64)}`)).ok).toBe(true);
    expect(parse('json', Buffer.from(JSON.stringify({ s: '['.repeat(1000) }))).ok).toBe(true);
    expect(parse('json', Buffer.from(String.raw`{"s":"\\"}`)).ok).toBe(true);
  });

  it('reports invalid JSON as INVALID_JSON', () => {
    const outcome = parse('json', Buffer.from('{nope'));
    expect(outcome.ok).toBe(false);
    expect(!outcome.ok && outcome.error.code).toBe('INVALID_JSON');
  });

  // V8's messages quote the text around the error (`..."password":hunter2sec"...`): a reason gives
  // where the text goes wrong and how, in words of hookd's own, and never a piece of the text.
  it.each([
    ['{"text":"x","password":hunter2secret}', 'unexpected character at line 1, column 24'],
    ['{"password":"hunter2secret"x}', "expected ',' or '}' at line 1, column 28"],
    ['{"password":"hunter2secret"', 'unexpected end of the body at line 1, column 28'],
    ['{"password":"hunter2secret', 'a string that is never closed at line 1, column 13'],
    ['{"password":"hunter2\\\\secret\\q"}', 'a bad escape in a string at line 1, column 29'],
    ['{"password":"hunter2\u0001secret"}', 'a control character in a string (it must be escaped) at line 1, column 21'],
    ['{"password":-hunter2secret}', 'a malformed number at line 1, column 13'],
    ['{"password":1.hunter2secret}', 'a malformed number at line 1, column 14'],
    ['{"password" "hunter2secret"}', "expected ':' after a property name at line 1, column 13"],
    ['{hunter2secret:1}', 'expected a property name in double quotes at line 1, column 2'],
    ['["hunter2secret",]', 'unexpected character at line 1, column 18'],
    ['{"a":1} hunter2secret', 'unexpected text after the JSON value at line 1, column 9'],
    ['hunter2secret', 'unexpected character at line 1, column 1'],
    ['tru', 'unexpected end of the body at line 1, column 4'],
    ['{\n  "user": "ada",\n  "password": hunter2secret\n}', 'unexpected character at line 3, column 15'],
    // Columns count characters: é and 😀 (two UTF-16 units) are one each.
    ['{"\u00e9\u{1f600}":hunter2secret}', 'unexpected character at line 1, column 7'],
  ])('says where %j goes wrong, and never quotes it', (text, reason) => {
    const outcome = parse('json', Buffer.from(text));
    expect(!outcome.ok && outcome.error.message).toBe(`invalid JSON body: ${reason}`);
    const pieces = Array.from({ length: 'hunter2secret'.length - 3 }, (_, i) => 'hunter2secret'.slice(i, i + 4));
    expect(pieces.filter((piece) => reason.includes(piece))).toEqual([]);
  });

  it('refuses what JSON.parse refuses, and names a line and a column for each (5,000 generated texts)', () => {
    const atoms = [
      '{',
      '}',
      '[',
      ']',
      ',',
      ':',
      '"a"',
      '"',
      '\\',
      '1',
      '-',
      '.',
      'e',
      '0',
      'true',
      'fals',
      'null',
      ' ',
      '\n',
      'x',
      '"\\u00',
      '\u0001',
      '\u00e9',
    ];
    let seed = 7;
    const next = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    for (let i = 0; i < 5000; i++) {
      const text = Array.from({ length: 1 + next(12) }, () => atoms[next(atoms.length)]).join('');
      if (text.trim() === '') continue;
      let valid = true;
      try {
        JSON.parse(text);
      } catch {
        valid = false;
      }
      const outcome = parse('json', Buffer.from(text));
      expect([text, outcome.ok]).toEqual([text, valid]);
      if (!outcome.ok)
        expect([text, outcome.error.message]).toEqual([text, expect.stringMatching(/ at line \d+, column \d+$/)]);
    }
  });

  it('turns form bodies into an object of strings, last value winning, dropping prototype keys', () => {
    const outcome = parse('form', Buffer.from('a=1&b=two+words&a=3&__proto__=x&constructor=y'));
    expect(outcome.ok && outcome.body.payload).toEqual({ a: '3', b: 'two words' });
  });
});
