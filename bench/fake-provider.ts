/**
 * The loopback fake OpenAI Chat Completions server from the tests, as its own process so its CPU
 * does not count against the gateway or the loader. Run by the runtime benchmark:
 *   BENCH_FAKE_KEY=<key> [BENCH_FAKE_DELAY_MS=<ms>] node dist/bench/fake-provider.js
 * Prints `FAKE_URL <url>` once listening, and `FAKE_SERVED <n>` (requests answered) when stopped.
 */
import { createFakeOpenAi } from '../test/fakes/fake-openai.js';

const apiKey = process.env['BENCH_FAKE_KEY'];
const delayMs = Number(process.env['BENCH_FAKE_DELAY_MS'] ?? '0');
if (apiKey === undefined || apiKey === '' || !Number.isFinite(delayMs) || delayMs < 0) {
  process.stderr.write('fake-provider: BENCH_FAKE_KEY is required; BENCH_FAKE_DELAY_MS must be >= 0\n');
  process.exit(2);
}

const fake = await createFakeOpenAi({ apiKey, ...(delayMs > 0 ? { delayMs } : {}) });
let served = 0;
// The fake keeps every request for the tests to inspect; a benchmark sends tens of thousands.
const forget = setInterval(() => {
  served += fake.requests.length;
  fake.requests.length = 0;
}, 500);
process.stdout.write(`FAKE_URL ${fake.url}\n`);

const stop = (): void => {
  clearInterval(forget);
  served += fake.requests.length;
  process.stdout.write(`FAKE_SERVED ${served}\n`);
  void fake.close().then(() => process.exit(0));
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
