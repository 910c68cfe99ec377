import { afterAll, beforeAll } from 'vitest';
import { createStore } from '../store/create-store.ts';
import { migrate } from '../store/migrate.ts';
import type { Store } from '../store/repositories.ts';
import type { SqlClient } from '../store/types.ts';

/**
 * A conformance suite's database: before the suite, `makeSql` opens an empty database/schema, which
 * is migrated and handed to `ready` with a store on it; after the suite, it is cleaned up.
 */
export function migratedSuite<T extends { sql: SqlClient; cleanup(): Promise<void> }>(
  makeSql: () => Promise<T>,
  ready: (target: T, store: Store) => void,
): void {
  let target: T | undefined;
  beforeAll(async () => {
    target = await makeSql();
    await migrate(target.sql);
    ready(target, createStore(target.sql));
  }, 120_000);
  afterAll(() => target?.cleanup());
}
