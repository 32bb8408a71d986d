/**
 * The HTTP contract of DESIGN §3, the request body: Expect: 100-continue, the size limit (step 5),
 * the read timeout (step 6), JSON parsing (step 7) and hostile input, against the real server
 * started in this process on port 0.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { assertError, assertInvalidField } from '../helpers/assert-response.js';
import { post, rawExchange } from '../helpers/http-client.js';
import { sendExpectingContinue, streamBody } from '../helpers/stream-request.js';
import { startTestGateway, type TestGateway } from '../helpers/in-process-gateway.js';
import { baseConfig, HOOK_TOKEN } from '../helpers/temp-config.js';
import { acceptedRun, assertHealthy, findEvent, HOOK_UUID_KEY, MAIN_CONFIG } from './http-contract-setup.js';

describe('HTTP contract', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway(MAIN_CONFIG);
  });
  after(async () => {
    await gw?.stop();
  });

  describe('Expect: 100-continue (what curl sends for bodies over 1 KiB)', () => {
    it('sends 100 Continue and accepts the body', async () => {
      const res = await sendExpectingContinue(
        gw.port,
        '/hooks/wake',
        JSON.stringify({ text: 'x'.repeat(5_000) }),
        HOOK_TOKEN,
      );
      assert.equal(res.continued, true);
      assert.equal(res.status, 200, res.text);
    });

    it('answers 401 without inviting the body when the token is wrong', async () => {
      const res = await sendExpectingContinue(gw.port, '/hooks/agent', JSON.stringify({ message: 'm' }), 'wrong');
      assert.equal(res.continued, false);
      assert.equal(res.status, 401, res.text);
      assert.equal((res.json as { code: string }).code, 'unauthorized');
    });
  });

  describe('body size limit (step 5)', () => {
    const FOUR_MB = 4 * 1024 * 1024;

    it('delivers 413 with its JSON body for a declared Content-Length over the limit (4 MB sent)', async () => {
      const { res, clientError } = await streamBody(gw.port, '/hooks/wake', {
        totalBytes: FOUR_MB,
        declareLength: true,
        token: HOOK_TOKEN,
      });
      assertError(res, 413, 'payload_too_large');
      assert.equal(res.headers['connection'], 'close', 'the connection closes after the answer');
      assert.equal(clientError, undefined, `no reset on the client: ${String(clientError)}`);
      await assertHealthy(gw.port);
    });

    it('delivers 413 with its JSON body for a chunked body that grows past the limit (4 MB sent)', async () => {
      const { res, clientError } = await streamBody(gw.port, '/hooks/wake', {
        totalBytes: FOUR_MB,
        declareLength: false,
        token: HOOK_TOKEN,
      });
      assertError(res, 413, 'payload_too_large');
      assert.equal(res.headers['connection'], 'close', 'the connection closes after the answer');
      assert.equal(clientError, undefined, `no reset on the client: ${String(clientError)}`);
      await assertHealthy(gw.port);
    });

    it('answers 413 without inviting the body when the client sends Expect: 100-continue', async () => {
      const result = await sendExpectingContinue(gw.port, '/hooks/wake', 'a'.repeat(FOUR_MB), HOOK_TOKEN);
      assert.equal(result.status, 413, result.text);
      assert.equal((result.json as { code: string }).code, 'payload_too_large');
      assert.equal(result.continued, false, 'the server did not send 100 Continue');
    });

    /** A valid wake body of exactly `bytes` bytes. */
    const wakeOfSize = (bytes: number): string => {
      const frame = '{"text":"padded","pad":""}';
      return `${frame.slice(0, -2)}${'p'.repeat(bytes - frame.length)}"}`;
    };

    it('accepts a body of exactly hooks.maxBodyBytes', async () => {
      const body = wakeOfSize(256 * 1024);
      assert.equal(Buffer.byteLength(body), 256 * 1024);
      const res = await post(gw.port, '/hooks/wake', body);
      assert.equal(res.status, 200, res.text);
    });

    it('returns 413 for a body one byte over hooks.maxBodyBytes', async () => {
      assertError(await post(gw.port, '/hooks/wake', wakeOfSize(256 * 1024 + 1)), 413, 'payload_too_large');
      await assertHealthy(gw.port);
    });
  });

  describe('JSON body (step 7)', () => {
    const malformed: Array<[string, string]> = [
      ['an empty body', ''],
      ['a truncated object', '{"text":'],
      ['plain text', 'wake up'],
      ['a trailing comma', '{"text":"x",}'],
      ['single quotes', "{'text':'x'}"],
    ];
    for (const [what, body] of malformed) {
      it(`returns 400 invalid_json for ${what}`, async () => {
        assertError(await post(gw.port, '/hooks/wake', body), 400, 'invalid_json');
      });
    }

    it('returns 400 invalid_json for bytes that are not UTF-8 JSON', async () => {
      assertError(await post(gw.port, '/hooks/wake', Buffer.from([0x7b, 0xff, 0xfe, 0x7d])), 400, 'invalid_json');
    });

    for (const body of ['[]', 'null', '"str"', '42', 'true', '[{"text":"x"}]']) {
      it(`returns 400 invalid_body for ${body}`, async () => {
        assertError(await post(gw.port, '/hooks/wake', body), 400, 'invalid_body');
        assertError(await post(gw.port, '/hooks/agent', body), 400, 'invalid_body');
      });
    }
  });

  describe('hostile input', () => {
    // Nesting past the JSON depth bound is refused before parsing, whether the text is valid or not.
    it('answers 400 json_too_deep to 100k unterminated nested arrays and stays up', async () => {
      assertError(await post(gw.port, '/hooks/wake', '['.repeat(100_000)), 400, 'json_too_deep');
      await assertHealthy(gw.port);
    });

    it('answers 400 json_too_deep to 100k balanced nested arrays and stays up', async () => {
      assertError(
        await post(gw.port, '/hooks/wake', `${'['.repeat(100_000)}${']'.repeat(100_000)}`),
        400,
        'json_too_deep',
      );
      await assertHealthy(gw.port);
    });

    it('answers 400 json_too_deep to a deeply nested extra field and stays up', async () => {
      const body = `{"text":"deep","x":${'['.repeat(100_000)}${']'.repeat(100_000)}}`;
      assertError(await post(gw.port, '/hooks/wake', body), 400, 'json_too_deep');
      await assertHealthy(gw.port);
    });

    it('answers 400 json_too_deep to 40k nested objects and stays up', async () => {
      const res = await post(gw.port, '/hooks/agent', `${'{"a":'.repeat(40_000)}1${'}'.repeat(40_000)}`);
      assertError(res, 400, 'json_too_deep');
      await assertHealthy(gw.port);
    });

    it('does not let a __proto__ key pollute Object.prototype', async () => {
      const res = await post(
        gw.port,
        '/hooks/wake',
        '{"__proto__":{"polluted":"yes","text":"inherited"},"text":"proto"}',
      );
      assert.equal(res.status, 200, res.text);
      assert.equal(({} as Record<string, unknown>)['polluted'], undefined);
      assert.equal((await findEvent(gw, (res.json as { eventId: string }).eventId))?.text, 'proto');
      await assertHealthy(gw.port);
    });

    it('does not read fields through a __proto__ key', async () => {
      assertInvalidField(await post(gw.port, '/hooks/wake', '{"__proto__":{"text":"inherited"}}'), 'text');
      const run = await acceptedRun(
        gw,
        '{"message":"m","__proto__":{"sessionKey":"evil:1","agentId":"ops","deliver":false}}',
      );
      assert.match(run.sessionKey, HOOK_UUID_KEY);
      assert.equal(run.agentId, 'main');
      assert.equal(run.deliver, true);
      assert.equal(({} as Record<string, unknown>)['sessionKey'], undefined);
    });

    it('does not let constructor.prototype keys pollute Object.prototype', async () => {
      const res = await post(gw.port, '/hooks/agent', '{"message":"m","constructor":{"prototype":{"polluted":"yes"}}}');
      assert.equal(res.status, 202, res.text);
      assert.equal(({} as Record<string, unknown>)['polluted'], undefined);
      await assertHealthy(gw.port);
    });

    it('survives a client that hangs up in the middle of its body', async () => {
      await new Promise<void>((resolve, reject) => {
        const socket = connect({ host: '127.0.0.1', port: gw.port }, () => {
          socket.write(
            `POST /hooks/wake HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${HOOK_TOKEN}\r\n` +
              'Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"text":"cut',
          );
          setTimeout(() => {
            socket.destroy();
            resolve();
          }, 50);
        });
        socket.on('error', reject);
      });
      await assertHealthy(gw.port);
      const res = await post(gw.port, '/hooks/wake', { text: 'after a hang-up' });
      assert.equal(res.status, 200, res.text);
    });

    it('answers a garbled request line with a JSON 400 and stays up', async () => {
      const res = await rawExchange(gw.port, 'NOT AN HTTP REQUEST\r\n\r\n');
      assertError(res, 400, 'bad_request');
      await assertHealthy(gw.port);
    });

    it('answers oversized headers with a JSON 431 and stays up', async () => {
      const res = await rawExchange(
        gw.port,
        `POST /hooks/wake HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
      );
      assertError(res, 431, 'headers_too_large');
      await assertHealthy(gw.port);
    });
  });
});

describe('HTTP contract: body read timeout (step 6)', () => {
  let gw: TestGateway;
  before(async () => {
    // The shortest body deadline the config allows.
    gw = await startTestGateway(baseConfig({ gateway: { bodyTimeoutMs: 1000, logLevel: 'warn' } }));
  });
  after(async () => {
    await gw?.stop();
  });

  const head = (extra: string): string =>
    `POST /hooks/wake HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${HOOK_TOKEN}\r\n` +
    `Content-Type: application/json\r\n${extra}\r\n`;

  it('returns 408 when only half of a declared body arrives in time', async () => {
    const res = await rawExchange(gw.port, head('Content-Length: 100\r\n'), ['{"text":"half a bo']);
    assertError(res, 408, 'body_timeout');
    assert.equal(res.headers['connection'], 'close');
  });

  it('returns 408 when a chunked body never ends', async () => {
    const res = await rawExchange(gw.port, head('Transfer-Encoding: chunked\r\n'), ['a\r\n{"text":"x\r\n']);
    assertError(res, 408, 'body_timeout');
  });

  it('returns 408 when no body byte arrives', async () => {
    const res = await rawExchange(gw.port, head('Content-Length: 20\r\n'));
    assertError(res, 408, 'body_timeout');
  });

  it('still serves after timing out slow bodies', async () => {
    await rawExchange(gw.port, head('Content-Length: 100\r\n'), ['{"te']);
    const res = await post(gw.port, '/hooks/wake', { text: 'after slow' });
    assert.equal(res.status, 200, res.text);
  });
});
