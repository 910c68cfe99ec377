import { administrationPaths } from './openapi/administration-paths.ts';
import { authAndAnalysisPaths } from './openapi/auth-and-analysis-paths.ts';
import { withPathParams } from './openapi/operations.ts';
import { componentSchemas } from './openapi/schemas.ts';

const paths = withPathParams({ ...authAndAnalysisPaths, ...administrationPaths });

let cached: Record<string, unknown> | undefined;

/** The OpenAPI 3.1 document, built from the same zod schemas the routes validate with. */
export function openApiDocument(version: string): Record<string, unknown> {
  if (cached) return { ...cached, info: { ...(cached.info as object), version } };
  cached = {
    openapi: '3.1.0',
    info: {
      title: 'Trawl API',
      version,
      description:
        'Phishing analysis: submit emails, read verdicts, manage configuration. Any request whose Host header is outside TRUSTED_HOSTS answers 400 TRAWL_ERR_GATEWAY_UNTRUSTED_HOST (health checks excepted); every error is an RFC 9457 problem (ProblemDetails).',
    },
    servers: [{ url: '/' }],
    components: {
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
        internalKey: { type: 'apiKey', in: 'header', name: 'X-Internal-API-Key' },
        password: {
          type: 'oauth2',
          flows: { password: { tokenUrl: '/auth/token', refreshUrl: '/auth/refresh', scopes: {} } },
        },
      },
      schemas: componentSchemas(),
    },
    security: [{ bearer: [] }, { internalKey: [] }],
    paths,
  };
  return cached;
}
