import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { shippedConfig } from '@trawl/all-in-one/testing';
import { buildOrchestrator, type Orchestrator } from '@trawl/analyzer-orchestrator';
import { buildApp, defaultGatewayOptions } from '@trawl/api-gateway';
import { corpusDir } from '@trawl/config';
import type { Job, Topology } from '@trawl/contracts';
import { deriveCredential } from '@trawl/contracts';
import type { Cache, Store } from '@trawl/platform';
import { testBroker, testRedis, testSchema } from '@trawl/platform/testing';
import {
  createImapRetriever,
  type ImapRetrieverService,
  ImapSettings,
} from '@trawl/retriever-imap';
import { openTestImap, startTestDovecot, type TestDovecot } from '@trawl/retriever-imap/testing';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { messageIdOf } from '../../src/index.ts';

export const KEY = 'internal-key-for-tests-0123456789';
export const SECRET = 'test-secret-key-0123456789abcdef0123456789';
export const silent = pino({ level: 'silent' });
/** The address of the test mailbox (TRAWL_IMAP_ADDRESS of its retriever). */
export const ENVELOPE_TO = 'reports@example.test';

/** The analysis side of Trawl on the real test servers: the gateway and one orchestrator. */
export interface Platform {
  store: Store;
  cache: Cache;
  broker: Awaited<ReturnType<typeof testBroker>>['broker'];
  topology: Topology;
  gatewayUrl: string;
  gateway: FastifyInstance;
  orchestrator: Orchestrator;
  /** Every job in the store. */
  jobs(): Promise<Job[]>;
  /** Runs `fn` at close(), before what the platform itself closes. */
  onClose(fn: () => Promise<unknown>): void;
  close(): Promise<void>;
}

export interface Stack extends Platform {
  dovecot: TestDovecot;
  retriever: ImapRetrieverService;
  retrieverUrl: string;
}

/**
 * The rest of Trawl in this process, on the real test servers: the gateway (listening on a free
 * port) and one analyzer orchestrator with the built-in analyzers and the shipped default
 * configuration.
 */
