import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ApiClient } from '../../src/index.ts';

/** A 300 MB body made as it is read; `pulled` counts what the reader took. */
function hugeBody() {
  const chunk = new Uint8Array(64 * 1024).fill(0x20);
  const state = { pulled: 0, cancelled: false };
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (state.pulled >= 300 * 1024 * 1024) return controller.close();
      state.pulled += chunk.length;
      controller.enqueue(chunk);
    },
    cancel() {
      state.cancelled = true;
    },
  });
  return { stream, state };
}

describe('the CLI reads an answer of the server within a bound (issue 28)', () => {
  it('stops at maxAnswerBytes, cancels the body and says so', async () => {
    const { stream, state } = hugeBody();
    const client = new ApiClient({
      url: 'http://trawl.test',
      credentialsPath: join(tmpdir(), 'trawl-cli-bounded-none.json'),
      maxAnswerBytes: 1024 * 1024,
      fetch: (async () =>
        new Response(stream, { headers: { 'content-type': 'application/json' } })) as typeof fetch,
    });
    await expect(
      client.request('GET', '/api/v1/analyze', { anonymous: true }),
    ).rejects.toMatchObject({
      code: 'TRAWL_ERR_CLI_SERVER',
      message: 'the server answered more than 1048576 bytes',
    });
    expect(state.cancelled).toBe(true);
    expect(state.pulled).toBeLessThan(4 * 1024 * 1024);
  });
});
