import { describe, expect, it } from 'vitest';
import { clientKeyOf } from '../../../src/ingress/client-connections.js';

describe("a connection's client (its share of server.maxConnections)", () => {
  it('is an IPv4 address itself, mapped into IPv6 or not', () => {
    expect(clientKeyOf('203.0.113.7')).toBe('203.0.113.7');
    expect(clientKeyOf('::ffff:203.0.113.7')).toBe('203.0.113.7');
  });

  it("is an IPv6 address's /64, however the address is written", () => {
    const key = clientKeyOf('2001:db8:0:1::1');
    expect(key).toBe('2001:db8:0:1::/64');
    // Every address of one /64 is one host's: an attacker cannot spread over them.
    expect(clientKeyOf('2001:0DB8:0000:0001:ffff:ffff:ffff:fffe')).toBe(key);
    expect(clientKeyOf('2001:db8:0:1:a::b%eth0')).toBe(key);
    expect(clientKeyOf('2001:db8:0:2::1')).not.toBe(key);
    expect(clientKeyOf('::1')).toBe('0:0:0:0::/64');
  });
});
