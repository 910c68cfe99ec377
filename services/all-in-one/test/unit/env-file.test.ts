import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { passwordProblems } from '@trawl/api-gateway';
import { afterEach, describe, expect, it } from 'vitest';
import { writeFirstStartEnv } from '../../src/env-file.ts';

const dirs: string[] = [];
const tmp = () => {
  const d = mkdtempSync(join(tmpdir(), 'trawl-env-'));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('first-start .env', () => {
  it('is written with mode 0600, fresh secrets, an admin and APP_ENV=prod', () => {
    const dir = tmp();
    const r = writeFirstStartEnv(dir, {});
    expect(r?.adminUser).toBe('admin');
    expect(r?.adminPassword).toMatch(/^[A-Za-z0-9]{20}$/);
    // the first start's bootstrap checks it against the password rule
    expect(passwordProblems(r?.adminPassword ?? '', 'admin')).toEqual([]);
    const path = join(dir, '.env');
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const text = readFileSync(path, 'utf8');
    expect(text).toMatch(/^APP_ENV=prod$/m);
    const key = text.match(/^SECRET_KEY=(\S+)$/m)?.[1] ?? '';
    expect(Buffer.from(key, 'base64url').length).toBe(48);
    expect(text).toMatch(/^INTERNAL_API_KEY=\S{64}$/m);
    expect(text).toContain(`TRAWL_ADMIN_PASSWORD=${r?.adminPassword}`);
    // Two first starts never share secrets.
    const other = readFileSync(join(dir, '.env'), 'utf8');
    const dir2 = tmp();
    writeFirstStartEnv(dir2, {});
    expect(readFileSync(join(dir2, '.env'), 'utf8')).not.toBe(other);
  });

  it('never overwrites an existing .env', () => {
    const dir = tmp();
    writeFileSync(join(dir, '.env'), 'SECRET_KEY=mine\n');
    expect(writeFirstStartEnv(dir, {})).toBeUndefined();
    expect(readFileSync(join(dir, '.env'), 'utf8')).toBe('SECRET_KEY=mine\n');
  });

  it('leaves out what the environment already sets', () => {
    const dir = tmp();
    const r = writeFirstStartEnv(dir, {
      SECRET_KEY: 'x'.repeat(40),
      TRAWL_ADMIN_USER: 'root',
      TRAWL_ADMIN_PASSWORD: 'given',
    });
    expect(r).toEqual({ path: join(dir, '.env'), adminUser: 'root', adminPassword: undefined });
    const text = readFileSync(join(dir, '.env'), 'utf8');
    expect(text).not.toContain('SECRET_KEY=');
    expect(text).not.toContain('TRAWL_ADMIN_');
    expect(text).toContain('INTERNAL_API_KEY=');
  });
});
