/**
 * Raw-message parsing, inline vs in the gateway's CPU pool (issue 15): `tsx bench/gateway/raw-parse.ts`
 * (it lives in the service's folder so it resolves the service's own dependencies).
 *
 * For messages of several sizes (a multipart/alternative with an HTML body and a PDF attachment),
 * the time of one parse on the HTTP thread (what POST /analyze/raw did before) against one parse
 * through a worker (the round trip included, the workers up and warm), and the longest event-loop
 * stall while the pooled parses ran. The size where pooled ≈ inline is the crossover below which
 * TRAWL_GATEWAY_CPU_INLINE_MAX_BYTES keeps a message inline.
 *
 * Options: --sizes=2k,16k,64k,256k,1m,10m (message sizes), --runs=20 (per size and mode).
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { createCpuWork } from '@trawl/api-gateway';
import { rawMessage } from '@trawl/api-gateway/testing';
import { DEFAULT_EMAIL_LIMITS } from '@trawl/contracts';

const args = Object.fromEntries(
  process.argv.slice(2).map((a) => {
    const [k, v] = a.replace(/^--/, '').split('=');
    return [k, v ?? 'true'];
  }),
) as Record<string, string>;

function bytesOf(s: string): number {
  const m = /^(\d+(?:\.\d+)?)([km]?)$/i.exec(s.trim());
  if (!m) throw new Error(`bad size ${s}`);
  const mult = { '': 1, k: 1024, m: 1024 * 1024 }[m[2]?.toLowerCase() ?? ''] ?? 1;
  return Math.round(Number(m[1]) * mult);
}

const SIZES = (args.sizes ?? '2k,16k,64k,256k,1m,10m').split(',').map(bytesOf);
const RUNS = Math.max(1, Number(args.runs ?? 20));
const LIMITS = { ...DEFAULT_EMAIL_LIMITS, maxAttachmentBytes: 25 * 1024 * 1024 };

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? 0;
}

export async function runRawParseBench(): Promise<void> {
  const inline = createCpuWork({ workers: 0, inlineMaxBytes: 0, deadlineMs: 30_000 });
  const pooled = createCpuWork({ workers: 2, inlineMaxBytes: 0, deadlineMs: 30_000 });
  const input = (bytes: Buffer) => ({
    bytes,
    limits: LIMITS,
    maxBytes: 25 * 1024 * 1024,
  });
  // warm both (the workers start and load the parser)
  const warm = rawMessage(4096);
  await Promise.all([pooled.parseRaw(input(warm)), pooled.parseRaw(input(warm))]);
  await inline.parseRaw(input(warm));
  console.log(`raw-message parse, median of ${RUNS} runs (ms); stall = longest event-loop delay`);
  console.log('size        inline    pooled    inline stall  pooled stall');
  for (const size of SIZES) {
    const msg = rawMessage(size);
    const row: number[] = [];
    for (const work of [inline, pooled]) {
      const h = monitorEventLoopDelay({ resolution: 1 });
      const times: number[] = [];
      h.enable();
      for (let i = 0; i < RUNS; i++) {
        const t0 = performance.now();
        await work.parseRaw(input(msg));
        times.push(performance.now() - t0);
        // let the delay monitor take its samples between parses
        await new Promise((r) => setTimeout(r, 2));
      }
      h.disable();
      row.push(median(times), h.max / 1e6);
    }
    const [ti, si, tp, sp] = row.map((x) => x.toFixed(2).padStart(8));
    const label = size >= 1024 * 1024 ? `${size / 1024 / 1024} MiB` : `${size / 1024} KiB`;
    console.log(`${label.padEnd(10)} ${ti}  ${tp}  ${si}      ${sp}`);
  }
  await pooled.close();
  await inline.close();
}
