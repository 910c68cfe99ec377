import { fileURLToPath } from 'node:url';
import { builtinPlugins } from '@trawl/analyzers';
import { type TestSchema, testSchema } from '@trawl/platform/testing';
import { pluginConformance } from '@trawl/plugin-sdk/testing';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll } from 'vitest';
import {
  type FakeLlm,
  startFakeLlm,
} from '../../../../packages/analyzers/test/integration/fake-llm.ts';
import { buildAnalyzersApp } from '../../src/server.ts';

// Every built-in analyzer and context provider, served together as the analyzers service serves
// them, must pass the plugin SDK's conformance suite at its base path.
const KEY = 'conformance-internal-key-0123456789';
const settings: Record<string, unknown> = {
  directory: {
    directory_file: fileURLToPath(
      new URL('../../../../packages/analyzers/fixtures/directory.example.yaml', import.meta.url),
    ),
  },
};
let llm: FakeLlm | undefined;
let db: TestSchema | undefined;
let app: FastifyInstance | undefined;

beforeAll(async () => {
  llm = await startFakeLlm();
  settings.llm = { llm_host: llm.url, llm_model: 'good' };
  db = await testSchema();
  app = buildAnalyzersApp({
    senders: db.store.senders,
    internalApiKey: KEY,
    settings: (id) => settings[id],
  });
  await app.ready();
});

afterAll(async () => {
  await app?.close();
  await llm?.close();
  await db?.drop();
});

for (const def of Object.values(builtinPlugins())) {
  pluginConformance({
    name: `${def.kind} ${def.id}`,
    app: () => app as FastifyInstance,
    basePath: `/${def.id}`,
    kind: def.kind,
    id: def.id,
    internalApiKey: KEY,
  });
}
