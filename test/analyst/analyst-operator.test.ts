/**
 * Issue 32, an analyst's day and an operator's first week, on the real servers: a gateway
 * (PostgreSQL, Redis, RabbitMQ) and an orchestrator running the shipped default workflow with the
 * real built-in analyzers in process. The jobs list carries what an analyst triages by; an LLM that
 * is off is skipped, not failed; a user changes their own password; the allow and block lists are
 * managed through the API and the CLI and change the next verdicts through a control event.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  buildOrchestrator,
  createConfigSource,
  type Orchestrator,
  snapshotFromFiles,
} from '@trawl/analyzer-orchestrator';
import { builtinPlugins, createEmbeddedInvoker, createListCache } from '@trawl/analyzers';
import { findRepoRoot, loadServiceFiles } from '@trawl/config';
import type { Job } from '@trawl/contracts';
import { waitFor } from '@trawl/platform/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliIo, run } from '../../packages/cli/src/index.ts';
import { silent } from '../../services/analyzer-orchestrator/test/unit/helpers.ts';
import {
  bearer,
  type Gateway,
  login,
  PASSWORD,
  type RealPlatform,
  seedUsers,
  startGateway,
} from '../../services/api-gateway/test/helpers/harness.ts';
import { realPlatform } from '../../services/api-gateway/test/helpers/real-platform.ts';

const root = findRepoRoot();

/** A message as a mail host writes it: Received and Authentication-Results of mx.corp.example. */
function message(o: {
  from: string;
  name?: string;
  to?: string[];
  cc?: string[];
  subject: string;
  dmarc?: 'pass' | 'fail';
  body?: string;
  exe?: boolean;
}): string {
  const domain = o.from.split('@')[1];
  const lines = [
    `Received: from mail.${domain} (mail.${domain} [203.0.113.7])`,
    '\tby mx.corp.example (Postfix) with ESMTPS id 7QX; Tue, 03 Nov 2026 10:00:01 +0000',
    ...(o.dmarc
      ? [
          `Authentication-Results: mx.corp.example; spf=${o.dmarc} smtp.mailfrom=${domain};`,
          ` dkim=${o.dmarc} header.d=${domain}; dmarc=${o.dmarc} header.from=${domain}`,
        ]
      : []),
    `From: ${o.name ? `"${o.name}" ` : ''}<${o.from}>`,
    `To: ${(o.to ?? ['alice@corp.example']).join(', ')}`,
    ...(o.cc ? [`Cc: ${o.cc.join(', ')}`] : []),
    `Subject: ${o.subject}`,
    'Date: Tue, 03 Nov 2026 10:00:00 +0000',
    `Message-ID: <${Math.random().toString(36).slice(2)}@${domain}>`,
    'MIME-Version: 1.0',
  ];
  const text = o.body ?? 'Hello, the report for this week is ready. Regards.';
  if (!o.exe)
    return [...lines, 'Content-Type: text/plain; charset=utf-8', '', text, ''].join('\r\n');
  return [
    ...lines,
    'Content-Type: multipart/mixed; boundary="b1"',
    '',
    '--b1',
    'Content-Type: text/plain; charset=utf-8',
    '',
    text,
    '--b1',
    'Content-Type: application/octet-stream; name="update.exe"',
    'Content-Disposition: attachment; filename="update.exe"',
    'Content-Transfer-Encoding: base64',
    '',
    Buffer.from(`MZ${'\0'.repeat(62)}PE\0\0 the tool`).toString('base64'),
    '--b1--',
    '',
  ].join('\r\n');
}

/** A user's report: a forward with the original attached as message/rfc822. */
function report(reporter: string, original: string): string {
  return [
    `From: Ann Reporter <${reporter}>`,
    'To: phishing@corp.example',
    'Subject: FW: suspicious',
    'Date: Tue, 03 Nov 2026 11:00:00 +0000',
    'Message-ID: <report-1@corp.example>',
    'MIME-Version: 1.0',
    'Content-Type: multipart/mixed; boundary="r1"',
    '',
    '--r1',
    'Content-Type: text/plain',
    '',
    'This looks odd.',
    '--r1',
    'Content-Type: message/rfc822',
    '',
    original,
    '--r1--',
    '',
  ].join('\r\n');
}

