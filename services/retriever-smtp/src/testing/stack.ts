import { shippedConfig } from '@trawl/all-in-one/testing';
import { buildOrchestrator, type Orchestrator } from '@trawl/analyzer-orchestrator';
import { buildApp, createReleaseDelivery, defaultGatewayOptions } from '@trawl/api-gateway';
import type { Job, Topology } from '@trawl/contracts';
import { buildMailOrchestrator, type MailOrchestrator } from '@trawl/mail-orchestrator';
import type { Broker, SqlClient, Store } from '@trawl/platform';
import { testBroker, testRedis, testSchema } from '@trawl/platform/testing';
import type { FastifyInstance } from 'fastify';
import { silentLogger as silent } from './client.ts';

const SECRET = 'smtp-filter-test-secret-0123456789abcdef0123';
/** The platform key of the test stack: the filters' credentials are derived from it. */
export const PLATFORM_KEY = 'smtp-filter-test-platform-key-0123456789abcdef';

export interface TrawlStack {
  /** Starts the services (again, after stop()): gateway, analyzer orchestrator, mail orchestrator. */
  start(): Promise<void>;
  /** Stops them, as `docker compose stop` would: the servers (PostgreSQL, Redis, RabbitMQ) stay. */
  stop(): Promise<void>;
  /** Every job in the store. */
  jobs(): Promise<Job[]>;
  job(id: string): Promise<Job | null>;
  /** The store on the test schema (users, audit, quarantine). */
  store: Store;
  /**
   * The database and broker a milter analysing inline is given (TRAWL_MILTER_ANALYSIS=inline):
   * the same schema and topology as the stack's services.
   */
  analysisPorts: { sql: SqlClient; store: Store; broker: Broker; topology: Topology };
  /** The running gateway and its address (both change at every start()). */
  gateway(): FastifyInstance;
  gatewayUrl(): string;
  close(): Promise<void>;
}

/**
 * Trawl in scale-out shape on the real test servers (PostgreSQL schema, Redis prefix, RabbitMQ
 * names of its own), its services in this process: the gateway, one analyzer orchestrator with the
 * built-in analyzers and the shipped configuration, and the mail orchestrator on `mailPort` with
 * each filter registered as a retriever (name → port of its HTTP side).
 */
export async function startTrawlStack(o: {
  mailPort: number;
  filters: Record<string, number>;
}): Promise<TrawlStack> {
  const closers: (() => Promise<unknown>)[] = [];
  const closeAll = async () => {
    for (const c of closers.reverse()) await c().catch(() => undefined);
    closers.length = 0;
  };
  try {
    const db = await testSchema({ max: 12 });
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
      internalApiKey: PLATFORM_KEY,
    });
    closers.push(() => invoker.close());

    let running:
      | {
          orchestrator: Orchestrator;
          gateway: FastifyInstance;
          gatewayUrl: string;
          mail: MailOrchestrator;
        }
      | undefined;
    const retrievers = Object.fromEntries(
      Object.entries(o.filters).map(([name, port]) => [
        name,
        { url: `http://127.0.0.1:${port}`, priority: 0, enabled: true },
      ]),
    );
    const stop = async () => {
      const r = running;
      running = undefined;
      if (!r) return;
      await r.mail.stop(2000);
      await r.mail.app.close();
      await r.gateway.close();
      await r.orchestrator.stop(2000);
    };
    closers.push(stop);

    const start = async () => {
      const orchestrator = buildOrchestrator({
        broker,
        store,
        cache,
        invoker,
        config,
        topology,
        logger: silent,
        options: { prefetch: 16, reaperIntervalMs: 0 },
      });
      await orchestrator.start();
      const gateway = await buildApp({
        config: defaultGatewayOptions({ secretKey: SECRET, internalApiKey: PLATFORM_KEY }),
        store,
        broker,
        cache,
        topology,
        configState,
        invoker,
        logger: silent,
        version: '0.0.0-test',
        // a release is delivered by the filter that quarantined the message
        releaseQuarantined: createReleaseDelivery(retrievers, PLATFORM_KEY),
      });
      await gateway.listen({ host: '127.0.0.1', port: 0 });
      const gatewayUrl = `http://127.0.0.1:${(gateway.server.address() as { port: number }).port}`;
      const mail = buildMailOrchestrator({
        retrievers,
        gateway: { baseUrl: gatewayUrl },
        internalApiKey: PLATFORM_KEY,
        broker,
        topology,
        cache,
        logger: silent,
        // The filters push; polling their (always empty) fetch is not what is tested here.
        options: { pollIntervalMs: 60_000, verdictPrefetch: 32 },
      });
      await mail.start();
      await mail.app.listen({ host: '127.0.0.1', port: o.mailPort });
      running = { orchestrator, gateway, gatewayUrl, mail };
    };
    await start();

    return {
      start,
      stop,
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
      job: (id) => store.jobs.get(id),
      store,
      analysisPorts: { sql: db.sql, store, broker, topology },
      gateway: () => {
        if (!running) throw new Error('the stack is stopped');
        return running.gateway;
      },
      gatewayUrl: () => {
        if (!running) throw new Error('the stack is stopped');
        return running.gatewayUrl;
      },
      close: closeAll,
    };
  } catch (err) {
    await closeAll();
    throw err;
  }
}
