/**
 * Issue 32, release from quarantine, through a real Postfix and Trawl on PostgreSQL, Redis and
 * RabbitMQ: the filter records the original of a phishing message it quarantines, an analyst
 * releases it (API, and `trawl quarantine release` of the CLI against the same gateway), the filter
 * delivers it to its recipients through Postfix's return port once, a second release is 409, and
 * the audit log records who released it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type CliIo, run } from '@trawl/cli';
import type { QuarantineRecord } from '@trawl/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireComponent } from '../../../../test/support/require-component.ts';
import { bearer, login, PASSWORD, seedUsers } from '../../../api-gateway/test/helpers/harness.ts';
import type { SmtpFilterService } from '../../src/index.ts';
import {
  postfixAvailable,
  type SmtpSink,
  startSmtpSink,
  startTestPostfix,
  startTrawlStack,
  type TestPostfix,
  type TrawlStack,
} from '../../src/testing/index.ts';
import { client, PHISH, ports, startFilter } from '../helpers/harness.ts';

const runHere = requireComponent(
  'Postfix',
  postfixAvailable(),
  'apt-get install postfix (scripts/ci.sh does it, debconf "No configuration"); the tests start it as root',
);

const QUARANTINE = 'quarantine@trawl.test';

describe.skipIf(!runHere)('release from quarantine, through a real Postfix', () => {
  let trawl: TrawlStack;
  let sink: SmtpSink;
  let postfix: TestPostfix;
  let filter: SmtpFilterService;
  let analyst = '';
  let home = '';

  beforeAll(async () => {
    const [mailPort, httpPort, smtpPort] = await ports(3);
    sink = await startSmtpSink();
    trawl = await startTrawlStack({ mailPort, filters: { smtp: httpPort } });
    await seedUsers(trawl.store);
    analyst = (await login(trawl.gateway(), 'analyst')).access_token;
    postfix = await startTestPostfix({
      mode: 'after-queue',
      filterPort: smtpPort,
      sinkPort: sink.port,
    });
    filter = await startFilter(
      {
        mailPort,
        mode: 'after-queue',
        return_port: postfix.returnPort,
        deadline_ms: 20_000,
        policy: 'none=deliver,low=quarantine,medium=quarantine,high=quarantine,critical=quarantine',
        quarantine_address: QUARANTINE,
        gateway_url: trawl.gatewayUrl(),
      },
      { smtpPort, httpPort },
    );
    home = mkdtempSync(join(tmpdir(), 'trawl-cli-quarantine-'));
  }, 120_000);

  afterAll(async () => {
    await filter?.stop();
    await postfix?.destroy();
    await trawl?.close();
    await sink?.close();
    if (home) rmSync(home, { recursive: true, force: true });
  });

  const copies = (id: string, to?: string) =>
    sink.messages.filter(
      (m) => m.header('message-id') === `<${id}>` && (to === undefined || m.to.includes(to)),
    );

  /** Sends phishing to bob and carol; answers its quarantine record once it is in the mailbox. */
  async function quarantined(n: string): Promise<QuarantineRecord> {
    const t = client(postfix.port);
    await t.sendMail({
      envelope: {
        from: 'security@paypa1-verify.example',
        to: ['bob@example.org', 'carol@example.org'],
      },
      raw: PHISH(n),
    });
    t.close();
    const id = `phish-${n}@paypa1-verify.example`;
    await expect.poll(() => copies(id, QUARANTINE).length, { timeout: 60_000 }).toBe(1);
    expect(copies(id, 'bob@example.org')).toHaveLength(0);
    const jobId = copies(id)[0]?.header('x-trawl-job') ?? '';
    const r = await trawl.gateway().inject({
      method: 'GET',
      url: `/api/v1/quarantine?job_id=${jobId}`,
      headers: bearer(analyst),
    });
    expect(r.statusCode).toBe(200);
    const items = r.json().items as QuarantineRecord[];
    expect(items).toHaveLength(1);
    return items[0] as QuarantineRecord;
  }

  const release = (id: string) =>
    trawl.gateway().inject({
      method: 'POST',
      url: `/api/v1/quarantine/${id}/release`,
      headers: bearer(analyst),
    });

  it('records the quarantined original, held, without its content', async () => {
    const rec = await quarantined('held');
    expect(rec).toMatchObject({
      retriever: 'smtp',
      state: 'held',
      envelope_from: 'security@paypa1-verify.example',
      recipients: ['bob@example.org', 'carol@example.org'],
      subject: 'Your account has been locked - verify within 24 hours',
      released_by: null,
    });
    expect(rec).not.toHaveProperty('raw');
  });

  it('a release delivers the original to its recipients once; a second release is 409; audited', async () => {
    const rec = await quarantined('released');
    const first = await release(rec.id);
    expect(first.statusCode).toBe(200);
    expect(first.json()).toMatchObject({ id: rec.id, state: 'released', released_by: 'analyst' });
    const id = 'phish-released@paypa1-verify.example';
    await expect.poll(() => copies(id, 'bob@example.org').length, { timeout: 60_000 }).toBe(1);
    const delivered = copies(id, 'bob@example.org')[0];
    expect(delivered?.to.sort()).toEqual(['bob@example.org', 'carol@example.org']);
    expect(delivered?.header('x-trawl-released-by')).toBe('analyst');
    // delivered past the filter: no second analysis, no second quarantine
    expect(copies(id, QUARANTINE)).toHaveLength(1);

    const second = await release(rec.id);
    expect(second.statusCode).toBe(409);
    expect(second.json()).toMatchObject({ code: 'TRAWL_ERR_QUARANTINE_RELEASED' });
    await new Promise((r) => setTimeout(r, 1500));
    expect(copies(id, 'bob@example.org')).toHaveLength(1);

    const audit = await trawl.store.audit.list({ limit: 10, action: 'quarantine.release' });
    const rows = audit.items.filter((a) => a.target === rec.id);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ actor: 'analyst', outcome: 'success' });
  });

  it('`trawl quarantine release <id>` releases it; run again, it exits non-zero with the 409', async () => {
    const rec = await quarantined('cli');
    const out: string[] = [];
    const err: string[] = [];
    const io: CliIo = {
      env: { XDG_CONFIG_HOME: home },
      stdout: { write: (s: string) => out.push(s) },
      stderr: { write: (s: string) => err.push(s) },
      readStdin: async () => Buffer.from(`${PASSWORD}\n`),
      readFile: async () => Buffer.from(''),
      cwd: home,
      fetch,
      sleep: async () => {},
    };
    const url = trawl.gatewayUrl();
    expect(await run(['login', '--url', url, '--user', 'analyst', '--password-stdin'], io)).toBe(0);
    expect(await run(['quarantine', 'release', rec.id], io)).toBe(0);
    expect(out.join('')).toContain(`${rec.id}: released by analyst`);
    const id = 'phish-cli@paypa1-verify.example';
    await expect.poll(() => copies(id, 'carol@example.org').length, { timeout: 60_000 }).toBe(1);
    expect(await run(['quarantine', 'release', rec.id], io)).not.toBe(0);
    expect(err.join('')).toMatch(/released already, by analyst/);
  });
});