describe('an analyst and an operator on PostgreSQL, Redis and RabbitMQ (issue 32)', () => {
  let p: RealPlatform;
  let gw: Gateway;
  let orch: Orchestrator;
  let base = '';
  let analyst = '';
  let admin = '';
  const lists = { cache: undefined as ReturnType<typeof createListCache> | undefined };
  const home = mkdtempSync(join(tmpdir(), 'trawl-cli-32-'));

  async function submit(raw: string, query = ''): Promise<string> {
    const r = await gw.app.inject({
      method: 'POST',
      url: `/api/v1/analyze/raw${query}`,
      headers: { ...bearer(analyst), 'content-type': 'message/rfc822' },
      payload: raw,
    });
    expect(r.statusCode, r.body).toBe(200);
    return r.json().job_id;
  }

  async function finished(id: string): Promise<Job> {
    let job: Job | undefined;
    await waitFor(async () => {
      const r = await gw.app.inject({ url: `/api/v1/analyze/${id}`, headers: bearer(analyst) });
      job = r.json();
      return job?.status === 'completed' || job?.status === 'failed';
    }, 30_000);
    return job as Job;
  }

  /** The CLI, run in-process against the listening gateway, with its own config home. */
  async function cli(args: string[], stdin = ''): Promise<{ code: number; out: string }> {
    const out: string[] = [];
    const io: CliIo = {
      env: { XDG_CONFIG_HOME: home },
      stdout: { write: (s: string) => out.push(s) },
      stderr: { write: (s: string) => out.push(s) },
      readStdin: async () => Buffer.from(stdin),
      readFile: async () => Buffer.alloc(0),
      cwd: home,
      fetch,
    };
    const code = await run([...args, '--url', base], io);
    return { code, out: out.join('') };
  }

  beforeAll(async () => {
    p = await realPlatform();
    await seedUsers(p.store);
    gw = await startGateway(p);
    await gw.app.listen({ host: '127.0.0.1', port: 0 });
    base = `http://127.0.0.1:${(gw.app.server.address() as AddressInfo).port}`;
    analyst = (await login(gw.app, 'analyst')).access_token;
    admin = (await login(gw.app, 'admin')).access_token;
    // the shipped configuration; its llm stage asked on every message (condition true), so that
    // the llm, off by default, is asked on each: it must be skipped, never failed
    const cache = createListCache(p.store.lists);
    lists.cache = cache;
    const builtins = builtinPlugins({ senders: p.store.senders, lists: cache });
    const ids = Object.keys(builtins);
    const files = loadServiceFiles(
      {
        configFile: join(root, 'config/defaults/service.yaml'),
        workflowsFile: join(root, 'config/defaults/workflows.yaml'),
      },
      { knownAnalyzers: ids, knownProviders: ids },
    );
    const workflows = files.workflows.map((w) => ({
      ...w,
      stages: w.stages.map((s) => (s.name === 'llm' ? { ...s, condition: 'true' } : s)),
    }));
    orch = buildOrchestrator({
      broker: p.broker,
      store: p.store,
      cache: p.cache,
      invoker: createEmbeddedInvoker({
        builtins,
        service: () => files.service,
        internalApiKey: undefined,
      }),
      config: createConfigSource(
        snapshotFromFiles({ version: files.version, service: files.service, workflows }),
      ),
      topology: p.topology,
      logger: silent,
      lists: cache,
      options: { prefetch: 4, reaperIntervalMs: 0 },
    });
    await orch.start();
  }, 60_000);

  afterAll(async () => {
    await orch?.stop(1000);
    await gw?.close();
    await p?.cleanup();
    rmSync(home, { recursive: true, force: true });
  });

  it('lists each job with subject, sender, recipients, reporter and top indicator', async () => {
    const hook = await p.store.webhooks.create({
      id: crypto.randomUUID(),
      url: 'http://127.0.0.1:9/hook',
      events: ['job.completed'],
      secret: 'whsec_dGVzdA',
      description: null,
      enabled: true,
      created_by: 'admin',
    });
    const plain = await submit(
      message({
        from: 'payroll@hr-portal.example',
        name: 'HR Portal',
        to: ['alice@corp.example', 'bob@corp.example'],
        cc: ['carol@corp.example', 'dave@corp.example', 'erin@corp.example'],
        subject: 'Quarterly payroll adjustment',
        body: 'Urgent: verify your account password now at https://hr-portal.example/login or it will be suspended.',
      }),
    );
    const reported = await submit(
      report(
        'ann@corp.example',
        message({ from: 'prize@lucky-draw.example', subject: 'You have won a gift card' }),
      ),
      '?report=true',
    );
    await finished(plain);
    await finished(reported);
    const r = await gw.app.inject({ url: '/api/v1/analyze?limit=10', headers: bearer(analyst) });
    expect(r.statusCode).toBe(200);
    const byId = new Map((r.json().items as Job[]).map((j) => [j.job_id, j]));
    const a = byId.get(plain);
    expect(a).toMatchObject({
      subject: 'Quarterly payroll adjustment',
      sender: 'payroll@hr-portal.example',
      sender_name: 'HR Portal',
      recipients: ['alice@corp.example', 'bob@corp.example', 'carol@corp.example'],
      recipient_count: 5,
    });
    expect(a?.top_indicator?.type).toBe(
      a?.result?.indicators.reduce((x, y) => (y.confidence > x.confidence ? y : x)).type,
    );
    expect(byId.get(reported)).toMatchObject({
      subject: 'You have won a gift card',
      sender: 'prize@lucky-draw.example',
      reporter: 'ann@corp.example',
    });
    // the reporter filter
    const mine = await gw.app.inject({
      url: '/api/v1/analyze?reporter=ann@corp.example',
      headers: bearer(analyst),
    });
    expect((mine.json().items as Job[]).map((j) => j.job_id)).toEqual([reported]);
    // trawl jobs shows them
    expect((await cli(['login', '--user', 'analyst', '--password-stdin'], PASSWORD)).code).toBe(0);
    const listed = await cli(['jobs', '--limit', '5']);
    expect(listed.code).toBe(0);
    expect(listed.out).toContain('Quarterly payroll adjustment');
    expect(listed.out).toContain('payroll@hr-portal.example');
    expect(listed.out).toContain('alice@corp.example +4');
    expect(listed.out).toContain('ann@corp.example');
    // webhook payloads carry subject, sender and reporter
    const events = await p.sql.query<{ payload: { data: Record<string, unknown> } }>(
      `SELECT payload FROM webhook_events WHERE type = 'job.completed'`,
    );
    const data = events.rows.map((e) => e.payload.data);
    expect(data).toContainEqual(
      expect.objectContaining({
        job_id: reported,
        subject: 'You have won a gift card',
        sender: 'prize@lucky-draw.example',
        reporter: 'ann@corp.example',
      }),
    );
    await p.store.webhooks.remove(hook.id);
  });

  it('skips the llm stage as not configured; the overview lists no failing analyzer', async () => {
    const id = await submit(message({ from: 'news@letters.example', subject: 'Monthly digest' }));
    const job = await finished(id);
    expect(job.status).toBe('completed');
    const llm = job.trace?.stages.find((s) => s.name === 'llm');
    expect(llm).toMatchObject({ status: 'skipped', reason: 'not configured' });
    expect(llm?.analyzers[0]).toMatchObject({
      id: 'llm',
      status: 'skipped',
      error: 'not configured',
    });
    const stats = await gw.app.inject({ url: '/api/v1/system/stats', headers: bearer(analyst) });
    const failing = stats.json().failing_analyzers as { analyzer: string }[];
    expect(failing.map((f) => f.analyzer)).not.toContain('llm');
  });

  it('answers 400 for an unknown filter, as /openapi.json declares', async () => {
    const r = await gw.app.inject({
      url: '/api/v1/analyze?no_such_filter=1',
      headers: bearer(analyst),
    });
    expect(r.statusCode).toBe(400);
    const doc = (await gw.app.inject({ url: '/openapi.json' })).json();
    expect(doc.paths['/api/v1/analyze'].get.responses['400']).toBeDefined();
  });

  it('answers 401, not 422, to the console refreshing with no session cookie', async () => {
    const r = await gw.app.inject({
      method: 'POST',
      url: '/auth/refresh',
      headers: { 'x-trawl-refresh': 'cookie', 'content-type': 'application/json' },
      payload: '{}',
    });
    expect(r.statusCode).toBe(401);
    expect(String(r.headers['set-cookie'])).toContain('trawl_session=; Max-Age=0');
  });

  it('lets a user change their own password: the rule, the current one, the audit log', async () => {
    const viewer = (await login(gw.app, 'viewer')).access_token;
    const change = (current: string, next: string, token = viewer) =>
      gw.app.inject({
        method: 'POST',
        url: '/api/v1/me/password',
        headers: bearer(token),
        payload: { current_password: current, new_password: next },
      });
    const wrong = await change('not my password at all', 'a brand new passphrase here');
    expect(wrong.statusCode).toBe(403);
    expect(wrong.json().code).toBe('TRAWL_ERR_AUTH_WRONG_PASSWORD');
    const weak = await change(PASSWORD, 'short');
    expect(weak.statusCode).toBe(422);
    expect(weak.json().errors[0].path).toBe('/new_password');
    const ok = await change(PASSWORD, 'a brand new passphrase here');
    expect(ok.statusCode).toBe(200);
    // every session ended: the old token no longer works, the new password signs in
    expect((await gw.app.inject({ url: '/auth/me', headers: bearer(viewer) })).statusCode).toBe(
      401,
    );
    await expect(login(gw.app, 'viewer')).rejects.toThrow(/401/);
    const again = (await login(gw.app, 'viewer', 'a brand new passphrase here')).access_token;
    // and back with trawl passwd (stdin: current, then new)
    expect(
      (await cli(['login', '--user', 'viewer', '--password-stdin'], 'a brand new passphrase here'))
        .code,
    ).toBe(0);
    const back = await cli(
      ['passwd', '--password-stdin'],
      `a brand new passphrase here\n${PASSWORD}\n`,
    );
    expect(back.out).toContain('password of viewer changed');
    expect(back.code).toBe(0);
    expect((await gw.app.inject({ url: '/auth/me', headers: bearer(again) })).statusCode).toBe(401);
    const auditRows = await p.sql.query<{ outcome: string }>(
      `SELECT outcome FROM audit_log WHERE action = 'user.password_change' AND target = 'viewer'`,
    );
    expect(auditRows.rows.map((r) => r.outcome).filter((o) => o === 'success')).toHaveLength(2);
  }, 180_000); // five scrypt hashes and five checks: slow on a loaded machine

  it('applies the allow and block lists an admin manages, audited, on the next message', async () => {
    const add = (body: object) =>
      gw.app.inject({
        method: 'POST',
        url: '/api/v1/lists',
        headers: bearer(admin),
        payload: body,
      });
    // analysts may read, not write
    const refused = await gw.app.inject({
      method: 'POST',
      url: '/api/v1/lists',
      headers: bearer(analyst),
      payload: { list: 'block', kind: 'sender', value: 'a@b.example' },
    });
    expect(refused.statusCode).toBe(403);
    const bad = await add({ list: 'block', kind: 'sha256', value: 'not-a-hash' });
    expect(bad.statusCode).toBe(422);
    expect(bad.json().errors[0].path).toBe('/value');
    const block = await add({
      list: 'block',
      kind: 'sender_domain',
      value: 'Invoices-Now.example',
      note: 'fake invoices campaign',
    });
    expect(block.statusCode).toBe(201);
    expect(block.json()).toMatchObject({ value: 'invoices-now.example', created_by: 'admin' });
    expect(
      (await add({ list: 'block', kind: 'sender_domain', value: 'invoices-now.example' }))
        .statusCode,
    ).toBe(409);
    expect(
      (
        await add({
          list: 'allow',
          kind: 'sender_domain',
          value: 'vendor.example',
          note: 'our supplier',
        })
      ).statusCode,
    ).toBe(201);
    // trawl lists, as an admin: add, ls
    expect((await cli(['login', '--user', 'admin', '--password-stdin'], PASSWORD)).code).toBe(0);
    const added = await cli([
      'lists',
      'add',
      'block',
      'url_host',
      'evil-files.example',
      '--note',
      'drop site',
    ]);
    expect(added.code).toBe(0);
    const ls = await cli(['lists', 'ls']);
    expect(ls.out).toContain('evil-files.example');
    expect(ls.out).toContain('invoices-now.example');
    // the orchestrator's lists were read again on the control events (no query per message)
    await waitFor(async () => (await lists.cache!.tables(3_600_000)).size === 3, 20_000);

    const blocked = await finished(
      await submit(
        message({ from: 'billing@invoices-now.example', subject: 'Invoice 4471', dmarc: 'pass' }),
      ),
    );
    expect(blocked.result?.is_phishing).toBe(true);
    expect(blocked.result?.evidence?.lists).toEqual([
      expect.objectContaining({
        list: 'block',
        kind: 'sender_domain',
        counted: true,
        note: 'fake invoices campaign',
      }),
    ]);
    expect(blocked.result?.evidence?.score?.groups.org_block?.counted).toBeGreaterThan(0);

    const allowed = await finished(
      await submit(
        message({ from: 'orders@vendor.example', subject: 'Order confirmation', dmarc: 'pass' }),
      ),
    );
    expect(allowed.result?.is_phishing).toBe(false);
    expect(allowed.result?.evidence?.score?.groups.org_allow?.counted).toBeLessThan(0);
    expect(allowed.result?.indicators.map((i) => i.type)).toContain('allow_listed');

    // anyone can write a From header: without an aligned pass the allow does not count
    const spoofed = await finished(
      await submit(
        message({ from: 'orders@vendor.example', subject: 'Order confirmation', dmarc: 'fail' }),
      ),
    );
    expect(spoofed.result?.evidence?.lists?.[0]).toMatchObject({ list: 'allow', counted: false });
    expect(spoofed.result?.evidence?.score?.groups.org_allow).toBeUndefined();

    // a block always wins over an allow
    const both = await finished(
      await submit(
        message({
          from: 'orders@vendor.example',
          subject: 'Your files',
          dmarc: 'pass',
          body: 'Download at https://dl.evil-files.example/get',
        }),
      ),
    );
    expect(both.result?.is_phishing).toBe(true);
    const allowMatch = both.result?.evidence?.lists?.find((m) => m.list === 'allow');
    expect(allowMatch).toMatchObject({
      counted: false,
      reason: 'a block matched too: a block always wins',
    });

    // an allow never excuses a malicious attachment
    const payload = await finished(
      await submit(
        message({
          from: 'orders@vendor.example',
          subject: 'Tool update',
          dmarc: 'pass',
          exe: true,
        }),
      ),
    );
    expect(payload.result?.evidence?.score?.groups.org_allow).toMatchObject({
      counted: 0,
      yielded_to: 'payload',
    });

    // removal (CLI), audited; the next message is no longer blocked
    const id = (block.json() as { id: string }).id;
    expect((await cli(['lists', 'rm', id])).code).toBe(0);
    await waitFor(async () => (await lists.cache!.tables(3_600_000)).size === 2, 20_000);
    const after = await finished(
      await submit(
        message({ from: 'billing@invoices-now.example', subject: 'Invoice 4472', dmarc: 'pass' }),
      ),
    );
    expect(after.result?.evidence?.lists).toBeUndefined();
    const audit = await gw.app.inject({ url: '/api/v1/audit?limit=50', headers: bearer(admin) });
    const actions = (audit.json().items as { action: string; details?: { value?: string } }[])
      .filter((a) => a.action.startsWith('list.'))
      .map((a) => `${a.action} ${a.details?.value}`);
    expect(actions).toEqual(
      expect.arrayContaining([
        'list.add invoices-now.example',
        'list.add vendor.example',
        'list.add evil-files.example',
        'list.remove invoices-now.example',
      ]),
    );
  });
});
