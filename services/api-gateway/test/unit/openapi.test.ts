import { describe, expect, it } from 'vitest';
import { openApiDocument } from '../../src/openapi.ts';
import { analyzerView } from '../../src/routes/config.ts';

describe('OpenAPI document', () => {
  it('is OpenAPI 3.1 with the zod-derived schemas and every public route', () => {
    const doc = openApiDocument('1.2.3') as any;
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toBe('1.2.3');
    expect(doc.components.schemas.Email.required).toEqual(expect.arrayContaining(['headers']));
    expect(doc.components.schemas.Job.properties.status.enum).toEqual([
      'queued',
      'processing',
      'completed',
      'failed',
    ]);
    for (const p of [
      '/auth/token',
      '/api/v1/analyze',
      '/api/v1/analyze/raw',
      '/api/v1/analyze/{job_id}',
      '/api/v1/analyze/{job_id}/message',
      '/api/v1/analyze/{job_id}/message/raw',
      '/api/v1/campaigns',
      '/api/v1/campaigns/{id}',
      '/api/v1/config/reload',
      '/api/v1/workflows/{id}/dry-run',
      '/health',
    ]) {
      expect(doc.paths[p], p).toBeDefined();
    }
  });
});

describe('analyzer configuration view', () => {
  const files = {
    version: 'v',
    analyzerVersions: { a: 'va' },
    service: {
      analyzers: {
        a: { enabled: true, settings: { x: 1, y: 2 } },
        solo: { enabled: false, settings: {} },
      },
      plugins: {
        analyzers: { a: { enabled: true, url: 'http://h/a', settings: { y: 9, z: 3 } } },
        context_providers: {},
      },
    },
  } as any;
  it('merges form A over form B and reports the per-analyzer version', () => {
    expect(analyzerView(files, 'a')).toEqual({
      id: 'a',
      enabled: true,
      settings: { x: 1, y: 2, z: 3 },
      url: 'http://h/a',
      version: 'va',
    });
    expect(analyzerView(files, 'solo')).toEqual({
      id: 'solo',
      enabled: false,
      settings: {},
      version: 'v',
    });
    expect(analyzerView(files, 'nope')).toBeNull();
  });
});
