import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyPluginAsync, FastifyReply } from 'fastify';

/**
 * The console's own Content-Security-Policy: its scripts and styles only, no inline script, mail
 * HTML only inside a sandboxed srcdoc frame (frame-src blob: for the raw download), and never framed.
 */
const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "frame-src 'self' blob:",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const TYPES: Record<string, string> = {
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  svg: 'image/svg+xml',
  png: 'image/png',
  woff2: 'font/woff2',
  json: 'application/json; charset=utf-8',
};

/** Paths that belong to the API: a miss there is a 404 problem, never the console's page. */
const RESERVED = /^\/(?:api|auth|docs|internal|openapi\.json|metrics|health)(?:[/?]|$)/;
const ASSET_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

function secure(reply: FastifyReply): FastifyReply {
  return reply
    .header('content-security-policy', CONSOLE_CSP)
    .header('x-content-type-options', 'nosniff')
    .header('x-frame-options', 'DENY')
    .header('referrer-policy', 'no-referrer')
    .header('cross-origin-opener-policy', 'same-origin');
}

/**
 * The web console (services/console, built into its dist/): `/` and every client route answer its
 * index.html; `/assets/*` its hashed scripts and styles. Served in both modes from the files
 * shipped with the package (no build step at start). Without a built console the paths are 404.
 */
export function consoleRoutes(dir: string | null): FastifyPluginAsync {
  return async (app) => {
    const indexFile = dir ? join(dir, 'index.html') : null;
    const index = indexFile && existsSync(indexFile) ? readFileSync(indexFile) : null;
    const cache = new Map<string, Buffer>();
    const pub = { config: { access: 'public' } } as const;

    const page = async (_request: unknown, reply: FastifyReply) => {
      if (!index) return reply.callNotFound();
      return secure(reply)
        .header('cache-control', 'no-cache')
        .type('text/html; charset=utf-8')
        .send(index);
    };

    app.get('/', pub, page);
    app.get('/assets/:file', pub, async (request, reply) => {
      const { file } = request.params as { file: string };
      const type = TYPES[file.slice(file.lastIndexOf('.') + 1)];
      if (!dir || !type || !ASSET_NAME.test(file) || file.includes('..'))
        return reply.callNotFound();
      let buf = cache.get(file);
      if (!buf) {
        const path = join(dir, 'assets', file);
        if (!existsSync(path)) return reply.callNotFound();
        buf = readFileSync(path);
        cache.set(file, buf);
      }
      return secure(reply)
        .header('cache-control', 'public, max-age=31536000, immutable')
        .type(type)
        .send(buf);
    });
    app.get('/favicon.svg', pub, async (_request, reply) => {
      const path = dir ? join(dir, 'favicon.svg') : null;
      if (!path || !existsSync(path)) return reply.callNotFound();
      return secure(reply)
        .header('cache-control', 'public, max-age=86400')
        .type(TYPES.svg!)
        .send(readFileSync(path));
    });
    // Client routes (/jobs/…, /users, …): the page; the router in the browser takes it from there.
    app.get('/*', pub, async (request, reply) => {
      if (RESERVED.test(request.url)) return reply.callNotFound();
      return page(request, reply);
    });
  };
}
