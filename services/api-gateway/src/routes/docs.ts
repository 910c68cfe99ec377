import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { FastifyPluginAsync } from 'fastify';
import type { GatewayContext } from '../context.ts';
import { openApiDocument } from '../openapi.ts';

const ASSETS: Record<string, string> = {
  'swagger-ui-bundle.js': 'application/javascript; charset=utf-8',
  'swagger-ui-standalone-preset.js': 'application/javascript; charset=utf-8',
  'index.css': 'text/css; charset=utf-8',
  'favicon-32x32.png': 'image/png',
};

function swaggerStaticDir(): string | null {
  try {
    const require = createRequire(import.meta.url);
    return join(dirname(require.resolve('@fastify/swagger-ui/package.json')), 'static');
  } catch {
    return null;
  }
}

const PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Trawl API</title>
<link rel="stylesheet" href="/docs/static/index.css"><link rel="icon" href="/docs/static/favicon-32x32.png"></head>
<body><div id="swagger-ui"></div>
<script src="/docs/static/swagger-ui-bundle.js"></script>
<script src="/docs/static/swagger-ui-standalone-preset.js"></script>
<script src="/docs/static/init.js"></script>
</body></html>`;

const INIT = `window.ui = SwaggerUIBundle({ url: '/openapi.json', dom_id: '#swagger-ui', deepLinking: true,
  presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset], layout: 'StandaloneLayout' });`;

/** /openapi.json and /docs (Swagger UI served from the installed package: works offline). */
export function docsRoutes(ctx: GatewayContext): FastifyPluginAsync {
  return async (app) => {
    const dir = swaggerStaticDir();
    const cache = new Map<string, Buffer>();
    const pub = { config: { access: 'public' } } as const;
    app.get('/openapi.json', pub, async () => openApiDocument(ctx.version));
    app.get('/docs', pub, async (_request, reply) => {
      reply.header(
        'content-security-policy',
        "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'",
      );
      reply.type('text/html; charset=utf-8');
      if (!dir)
        return `<!doctype html><title>Trawl API</title><p>Swagger UI is not installed; the OpenAPI document is at <a href="/openapi.json">/openapi.json</a>.</p>`;
      return PAGE;
    });
    app.get('/docs/static/:file', pub, async (request, reply) => {
      const { file } = request.params as { file: string };
      if (file === 'init.js') return reply.type('application/javascript; charset=utf-8').send(INIT);
      const type = ASSETS[file];
      if (!dir || !type) return reply.callNotFound();
      let buf = cache.get(file);
      if (!buf) {
        buf = readFileSync(join(dir, file));
        cache.set(file, buf);
      }
      reply.header('cache-control', 'public, max-age=86400');
      return reply.type(type).send(buf);
    });
  };
}
