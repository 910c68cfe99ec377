import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = resolve(import.meta.dirname, '../../../..');
const trawl = join(root, 'packages/cli/bin/trawl.mjs');

const eml = (from: string, subject: string, body: string) =>
  `From: ${from}\r\nTo: team@example.org\r\nSubject: ${subject}\r\nDate: Mon, 1 Jan 2024 10:00:00 +0000\r\n\r\n${body}\r\n`;

describe('trawl learn (embedded PGlite store)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'trawl-learn-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    APP_ENV: 'dev',
    TRAWL_DATA_DIR: join(dir, 'data'),
  };
  delete env.DATABASE_URL;
  const learn = async (...args: string[]) =>
    (await run(process.execPath, [trawl, 'learn', ...args], { cwd: root, env })).stdout;

  it('learns a folder of .eml and an mbox, then exports and imports its state', async () => {
    const phishing = join(dir, 'phishing');
    mkdirSync(phishing);
    for (let i = 0; i < 3; i++)
      writeFileSync(
        join(phishing, `${i}.eml`),
        eml(
          'security@bank-verify.example',
          `Verify your account ${i}`,
          'Your mailbox is suspended: verify your password now',
        ),
      );
    const mbox = join(dir, 'ham.mbox');
    writeFileSync(
      mbox,
      [
        'From alice@example.org Mon Jan  1 10:00:00 2024',
        eml(
          'alice@example.org',
          'Minutes',
          'The minutes of the meeting.\r\n>From the notes: nothing else.',
        ),
        'From bob@example.org Mon Jan  1 11:00:00 2024',
        eml('bob@example.org', 'Agenda', 'The agenda for Thursday.'),
      ].join('\n'),
    );
    const trained = JSON.parse(await learn('--phishing', phishing, '--legitimate', mbox, '--json'));
    expect(trained.learnt).toEqual({ phishing: 3, legitimate: 2 });
    expect(trained.totals).toMatchObject({ phishing: 3, ham: 2, tokenizer: 'osb5-v1' });

    const file = join(dir, 'state.jsonl');
    const exported = JSON.parse(await learn('--export', file, '--json'));
    expect(exported).toMatchObject({ phishing_messages: 3, ham_messages: 2 });
    const lines = readFileSync(file, 'utf8').trim().split('\n');
    expect(lines).toHaveLength(1 + exported.tokens);

    // learning more, then importing the export, gives the exported state back
    await learn('--legitimate', mbox);
    expect(JSON.parse(await learn('--status', '--json'))).toMatchObject({ phishing: 3, ham: 4 });
    const imported = JSON.parse(await learn('--import', file, '--json'));
    expect(imported).toMatchObject({ phishing: 3, ham: 2 });
    const again = join(dir, 'again.jsonl');
    await learn('--export', again);
    const body = (f: string) => readFileSync(f, 'utf8').trim().split('\n').slice(1);
    expect(body(again)).toEqual(body(file));
  }, 180_000);

  it('refuses a file that is not an exported state, with its code', async () => {
    const bad = join(dir, 'bad.jsonl');
    writeFileSync(bad, '{"format":"other"}\n');
    await expect(learn('--import', bad)).rejects.toMatchObject({
      stderr: expect.stringContaining('TRAWL_ERR_CLASSIFIER_BAD_STATE'),
    });
  }, 60_000);
});
