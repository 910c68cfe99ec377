import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createGatewayLogger, gatewayLogDestination } from '../../src/logger.ts';

describe('gatewayLogDestination (buffered log of main.ts)', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it('a lone line still leaves within the flush period, without more traffic', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'trawl-gw-log-'));
    dirs.push(dir);
    const file = join(dir, 'gateway.log');
    const dest = gatewayLogDestination(file);
    const log = createGatewayLogger('info', dest);
    log.info({ job_id: 'j-1' }, 'request completed');
    const read = () => {
      try {
        return readFileSync(file, 'utf8');
      } catch {
        return '';
      }
    };
    const until = Date.now() + 5000;
    while (!read().includes('"job_id":"j-1"') && Date.now() < until)
      await new Promise((r) => setTimeout(r, 50));
    expect(JSON.parse(read().trim())).toMatchObject({
      service: 'api-gateway',
      job_id: 'j-1',
      msg: 'request completed',
    });
    (dest as unknown as { end(): void }).end();
  });
});
