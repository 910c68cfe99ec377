import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.ts';
import { loadConfig } from '../../src/load-config.ts';

const root = mkdtempSync(join(tmpdir(), 'trawl-notify-config-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const load = (env: Record<string, string>) =>
  loadConfig({ env: { APP_ENV: 'dev', ...env }, rootDir: root, envFile: false });

function problems(env: Record<string, string>) {
  try {
    load(env);
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return (e as ConfigError).problems;
  }
  throw new Error('expected a ConfigError');
}

describe('reporter notification settings', () => {
  it('are off without TRAWL_SMTP_URL, with the shipped template', () => {
    const c = load({});
    expect(c.notify.smtpUrl).toBeUndefined();
    expect(c.notify.templateFile).toBe(
      join(root, 'config', 'defaults', 'templates', 'report-verdict.txt'),
    );
  });

  it('take an SMTP URL and a From address', () => {
    const c = load({
      TRAWL_SMTP_URL: 'smtp://u:p@relay.example.org:587',
      TRAWL_NOTIFY_FROM: 'Security Team <phishing@example.org>',
    });
    expect(c.notify.smtpUrl).toBe('smtp://u:p@relay.example.org:587');
    expect(c.notify.from).toBe('Security Team <phishing@example.org>');
  });

  it('refuse a URL without From, another scheme, or a bad From, never printing the URL', () => {
    expect(
      problems({ TRAWL_SMTP_URL: 'smtp://u:secret-pw@relay.example.org' }).map((p) => p.variable),
    ).toEqual(['TRAWL_NOTIFY_FROM']);
    const bad = problems({ TRAWL_SMTP_URL: 'http://u:secret-pw@relay.example.org' });
    expect(bad.map((p) => p.variable)).toContain('TRAWL_SMTP_URL');
    expect(JSON.stringify(bad)).not.toContain('secret-pw');
    expect(
      problems({
        TRAWL_SMTP_URL: 'smtp://relay.example.org',
        TRAWL_NOTIFY_FROM: 'not an address',
      }).map((p) => p.variable),
    ).toEqual(['TRAWL_NOTIFY_FROM']);
  });
});
