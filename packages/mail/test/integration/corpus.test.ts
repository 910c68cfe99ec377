import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { TrawlError } from '@trawl/contracts';
import { describe, expect, it } from 'vitest';
import { sharedCorpus } from '../../../../test/support/require-component.ts';
import { extractUrls, parseRawEmail, sniffAttachment } from '../../src/index.ts';

const corpus = sharedCorpus() ?? '';
const present = corpus !== '';

describe.skipIf(!present)('corpus: every message parses without crashing', () => {
  it('parses all of ../shared/corpus', async () => {
    const files: { path: string; label: string }[] = [];
    for (const label of ['phishing', 'ham']) {
      for (const f of readdirSync(join(corpus, label)).sort())
        files.push({ path: join(corpus, label, f), label });
    }
    const failures: string[] = [];
    const reasons = new Map<string, number>();
    let ok = 0;
    let bytes = 0;
    let urls = 0;
    let parseMs = 0;
    const cpu0 = process.cpuUsage();
    for (const { path, label } of files) {
      const raw = readFileSync(path);
      bytes += raw.length;
      const t0 = performance.now();
      try {
        const email = await parseRawEmail(raw);
        parseMs += performance.now() - t0;
        ok++;
        urls += extractUrls(email).length;
        for (const a of email.attachments ?? []) {
          if (a.content !== undefined)
            sniffAttachment(Buffer.from(a.content, 'base64'), a.filename, a.content_type);
        }
      } catch (err) {
        parseMs += performance.now() - t0;
        if (!(err instanceof TrawlError))
          throw new Error(`${label}/${path}: crashed: ${String(err)}`);
        const reason = `${err.code} ${(err.problems ?? []).map((p) => `${p.path}: ${p.message}`).join('; ')}`;
        reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
        failures.push(`${label}/${path.split('/').pop()}: ${reason}`);
      }
    }
    const cpu = process.cpuUsage(cpu0);
    const rate = (files.length / parseMs) * 1000;
    const cpuRate = files.length / ((cpu.user + cpu.system) / 1e6);
    console.log(
      `corpus: ${ok}/${files.length} parsed, ${failures.length} failed; parse ${rate.toFixed(0)} msgs/s wall; parse+urls+sniff ${cpuRate.toFixed(0)} msgs/s of CPU (${(bytes / 1024 / 1024).toFixed(1)} MiB, ${urls} urls)`,
    );
    for (const [r, n] of reasons) console.log(`  ${n} × ${r}`);
    for (const f of failures.slice(0, 30)) console.log(`  ${f}`);
    expect(ok).toBeGreaterThanOrEqual(Math.floor(files.length * 0.98));
  });
});
