import { describe, expect, it } from 'vitest';
import { holdsAnyPath } from '../../../src/ingress/json-paths.js';
import { redactPaths } from '../../../src/ingress/request-log.js';

const holds = (text: string, ...paths: string[]) =>
  holdsAnyPath(
    Buffer.from(text),
    paths.map((p) => p.split('.')),
  );

describe('a JSON text holding a value at a path', () => {
  it('finds a value at a path wherever the text has one, duplicate keys included', () => {
    expect(holds('{"card":{"number":"4111"},"card":1}', 'card.number')).toBe(true);
    expect(holds('{"card":1,"card":{"number":null}}', 'card.number')).toBe(true);
    expect(holds('\uFEFF { "a" : [ 1 , { "b" : { "c" : [ ] } } ] }', 'a.1.b.c')).toBe(true);
    expect(holds('{"a":[{"s":1},{"t":2}],"a":[]}', 'a.*.t')).toBe(true);
    expect(holds('{"\\u0063ard":{"n\\u0075mber":1}}', 'card.number')).toBe(true);
    expect(holds('{"a\\/b":{"c":1}}', 'a/b.c')).toBe(true);
  });

  it('finds none where the text has none: keys in strings, other depths, other indices', () => {
    expect(holds('{"note":"{\\"card\\":{\\"number\\":1}}","card":{"cvc":1}}', 'card.number')).toBe(false);
    expect(holds('{"x":{"card":{"number":1}}}', 'card.number')).toBe(false);
    expect(holds('{"card":[{"number":1}]}', 'card.number')).toBe(false);
    expect(holds('{"a":[{"s":1},{"t":2}]}', 'a.0.t')).toBe(false);
    expect(holds('[1,2,{"card":"]}"}]', 'card')).toBe(false);
    expect(holds('"card.number"', 'card.number')).toBe(false);
  });

  it('answers, never hanging, for a text cut short (it is never given one)', () => {
    for (const text of ['{"card":', '{"card":{"number', '[{"card":[', '{"\\u00', '{"card":{"x":"\\'])
      expect(typeof holds(text, 'card.number')).toBe('boolean');
  });

  it('agrees with the parsed payload on 2,000 generated bodies without duplicate keys', () => {
    let seed = 7;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const keys = ['card', 'number', 'items', 'secret', 'x'];
    const generate = (depth: number): unknown => {
      const r = random();
      if (depth > 3 || r < 0.3) return [1, 'str "}]', null, true, -2.5e3][Math.floor(random() * 5)];
      if (r < 0.6) return Array.from({ length: Math.floor(random() * 3) }, () => generate(depth + 1));
      const entries = keys.filter(() => random() < 0.4).map((k) => [k, generate(depth + 1)]);
      return Object.fromEntries(entries);
    };
    const paths = [
      ['card', 'number'],
      ['items', '*', 'secret'],
      ['*', '1'],
    ];
    for (let n = 0; n < 2000; n++) {
      const value = generate(0);
      const text = JSON.stringify(value, null, n % 2 ? 1 : undefined);
      expect(holdsAnyPath(Buffer.from(text), paths), text).toBe(redactPaths(value, paths).changed);
    }
  });
});
