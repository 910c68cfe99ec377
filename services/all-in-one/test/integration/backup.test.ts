import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findRepoRoot, loadConfig } from '@trawl/config';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { type Embedded, startEmbedded } from '../../src/index.ts';
import { restoreBackup } from '../../src/restore.ts';

const work = mkdtempSync(join(tmpdir(), 'trawl-embedded-backup-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
const PASSWORD = 'Correct-Horse-Battery-9';

function start(dataDir: string): Promise<Embedded> {
  const cfg = loadConfig({
    env: {
      APP_ENV: 'dev',
      TRAWL_DATA_DIR: dataDir,
      TRAWL_ANALYSIS_WORKERS: '0',
      TRAWL_ADMIN_USER: 'admin',
      TRAWL_ADMIN_PASSWORD: PASSWORD,
    },
    envFile: false,
    rootDir: findRepoRoot(),
    needs: { postgres: false, rabbitmq: false, redis: false, secretKey: true },
  });
  return startEmbedded(cfg, { port: 0, logger: pino({ level: 'silent' }) });
}

async function api(
  e: Embedded,
  token: string | undefined,
  method: string,
  path: string,
  body?: unknown,
) {
  const res = await fetch(`${e.url}${path}`, {
    method,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function login(e: Embedded): Promise<string> {
  const r = await api(e, undefined, 'POST', '/auth/token', {
    grant_type: 'password',
    username: 'admin',
    password: PASSWORD,
  });
  return r.body.access_token as string;
}

describe('embedded mode: online backup (backing up needed a stop) and restore', () => {
  it('POST /api/v1/system/backup (trawl backup) copies the database while Trawl runs; the copy restores with its data', async () => {
    const data = join(work, 'data');
    const e = await start(data);
    let file: string;
    try {
      const token = await login(e);
      // something to find afterwards: a user created before the backup, while Trawl serves
      const created = await api(e, token, 'POST', '/api/v1/users', {
        username: 'alice',
        password: 'Another-Long-Password-7',
        roles: ['viewer'],
      });
      expect(created.status).toBe(201);
      const r = await api(e, token, 'POST', '/api/v1/system/backup', {});
      expect(r.status).toBe(200);
      file = r.body.file as string;
      expect(file.startsWith(join(data, 'backups'))).toBe(true);
      expect(statSync(file).size).toBe(r.body.bytes);
      expect(statSync(file).mode & 0o777).toBe(0o600);
      // Trawl still answers after the backup, and the backup is in the audit log
      expect((await fetch(`${e.url}/health`)).status).toBe(200);
      const audit = await api(e, token, 'GET', '/api/v1/audit?action=system.backup');
      expect(audit.body.items).toHaveLength(1);
    } finally {
      await e.close();
    }

    // Restore into a fresh data folder and start on it.
    const restoredDir = join(work, 'restored');
    await restoreBackup({ dataDir: restoredDir, backupFile: file, force: false });
    await expect(
      restoreBackup({ dataDir: restoredDir, backupFile: file, force: false }),
    ).rejects.toThrow(/--force/);
    const e2 = await start(restoredDir);
    try {
      const users = await api(e2, await login(e2), 'GET', '/api/v1/users');
      const names = (users.body.items as { username: string }[]).map((u) => u.username);
      expect(names).toContain('alice');
    } finally {
      await e2.close();
    }
  }, 120_000);
});
