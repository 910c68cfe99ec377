import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { graphSettingsFromEnv } from '../../src/index.ts';

const dir = mkdtempSync(join(tmpdir(), 'trawl-graph-settings-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('TRAWL_GRAPH_* settings', () => {
  const base = {
    TRAWL_GRAPH_TENANT_ID: 'contoso',
    TRAWL_GRAPH_CLIENT_ID: 'app',
    TRAWL_GRAPH_MAILBOXES:
      ' Phishing@Contoso.example , phishing@contoso.example,abuse@contoso.example',
  };

  it('read the client secret from TRAWL_GRAPH_CLIENT_SECRET_FILE, and the defaults', () => {
    const file = join(dir, 'secret');
    writeFileSync(file, 'from-a-file\n');
    const r = graphSettingsFromEnv({ ...base, TRAWL_GRAPH_CLIENT_SECRET_FILE: file });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.value.client_secret).toBe('from-a-file');
    expect(r.value.mailboxes).toEqual(['phishing@contoso.example', 'abuse@contoso.example']);
    expect(r.value).toMatchObject({
      folder: 'inbox',
      page_size: 50,
      concurrency: 4,
      name: 'graph',
    });
  });

  it('name each problem by its variable, never quoting a secret', () => {
    const both = graphSettingsFromEnv({
      ...base,
      TRAWL_GRAPH_CLIENT_SECRET: 'hunter2-secret',
      TRAWL_GRAPH_CLIENT_SECRET_FILE: join(dir, 'missing'),
      TRAWL_GRAPH_CONCURRENCY: '9',
      TRAWL_GRAPH_VERDICT_RULES: '{"critical":{"move_to":""}}',
    });
    const text = both.ok ? '' : both.problems.join('\n');
    expect(text).toContain('TRAWL_GRAPH_CLIENT_SECRET_FILE: set TRAWL_GRAPH_CLIENT_SECRET or');
    expect(text).toContain('TRAWL_GRAPH_CONCURRENCY');
    expect(text).toContain('TRAWL_GRAPH_VERDICT_RULES');
    expect(text).not.toContain('hunter2-secret');
    const none = graphSettingsFromEnv(base);
    expect(none.ok ? '' : none.problems.join('\n')).toContain(
      'TRAWL_GRAPH_CLIENT_SECRET: set a client secret, or a certificate and its private key',
    );
  });
});