export async function startPlatform(): Promise<Platform> {
  const closers: (() => Promise<unknown>)[] = [];
  const close = async () => {
    for (const c of closers.reverse()) await c().catch(() => undefined);
  };
  try {
    const db = await testSchema({ max: 8 });
    closers.push(() => db.drop());
    const redis = testRedis();
    closers.push(() => redis.cleanup());
    const tb = await testBroker();
    closers.push(() => tb.cleanup());
    const { broker, topology } = tb;
    const store = db.store;
    const cache = redis.cache;

    const { configState, config, invoker } = await shippedConfig({
      store,
      broker,
      topology,
      internalApiKey: KEY,
    });
    closers.push(() => invoker.close());

    const orchestrator = buildOrchestrator({
      broker,
      store,
      cache,
      invoker,
      config,
      topology,
      logger: silent,
      options: { prefetch: 4, reaperIntervalMs: 0 },
    });
    await orchestrator.start();
    closers.push(() => orchestrator.stop(2000));

    const gateway = await buildApp({
      config: defaultGatewayOptions({ secretKey: SECRET, internalApiKey: KEY }),
      store,
      broker,
      cache,
      topology,
      configState,
      invoker,
      logger: silent,
      version: '0.0.0-test',
    });
    await gateway.listen({ host: '127.0.0.1', port: 0 });
    closers.push(() => gateway.close());
    const gatewayUrl = `http://127.0.0.1:${(gateway.server.address() as { port: number }).port}`;

    return {
      store,
      cache,
      broker,
      topology,
      gatewayUrl,
      gateway,
      orchestrator,
      onClose: (fn) => closers.push(fn),
      async jobs() {
        const out: Job[] = [];
        let cursor: string | undefined;
        for (;;) {
          const page = await store.jobs.list({ limit: 200, ...(cursor ? { cursor } : {}) });
          out.push(...page.items);
          if (!page.next_cursor) return out;
          cursor = page.next_cursor;
        }
      },
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}

/** The platform, a Dovecot with one mailbox, and the IMAP retriever in front of it. */
export async function startStack(): Promise<Stack> {
  const platform = await startPlatform();
  try {
    const dovecot = await startTestDovecot();
    platform.onClose(() => dovecot.destroy());
    const retriever = createImapRetriever(
      ImapSettings.parse({
        host: dovecot.host,
        port: dovecot.port,
        secure: false,
        user: dovecot.user,
        password: dovecot.password,
        // handed out as the envelope recipient: a Bcc copy is analysed, not refused
        address: ENVELOPE_TO,
      }),
      {
        logger: silent,
        // its own credential (the tests name it `mailbox` in TRAWL_MAIL_RETRIEVERS)
        internalApiKey: deriveCredential(KEY, { kind: 'retriever', id: 'mailbox' }),
        session: { reconnectInitialMs: 50, reconnectMaxMs: 500 },
      },
    );
    await retriever.startAndWait();
    platform.onClose(() => retriever.stop());
    await retriever.app.listen({ host: '127.0.0.1', port: 0 });
    const retrieverUrl = `http://127.0.0.1:${(retriever.app.server.address() as { port: number }).port}`;
    return { ...platform, dovecot, retriever, retrieverUrl };
  } catch (err) {
    await platform.close();
    throw err;
  }
}

export interface CorpusMessage {
  file: string;
  raw: Buffer;
  messageId: string;
}

/**
 * `count` messages from the corpus, alternating phishing and ham, each with its own Message-ID
 * (the corpus is read in place; nothing is copied into the repository). Null without a corpus.
 */
export function corpusSample(count: number, skip = 0): CorpusMessage[] | null {
  const dir = corpusDir();
  if (!dir) return null;
  const lists = ['phishing', 'ham'].map((k) =>
    readdirSync(join(dir, k))
      .filter((f) => f.endsWith('.eml'))
      .sort()
      .map((f) => join(dir, k, f)),
  );
  const seen = new Set<string>();
  const picked: CorpusMessage[] = [];
  let skipped = 0;
  for (let i = 0; picked.length < count && i < Math.max(...lists.map((l) => l.length)); i++) {
    for (const list of lists) {
      const file = list[i];
      if (!file || picked.length >= count) continue;
      const raw = readFileSync(file);
      if (raw.length > 2 * 1024 * 1024) continue;
      const messageId = messageIdOf(raw);
      if (!messageId || seen.has(messageId)) continue;
      seen.add(messageId);
      if (skipped < skip) {
        skipped++;
        continue;
      }
      picked.push({ file, raw, messageId });
    }
  }
  return picked;
}

/** A second IMAP connection: appends and reads folders (paths with '/', any delimiter). */
export async function mailboxInspector(d: TestDovecot) {
  const { client: c, path } = await openTestImap(d);
  return {
    async append(raw: Buffer) {
      await c.append('INBOX', raw);
    },
    /** Message-ID (without angle brackets) → flags, for every message in a folder. */
    async contents(folder: string): Promise<Map<string, Set<string>>> {
      const out = new Map<string, Set<string>>();
      const lock = await c.getMailboxLock(path(folder));
      try {
        await c.noop();
        if (c.mailbox && c.mailbox.exists === 0) return out;
        for await (const m of c.fetch('1:*', { flags: true, headers: ['message-id'] })) {
          const mid = m.headers
            ? messageIdOf(Buffer.concat([m.headers, Buffer.from('\r\n')]))
            : undefined;
          out.set(mid ?? `uid:${m.uid}`, m.flags ?? new Set());
        }
      } finally {
        lock.release();
      }
      return out;
    },
    async close() {
      await c.logout().catch(() => c.close());
    },
  };
}

export async function waitFor<T>(
  fn: () => T | undefined | false | Promise<T | undefined | false>,
  what: string,
  timeoutMs = 120_000,
): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
