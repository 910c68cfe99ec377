import type { FastifyInstance } from 'fastify';

declare module 'fastify' {
  interface FastifyRequest {
    /** The JSON body's text as received (null: no JSON body, or outside keepJsonText's routes). */
    jsonText: string | null;
  }
}

/**
 * Keeps the text of JSON bodies on `request.jsonText` for the routes of this (encapsulated)
 * instance, so that a route can store what it received without serialising it again (ADR 006).
 * Parsing is Fastify's own default JSON parser with the instance's poisoning settings: same
 * answers, same errors.
 */
export function keepJsonText(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser(
    app.initialConfig.onProtoPoisoning ?? 'error',
    app.initialConfig.onConstructorPoisoning ?? 'error',
  );
  app.decorateRequest('jsonText', null);
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8'); // parseAs: a string
    request.jsonText = text;
    void parse(request, text, done); // calls done itself; returns nothing
  });
}
