import { describe, expect, it } from 'vitest';
import { clientAddress, compileIpList, isValidIpEntry } from '../../core/auth/ip-match.js';

describe('IP allow-lists', () => {
  it('matches single addresses and CIDR ranges, IPv4 and IPv6, and IPv4-mapped peers', () => {
    const l = compileIpList(['192.0.2.7', '10.0.0.0/8', '2001:db8::/32', '::1']);
    expect(l.has('192.0.2.7')).toBe(true);
    expect(l.has('192.0.2.8')).toBe(false);
    expect(l.has('10.255.0.1')).toBe(true);
    expect(l.has('::ffff:10.1.2.3')).toBe(true);
    expect(l.has('2001:db8:1::5')).toBe(true);
    expect(l.has('2001:db9::5')).toBe(false);
    expect(l.has('::1')).toBe(true);
    expect(l.has('not-an-ip')).toBe(false);
    expect(compileIpList(['::ffff:127.0.0.1']).has('127.0.0.1')).toBe(true);
    expect(compileIpList(['::ffff:10.0.0.0/104']).has('10.9.9.9')).toBe(true);
  });

  it('rejects malformed entries', () => {
    for (const bad of ['10.0.0.0/33', 'abc', '2001:db8::/129', '']) expect(isValidIpEntry(bad)).toBe(false);
    expect(() => compileIpList(['nope'])).toThrow(RangeError);
  });
});

describe('client address behind proxies', () => {
  const trusted = compileIpList(['127.0.0.1', '10.0.0.0/8']);
  it('ignores X-Forwarded-For from an untrusted peer', () => {
    expect(clientAddress('192.0.2.1', '203.0.113.9', trusted)).toBe('192.0.2.1');
  });
  it('takes the right-most hop that is not a trusted proxy', () => {
    expect(clientAddress('127.0.0.1', '203.0.113.9', trusted)).toBe('203.0.113.9');
    expect(clientAddress('127.0.0.1', '1.1.1.1, 203.0.113.9, 10.0.0.2', trusted)).toBe('203.0.113.9');
    expect(clientAddress('127.0.0.1', '2001:db8::1', trusted)).toBe('2001:db8::1');
  });
  it('falls back to the peer on a malformed header or an all-trusted chain', () => {
    expect(clientAddress('127.0.0.1', 'garbage', trusted)).toBe('127.0.0.1');
    expect(clientAddress('127.0.0.1', '10.0.0.3', trusted)).toBe('127.0.0.1');
    expect(clientAddress('127.0.0.1', undefined, trusted)).toBe('127.0.0.1');
    expect(clientAddress('127.0.0.1', '203.0.113.9', compileIpList([]))).toBe('127.0.0.1');
  });
});
