import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { WorkflowInput } from '@trawl/contracts';

const here = dirname(fileURLToPath(import.meta.url));
const fixtures = join(here, '..', 'fixtures');

/** Every child process started by a test file, killed in afterAll whatever happens. */
const children = new Set<ChildProcess>();

export function killAll(): void {
  for (const c of children) {
    if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  }
  children.clear();
}

function startTsx(script: string, args: string[]): ChildProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', join(fixtures, script), ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env },
  });
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

function firstLine(child: ChildProcess, what: string, timeoutMs = 30_000): Promise<string> {
  return new Promise((resolve, reject) => {
    const rl = createInterface({ input: child.stdout! });
    const timer = setTimeout(() => reject(new Error(`${what} did not start in time`)), timeoutMs);
    rl.once('line', (l) => {
      clearTimeout(timer);
      resolve(l);
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${what} exited with ${code}`));
    });
  });
}

export interface Analyzers {
  url(id: string): string;
  /** {analyzer: {subject: count}} */
  calls(): Promise<Record<string, Record<string, number>>>;
  stop(): void;
}

/** The fixture analyzer server as its own process; spec: {name: behaviour}. */
export async function startAnalyzers(spec: Record<string, string>): Promise<Analyzers> {
  const child = startTsx('analyzer-server.ts', [JSON.stringify(spec)]);
  const { port } = JSON.parse(await firstLine(child, 'analyzer server')) as { port: number };
  const base = `http://127.0.0.1:${port}`;
  return {
    url: (id) => `${base}/${id}`,
    async calls() {
      const r = await fetch(`${base}/_calls`);
      return (await r.json()) as Record<string, Record<string, number>>;
    },
    stop: () => child.kill('SIGTERM'),
  };
}

export interface OrchestratorProcess {
  child: ChildProcess;
  exited: Promise<number | null>;
  /** Lines printed after READY (e.g. "RELOADED r2"). */
  lines: string[];
}

export interface ProcessSettings {
  prefix: string;
  schema: string;
  redisPrefix: string;
  analyzers: Record<string, string>;
  configFile: string;
  prefetch?: number;
  graceMs?: number;
}

export async function startOrchestrator(
  dir: string,
  name: string,
  settings: ProcessSettings,
): Promise<OrchestratorProcess> {
  const file = join(dir, `${name}.json`);
  writeFileSync(file, JSON.stringify(settings));
  const child = startTsx('orchestrator-process.ts', [file]);
  const exited = new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
  const lines: string[] = [];
  const rl = createInterface({ input: child.stdout! });
  const ready = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`orchestrator ${name} did not start`)), 30_000);
    rl.on('line', (l) => {
      if (l === 'READY') {
        clearTimeout(timer);
        resolve();
      } else lines.push(l);
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`orchestrator ${name} exited with ${code}`));
    });
  });
  await ready;
  return { child, exited, lines };
}

export function tempDir(): { dir: string; cleanup(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'trawl-orch-'));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export function writeConfig(
  file: string,
  version: string,
  workflows: WorkflowInput[],
  analyzerTimeoutMs = 5000,
): void {
  writeFileSync(file, JSON.stringify({ version, workflows, analyzerTimeoutMs }));
}
