import { type Topology, topology } from '@trawl/contracts';
import { declareTopology } from '../broker/declare-topology.ts';
import { createMemoryBroker, type MemoryBroker } from '../broker/memory-broker.ts';
import { createMemoryCache } from '../cache/memory-cache.ts';
import type { Cache } from '../cache/types.ts';
import { createStore } from '../store/create-store.ts';
import { createMigratedPglite } from '../store/pglite-template.ts';
import type { StoreOnSql } from '../store/repositories.ts';

export interface MemoryPlatform extends StoreOnSql {
  broker: MemoryBroker;
  cache: Cache;
  topology: Topology;
  close(): Promise<void>;
}

/**
 * Everything in-process: memory broker (topology declared), memory cache, migrated in-memory PGlite.
 * What the embedded mode runs on, and what unit tests of services use.
 */
export async function memoryPlatform(
  opts: { prefix?: string; maxCacheEntries?: number } = {},
): Promise<MemoryPlatform> {
  const broker = createMemoryBroker();
  const t = topology(opts.prefix ?? '');
  await declareTopology(broker, t);
  const sql = await createMigratedPglite();
  const cache = createMemoryCache({ maxEntries: opts.maxCacheEntries ?? 10_000 });
  return {
    broker,
    cache,
    sql,
    store: createStore(sql),
    topology: t,
    async close() {
      await broker.close();
      await cache.close();
      await sql.close();
    },
  };
}
