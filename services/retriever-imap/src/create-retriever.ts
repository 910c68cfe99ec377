import { createTokenSource } from '@trawl/oauth';
import { type RetrieverAppBase, serviceChild, within } from '@trawl/platform';
import type { FastifyInstance } from 'fastify';
import { Registry } from 'prom-client';
import { buildRetrieverApp } from './app.ts';
import { ImapRetriever } from './imap-retriever.ts';
import { ImapSession, type SessionOptions } from './imap-session.ts';
import { createImapMetrics } from './metrics.ts';
import { type ImapSettings, imapOAuthGrant } from './settings.ts';

/** How long stop() lets in-flight requests finish before it cuts their connections. */
const STOP_GRACE_MS = 5_000;

/** An IMAP retriever: its HTTP app and IMAP session. */
export interface ImapRetrieverService {
  app: FastifyInstance;
  session: ImapSession;
  retriever: ImapRetriever;
  registry: Registry;
  /** Connects in the background (the HTTP endpoints answer 503 until connected). */
  start(): void;
  /** Connects and waits for the first connection (rejects if it fails; retries go on). */
  startAndWait(): Promise<void>;
  stop(): Promise<void>;
}

/** Wires the session, the mailbox logic and the HTTP app of one IMAP retriever. */
export function createImapRetriever(
  settings: ImapSettings,
  deps: Omit<RetrieverAppBase, 'registry'> & { registry?: Registry; session?: SessionOptions },
): ImapRetrieverService {
  const registry = deps.registry ?? new Registry();
  const metrics = createImapMetrics(registry);
  const logger = serviceChild(deps.logger, 'retriever-imap');
  let wasConnected = false;
  const grant = imapOAuthGrant(settings);
  const session = new ImapSession(settings, logger, {
    ...(grant ? { tokens: createTokenSource(grant) } : {}),
    ...deps.session,
    onState: (connected) => {
      metrics.connected.set(connected ? 1 : 0);
      if (connected && wasConnected) metrics.reconnects.inc();
      if (connected) wasConnected = true;
      deps.session?.onState?.(connected);
    },
  });
  const retriever = new ImapRetriever(session, logger, {
    cleanKeyword: settings.clean_keyword,
    address: settings.address,
  });
  const app = buildRetrieverApp({ ...deps, session, retriever, logger, registry, metrics });
  return {
    app,
    session,
    retriever,
    registry,
    start: () => session.startInBackground(),
    async startAndWait() {
      try {
        await session.start();
      } catch (err) {
        session.startInBackground();
        throw err;
      }
    },
    async stop() {
      // Graceful first: in-flight requests finish. One stuck on an IMAP command that never answers
      // would hold the close for ever, so after a grace its connection is cut; the IMAP session is
      // closed after (its commands then fail, and such a handler ends).
      const closed = app.close();
      await within(closed, STOP_GRACE_MS).catch(() => app.server.closeAllConnections());
      await session.close();
      await closed;
    },
  };
}
