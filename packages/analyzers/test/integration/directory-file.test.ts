import { mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Email } from '@trawl/contracts';
import { invokeProvider } from '@trawl/plugin-sdk';
import { afterAll, describe, expect, it } from 'vitest';
import { createDirectoryProvider, readDirectoryFile } from '../../src/directory/index.ts';

const dir = mkdtempSync(join(tmpdir(), 'trawl-directory-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const fixtures = new URL('../../fixtures/', import.meta.url);

const req = (sender: string, displayName: string) => ({
  email: Email.parse({
    headers: {
      subject: 'Urgent',
      sender,
      recipients: ['bruno.sample@example.org'],
      date: '2024-05-01T09:30:00Z',
      raw_headers: { from: `${displayName} <${sender}>` },
    },
    body_text: 'Are you at your desk?',
  }),
  stage: 'enrich',
  workflow_id: 'default',
});

describe('directory provider with a directory file', () => {
  it('reads the shipped YAML and CSV examples to the same directory', () => {
    const y = readDirectoryFile(new URL('directory.example.yaml', fixtures).pathname);
    const c = readDirectoryFile(new URL('directory.example.csv', fixtures).pathname);
    expect(c.people).toEqual(y.people);
    expect(y.people.filter((p) => p.vip)).toHaveLength(2);
  });

  it('answers facts from the file, reloads it when it changes, keeps the last good on a broken edit', async () => {
    const file = join(dir, 'people.yaml');
    writeFileSync(
      file,
      'internal_domains: [example.org]\npeople:\n  - {name: Alice Example, email: alice@example.org, vip: true}\n',
    );
    const provider = createDirectoryProvider();
    const settings = { directory_file: file, reload_check_seconds: 0 };
    const run = (sender: string, name: string) =>
      invokeProvider(provider, req(sender, name), settings, AbortSignal.timeout(5000));

    const first = await run('boss@freemail.example', 'Alice Example');
    expect(first.data).toMatchObject({
      configured: true,
      sender_internal: false,
      display_name_matches_person: { matched: true, vip: true, same_address: false },
    });
    expect((await run('x@freemail.example', 'Bruno Sample')).data).toMatchObject({
      display_name_matches_person: { matched: false },
      recipient_vips: [],
    });

    writeFileSync(
      file,
      'internal_domains: [example.org]\npeople:\n  - {name: Bruno Sample, email: bruno.sample@example.org, title: CFO, vip: true}\n',
    );
    utimesSync(file, new Date(), new Date(Date.now() + 5000));
    const reloaded = await run('x@freemail.example', 'Bruno Sample');
    expect(reloaded.data).toMatchObject({
      display_name_matches_person: { matched: true, name: 'Bruno Sample', title: 'CFO' },
      recipient_vips: [{ email: 'bruno.sample@example.org' }],
    });

    writeFileSync(file, 'people: [ {name: broken');
    utimesSync(file, new Date(), new Date(Date.now() + 10_000));
    const kept = await run('x@freemail.example', 'Bruno Sample');
    expect(kept.data).toMatchObject({ display_name_matches_person: { matched: true } });
  });

  it('fails clearly when the file is missing and nothing was loaded', async () => {
    await expect(
      invokeProvider(
        createDirectoryProvider(),
        req('a@b.example', 'A'),
        { directory_file: join(dir, 'missing.yaml') },
        AbortSignal.timeout(5000),
      ),
    ).rejects.toMatchObject({ code: 'TRAWL_ERR_DIRECTORY_FILE_INVALID' });
  });

  it('merges inline settings with the file', async () => {
    const r = await invokeProvider(
      createDirectoryProvider(),
      req('a@partner.example.net', 'A'),
      {
        directory_file: new URL('directory.example.yaml', fixtures).pathname,
        partner_domains: ['other-partner.example'],
      },
      AbortSignal.timeout(5000),
    );
    expect(r.data).toMatchObject({
      sender_partner: true,
      partner_domains: ['partner.example.net', 'other-partner.example'],
    });
  });
});
