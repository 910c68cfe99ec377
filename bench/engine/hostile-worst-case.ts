/**
 * What a hostile message under the scale-out analysis pool's threshold costs on the consumer
 * thread (`pnpm exec tsx bench/engine/hostile-worst-case.ts`; issue 15, docs/benchmarks.md). A
 * scale-out orchestrator sends only messages of 256 Ki characters or more to its analysis worker;
 * smaller ones run on the thread that consumes the queue, where no deadline can cut them. This
 * generates messages just under that size, each shaped to make one part of the analysis work hard,
 * parses each, and runs it through the orchestrator's job path (createJobRunner over
 * createEmbeddedInvoker without a pool, the `default` workflow of config/defaults), BENCH_RUNS
 * times (default 20) on a fresh Email object each time. Prints the first run (cold code) and the
 * median of the rest in ms, parse included, beside the baseline measured in the same run: a
 * typical 3 KB phishing message through the same path.
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  createConfigSource,
  createJobRunner,
  snapshotFromFiles,
} from '@trawl/analyzer-orchestrator';
import { builtinPlugins, createEmbeddedInvoker } from '@trawl/analyzers';
import { loadServiceFiles } from '@trawl/config';
import type { Email } from '@trawl/contracts';
import { parseRawEmail } from '@trawl/mail';

const root = fileURLToPath(new URL('../../', import.meta.url));
const RUNS = Math.max(2, Number(process.env.BENCH_RUNS ?? 20));
/** Just under the pool's threshold (LARGE_MESSAGE_CHARS in the orchestrator's main.ts). */
const SIZE = 250 * 1024;

const files = loadServiceFiles({
  configFile: join(root, 'config/defaults/service.yaml'),
  workflowsFile: join(root, 'config/defaults/workflows.yaml'),
});
const snapshot = snapshotFromFiles({
  version: files.version,
  service: files.service,
  workflows: files.workflows,
  analyzerVersions: files.analyzerVersions,
});
const invoker = createEmbeddedInvoker({
  builtins: builtinPlugins({}),
  service: () => files.service,
  internalApiKey: undefined,
});
const runner = createJobRunner({ invoker, config: createConfigSource(snapshot) });

function message(name: string, contentType: string, body: string): Buffer {
  const head = [
    'From: "Account Team" <service@secure-bank-alerts.example>',
    'To: victim@corp.example',
    `Subject: ${name}`,
    `Message-ID: <${name}@secure-bank-alerts.example>`,
    'Date: Mon, 1 Jan 2024 00:00:00 +0000',
    'MIME-Version: 1.0',
    `Content-Type: ${contentType}; charset=utf-8`,
  ].join('\r\n');
  return Buffer.from(`${head}\r\n\r\n${body}\r\n`);
}

const repeat = (n: number, f: (i: number) => string) =>
  Array.from({ length: n }, (_, i) => f(i)).join('');
const LURE = ['verify', 'account', 'password', 'bank', 'urgent', 'click', 'suspended', '$1,000.00'];

const cases: Array<[string, Buffer]> = [
  [
    'baseline: typical phishing, 3 KB',
    message(
      'baseline',
      'text/html',
      `<p>Dear customer, your account will be suspended. Verify now at
       <a href="http://paypa1-security.example/login">www.paypal.com</a>.</p>${'<p>Regards</p>'.repeat(150)}`,
    ),
  ],
  [
    '20,000 links with brand-like text',
    message(
      'links',
      'text/html',
      repeat(
        20_000,
        (i) => `<a href="http://h${i}.example/p?x=${i}">www.paypal${i}.com</a> `,
      ).slice(0, SIZE),
    ),
  ],
  [
    '20,000 URLs in text',
    message(
      'texturls',
      'text/plain',
      repeat(20_000, (i) => `http://h${i}.ex.com/a/b/c?d=${i}. `).slice(0, SIZE),
    ),
  ],
  [
    '10,000 nested tags',
    message('tags', 'text/html', `${'<div style="color:red">'.repeat(10_000)}x`),
  ],
  [
    '7,000 CSS url()',
    message(
      'styleurl',
      'text/html',
      `<p style="${'background:url(http://x.example/a);'.repeat(7_000)}">x</p>`,
    ),
  ],
  ['one 250 KB word', message('oneword', 'text/plain', 'a'.repeat(SIZE))],
  [
    'a URL then 250 KB of dots',
    message('dots', 'text/plain', `http://x.example/${'.'.repeat(SIZE - 20)}`),
  ],
  [
    '30,000 lure words, sums and phone numbers',
    message(
      'words',
      'text/plain',
      repeat(
        30_000,
        (i) => `${LURE[i % LURE.length]} ${i % 97 === 0 ? '+1 (800) 555-0100 ' : ''}`,
      ).slice(0, SIZE),
    ),
  ],
];

async function timeOnce(raw: Buffer): Promise<number> {
  const t0 = performance.now();
  // as the consumer thread does it: the stored Email read back as JSON, then the job's run
  const email = JSON.parse(JSON.stringify(await parseRawEmail(raw))) as Email;
  const out = await runner('default', email);
  if (out?.status !== 'completed') throw new Error(`run ${out?.status ?? 'missing'}`);
  return performance.now() - t0;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] as number;
};

console.log(
  `hostile worst case under the pool threshold: ${RUNS} runs each, ms per message (parse + default workflow)`,
);
let worst = 0;
let baseline = 0;
for (const [name, raw] of cases) {
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) times.push(await timeOnce(raw));
  const warm = median(times.slice(1));
  if (name.startsWith('baseline')) baseline = warm;
  else worst = Math.max(worst, warm);
  console.log(
    `  ${name.padEnd(44)} ${(raw.length / 1024).toFixed(0).padStart(4)} KB  first ${(times[0] as number).toFixed(1).padStart(6)}  warm median ${warm.toFixed(1).padStart(6)}`,
  );
}
console.log(
  `worst_warm_ms=${worst.toFixed(1)} baseline_warm_ms=${baseline.toFixed(1)} ratio=${(worst / baseline).toFixed(1)}`,
);
await invoker.close();
