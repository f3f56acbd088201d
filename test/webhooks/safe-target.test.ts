/**
 * Where webhooks may go (docs/webhooks.md): each refusal, at registration and at delivery time, and
 * the limits of a delivery (no redirects, a timeout, a response size cap).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { isSpecialAddress, urlProblem } from '../../src/webhooks/safe-target.js';
import { MAX_RESPONSE_BYTES, send } from '../../src/webhooks/send.js';
import { startReceiver } from './receiver.js';

const STRICT = { allowPrivate: false, allowHttp: false };
const LOOSE = { allowPrivate: true, allowHttp: true, timeoutMs: 5_000 };

describe('webhook targets', () => {
  test('only https, unless http is allowed; never a user name or password', () => {
    assert.equal(urlProblem('https://hooks.example.com/p', STRICT), undefined);
    assert.match(urlProblem('http://hooks.example.com/p', STRICT) ?? '', /must use https/);
    assert.equal(urlProblem('http://hooks.example.com/p', { ...STRICT, allowHttp: true }), undefined);
    assert.match(
      urlProblem('ftp://hooks.example.com/p', { ...STRICT, allowHttp: true }) ?? '',
      /https or http/,
    );
    assert.match(urlProblem('https://user:pw@hooks.example.com/', STRICT) ?? '', /user name or password/);
    assert.match(urlProblem('not a url', STRICT) ?? '', /not a URL/);
  });

  test('loopback, private, link-local and metadata addresses are refused unless allowed', () => {
    for (const host of [
      '127.0.0.1',
      '127.8.9.10',
      '10.1.2.3',
      '172.20.0.1',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '[::1]',
      '[fe80::1]',
      '[fd00:ec2::254]',
      '[::ffff:127.0.0.1]',
      '[::ffff:169.254.169.254]',
    ]) {
      assert.match(urlProblem(`https://${host}/hook`, STRICT) ?? '', /loopback, private/, host);
      assert.equal(urlProblem(`https://${host}/hook`, { ...STRICT, allowPrivate: true }), undefined, host);
    }
    for (const address of ['93.184.215.14', '2606:4700::1111', '8.8.8.8']) {
      assert.equal(isSpecialAddress(address), false, address);
    }
  });

  test('every IPv6 form that embeds or stands for a private IPv4 address, and every special IPv6 range, is refused', () => {
    const forms = [
      '::127.0.0.1', // IPv4-compatible
      '::ffff:0:127.0.0.1', // SIIT
      '64:ff9b:1::7f00:1', // local-use NAT64
      '64:ff9b::a00:1', // NAT64 of 10.0.0.1
      '64:ff9b::a9fe:a9fe', // NAT64 of the metadata address
      '2002:7f00:1::', // 6to4 of 127.0.0.1
      '2002:808:808::1', // 6to4 of a public address: a deprecated relay, refused as well
      '2001::1', // Teredo
      '100::1', // discard-only
      '2001:db8::1', // documentation
      'fec0::1', // site-local
      '5f00::1', // segment routing
      '::', // unspecified
    ];
    for (const address of forms) {
      assert.equal(isSpecialAddress(address), true, address);
      assert.match(urlProblem(`https://[${address}]/hook`, STRICT) ?? '', /loopback, private/, address);
      assert.equal(urlProblem(`https://[${address}]/hook`, { ...STRICT, allowPrivate: true }), undefined);
    }
    // Forms that reach a public IPv4 address are judged by it.
    for (const address of ['64:ff9b::808:808', '::ffff:8.8.8.8', '2a00:1450:4001::200e']) {
      assert.equal(isSpecialAddress(address), false, address);
    }
    // IPv4 ranges beyond the private ones: documentation, benchmarking, the 6to4 relay, broadcast.
    for (const address of [
      '192.0.2.1',
      '198.51.100.1',
      '203.0.113.7',
      '198.18.0.1',
      '192.88.99.1',
      '255.255.255.255',
    ]) {
      assert.equal(isSpecialAddress(address), true, address);
    }
  });

  test('a name that resolves to such an IPv6 form is refused at delivery time, and nothing connects', async () => {
    const receiver = await startReceiver();
    try {
      for (const address of [
        '::127.0.0.1',
        '::ffff:0:127.0.0.1',
        '64:ff9b:1::7f00:1',
        '2002:7f00:1::',
        '100::1',
      ]) {
        const outcome = await send(`http://rebind.invalid:${receiver.port}/hook`, {}, '{}', {
          ...LOOSE,
          allowPrivate: false,
          resolve: async () => [{ address, family: 6 }],
        });
        assert.equal(outcome.ok, false, address);
        assert.match(outcome.error ?? '', /resolves to .*loopback, private/, address);
      }
      assert.equal(receiver.received.length, 0);
    } finally {
      await receiver.close();
    }
  });

  test('at delivery time a name is judged by the addresses it resolves to, and nothing is sent', async () => {
    const receiver = await startReceiver();
    try {
      // `localhost` passes as a name at registration; it resolves to loopback when it is delivered to.
      const url = `http://localhost:${receiver.port}/hook`;
      assert.equal(urlProblem(url, { ...STRICT, allowHttp: true }), undefined);
      const refused = await send(url, {}, '{}', { ...LOOSE, allowPrivate: false });
      assert.equal(refused.ok, false);
      assert.equal(refused.status, null);
      assert.match(refused.error ?? '', /resolves to .*loopback, private/);
      assert.equal(receiver.received.length, 0);
      const allowed = await send(url, {}, '{}', LOOSE);
      assert.equal(allowed.ok, true);
      assert.equal(receiver.received.length, 1);
    } finally {
      await receiver.close();
    }
  });

  test('the connection goes to the address that was checked, not to a second resolution (DNS rebinding)', async () => {
    const receiver = await startReceiver();
    try {
      // A name only this resolver knows: were the address not pinned, the connection would look the
      // name up again through the system and fail.
      let asked = 0;
      const resolve = async () => {
        asked += 1;
        return [{ address: '127.0.0.1', family: 4 }];
      };
      const outcome = await send(`http://rebind.invalid:${receiver.port}/hook`, {}, '{}', {
        ...LOOSE,
        resolve,
      });
      assert.equal(outcome.ok, true, outcome.error ?? '');
      assert.equal(asked, 1);
      assert.equal(receiver.received[0]?.headers.host, `rebind.invalid:${receiver.port}`);
    } finally {
      await receiver.close();
    }
  });

  test('a name with one refused address among public ones is refused', async () => {
    const resolve = async () => [
      { address: '93.184.215.14', family: 4 },
      { address: '10.0.0.8', family: 4 },
    ];
    const outcome = await send('https://mixed.invalid/hook', {}, '{}', {
      ...LOOSE,
      allowPrivate: false,
      resolve,
    });
    assert.equal(outcome.ok, false);
    assert.match(outcome.error ?? '', /resolves to 10\.0\.0\.8/);
  });

  test('redirects are not followed', async () => {
    const receiver = await startReceiver((path, res) => {
      if (path === '/hook') {
        res.writeHead(307, { location: '/elsewhere' });
      }
      res.end();
    });
    try {
      const outcome = await send(receiver.url('/hook'), {}, '{}', LOOSE);
      assert.equal(outcome.ok, false);
      assert.equal(outcome.status, 307);
      assert.equal(outcome.error, 'redirects are not followed');
      assert.deepEqual(
        receiver.received.map((r) => r.path),
        ['/hook'],
      );
    } finally {
      await receiver.close();
    }
  });

  test('a receiver that never answers fails the delivery at the timeout', async () => {
    const receiver = await startReceiver(() => {});
    try {
      const outcome = await send(receiver.url(), {}, '{}', { ...LOOSE, timeoutMs: 300 });
      assert.equal(outcome.ok, false);
      assert.equal(outcome.error, 'no answer within 300 ms');
    } finally {
      await receiver.close();
    }
  });

  test('an endless answer is cut after the size cap', async () => {
    let written = 0;
    let closed = false;
    const receiver = await startReceiver((_path, res) => {
      res.writeHead(200);
      res.on('close', () => {
        closed = true;
      });
      const chunk = Buffer.alloc(16 * 1024, 'x');
      const pump = () => {
        while (!closed && written < 100 * MAX_RESPONSE_BYTES) {
          written += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
        res.end();
      };
      pump();
    });
    try {
      const outcome = await send(receiver.url(), {}, '{}', LOOSE);
      assert.equal(outcome.status, 200);
      assert.ok(written < 100 * MAX_RESPONSE_BYTES, `the receiver was stopped after ${written} bytes`);
    } finally {
      await receiver.close();
    }
  });
});
