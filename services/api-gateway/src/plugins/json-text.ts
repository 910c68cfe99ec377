import { errorCodes, type FastifyInstance } from 'fastify';

declare module 'fastify' {
  interface FastifyRequest {
    /** The JSON body's text as received (null: no JSON body, or outside keepJsonText's routes). */
    jsonText: string | null;
  }
}

/**
 * Whether a parsed JSON value holds what secure-json-parse (Fastify's JSON parser) refuses with
 * `protoAction` and `constructorAction` 'error': an object with an own `__proto__` member, or with
 * an own `constructor` member that is an object with an own `prototype`. The same walk as its
 * filter, without first searching the whole text with its two regular expressions (a 20 KB body's
 * text costs more to search than its few objects to visit).
 */
function isPoisoned(root: object): boolean {
  const stack: object[] = [root];
  for (let node = stack.pop(); node !== undefined; node = stack.pop()) {
    if (Object.hasOwn(node, '__proto__')) return true;
    const ctor = Object.hasOwn(node, 'constructor')
      ? (node as { constructor: unknown }).constructor
      : undefined;
    if (ctor !== null && typeof ctor === 'object' && Object.hasOwn(ctor, 'prototype')) return true;
    for (const key in node) {
      const v = (node as Record<string, unknown>)[key];
      if (v !== null && typeof v === 'object') stack.push(v);
    }
  }
  return false;
}

/**
 * Fastify's default JSON parsing with `onProtoPoisoning` and `onConstructorPoisoning` 'error'
 * (the gateway's settings): same values, same refusals (a byte order mark is dropped; an empty
 * body is FST_ERR_CTP_EMPTY_JSON_BODY, invalid or poisoned JSON FST_ERR_CTP_INVALID_JSON_BODY).
 */
function parseJsonBody(text: string): unknown {
  if (text.length === 0) throw new errorCodes.FST_ERR_CTP_EMPTY_JSON_BODY();
  let value: unknown;
  try {
    value = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  } catch {
    throw new errorCodes.FST_ERR_CTP_INVALID_JSON_BODY();
  }
  if (value !== null && typeof value === 'object' && isPoisoned(value)) {
    throw new errorCodes.FST_ERR_CTP_INVALID_JSON_BODY();
  }
  return value;
}

/**
 * Keeps the text of JSON bodies on `request.jsonText` for the routes of this (encapsulated)
 * instance, so that a route can store what it received without serialising it again (ADR 006).
 * Parsing answers as Fastify's default JSON parser does (parseJsonBody; with other poisoning
 * settings than 'error', it is Fastify's own parser).
 */
export function keepJsonText(app: FastifyInstance): void {
  const proto = app.initialConfig.onProtoPoisoning ?? 'error';
  const ctor = app.initialConfig.onConstructorPoisoning ?? 'error';
  const fallback =
    proto === 'error' && ctor === 'error' ? undefined : app.getDefaultJsonParser(proto, ctor);
  app.decorateRequest('jsonText', null);
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8'); // parseAs: a string
    request.jsonText = text;
    if (fallback) {
      void fallback(request, text, done); // calls done itself; returns nothing
      return;
    }
    let value: unknown;
    try {
      value = parseJsonBody(text);
    } catch (err) {
      done(err as Error, undefined);
      return;
    }
    done(null, value);
  });
}
