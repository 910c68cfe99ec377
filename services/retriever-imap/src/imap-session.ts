import { backoffDelay } from '@trawl/contracts';
import type { TokenSource } from '@trawl/oauth';
import { within } from '@trawl/platform';
import { ImapFlow } from 'imapflow';
import type { Logger } from 'pino';
import { ImapDisconnectedError } from './errors.ts';
import type { ImapSettings } from './settings.ts';

/** How an IMAP session reconnects, and what it reports. */
export interface SessionOptions {
  /** First reconnect delay (ms, default 500), doubled up to `reconnectMaxMs` (default 30000). */
  reconnectInitialMs?: number;
  reconnectMaxMs?: number;
  /** Called when the server reports new mail in the watched mailbox (IDLE). */
  onNewMail?: () => void;
  /** Called on every (re)connection and disconnection. */
  onState?: (connected: boolean) => void;
  /** With auth=oauth2: the access tokens (XOAUTH2 / OAUTHBEARER, whichever the server offers). */
  tokens?: TokenSource;
}

/** The IMAP folders the retriever reads and moves messages to. */
export interface Folders {
  mailbox: string;
  processed: string;
  quarantine: string;
  /** Where `unanalyzed` verdicts go. */
  hold: string;
}

/**
 * One IMAP connection kept alive: connects, creates the processed, quarantine and hold folders when
 * they are missing, and after the server drops the connection reconnects with backoff (a new ImapFlow:
 * an instance cannot reconnect). While it is down, `client()` throws ImapDisconnectedError.
 */
export class ImapSession {
  private current: ImapFlow | undefined;
  private connected = false;
  private closed = false;
  private failures = 0;
  private timer: NodeJS.Timeout | undefined;
  private connecting: Promise<void> | undefined;
  folders: Folders | undefined;
  reconnects = 0;

  constructor(
    private readonly settings: ImapSettings,
    private readonly logger: Logger,
    private readonly o: SessionOptions = {},
  ) {}

  isConnected(): boolean {
    return this.connected && this.current?.usable === true;
  }

  /** The live client and the server's folder paths; throws when disconnected. */
  client(): { client: ImapFlow; folders: Folders } {
    if (!this.isConnected() || !this.current || !this.folders) throw new ImapDisconnectedError();
    return { client: this.current, folders: this.folders };
  }

  /** Connects once (rejects when the first attempt fails; reconnects happen in the background). */
  async start(): Promise<void> {
    this.closed = false;
    await this.connectOnce();
  }

  /** Connects, retrying with backoff until it succeeds or the session is closed. */
  startInBackground(): void {
    this.closed = false;
    this.connectOnce().catch(() => this.scheduleReconnect());
  }

  private toServerPath(path: string, delimiter: string): string {
    return path
      .split('/')
      .filter((p) => p.length > 0)
      .join(delimiter);
  }

  private async connectOnce(): Promise<void> {
    if (this.connecting) return this.connecting;
    this.connecting = (async () => {
      const s = this.settings;
      // A fresh token for each connection (the cached one until shortly before it expires).
      let accessToken: string | undefined;
      try {
        accessToken = this.o.tokens ? await this.o.tokens.token() : undefined;
      } catch (err) {
        const e = err as { code?: string; message?: string };
        this.logger.warn({ code: e.code, err: e.message }, 'IMAP OAuth 2.0 token refused');
        throw err;
      }
      const client = new ImapFlow({
        host: s.host,
        port: s.port,
        secure: s.secure,
        auth: accessToken
          ? { user: s.user, accessToken }
          : { user: s.user, pass: s.password ?? '' },
        tls: { rejectUnauthorized: s.tls_reject_unauthorized },
        logger: false,
        clientInfo: { name: 'Trawl retriever-imap' },
        connectionTimeout: 15_000,
        greetingTimeout: 10_000,
      });
      client.on('error', (err: Error) => {
        this.logger.warn({ err: err.message }, 'IMAP connection error');
      });
      client.on('close', () => {
        if (this.current !== client) return;
        const was = this.connected;
        this.connected = false;
        if (was) {
          this.logger.warn('IMAP connection closed');
          this.o.onState?.(false);
        }
        if (!this.closed) this.scheduleReconnect();
      });
      client.on('exists', (info: { path: string }) => {
        if (this.folders && info.path === this.folders.mailbox) this.o.onNewMail?.();
      });
      this.current = client;
      try {
        await client.connect();
        const delimiter = client.namespace?.delimiter || '/';
        const prefix = client.namespace?.prefix ?? '';
        const folder = (p: string) => {
          const path = this.toServerPath(p, delimiter);
          return prefix && !path.startsWith(prefix) && path.toUpperCase() !== 'INBOX'
            ? `${prefix}${path}`
            : path;
        };
        const folders: Folders = {
          mailbox: this.toServerPath(s.mailbox, delimiter),
          processed: folder(s.processed_folder),
          quarantine: folder(s.quarantine_folder),
          hold: folder(s.hold_folder),
        };
        const existing = new Set((await client.list()).map((m) => m.path));
        for (const f of [folders.processed, folders.quarantine, folders.hold]) {
          if (!existing.has(f)) {
            await client.mailboxCreate(f);
            this.logger.info({ folder: f }, 'created IMAP folder');
          }
        }
        // Select the watched mailbox so that the server's IDLE reports new mail.
        await client.mailboxOpen(folders.mailbox);
        this.folders = folders;
        this.connected = true;
        if (this.failures > 0 || this.reconnects > 0) this.logger.info('IMAP connection restored');
        this.failures = 0;
        this.o.onState?.(true);
      } catch (err) {
        this.connected = false;
        // A refused token (expired, revoked): the next attempt asks for a new one.
        if ((err as { authenticationFailed?: boolean }).authenticationFailed)
          this.o.tokens?.invalidate();
        client.close();
        this.logger.warn({ err: (err as Error).message }, 'IMAP connection failed');
        throw err;
      }
    })();
    try {
      await this.connecting;
    } finally {
      this.connecting = undefined;
    }
  }

  private scheduleReconnect(): void {
    if (this.closed || this.timer) return;
    this.failures += 1;
    const delay = backoffDelay(this.failures, {
      initialMs: this.o.reconnectInitialMs ?? 500,
      maxMs: this.o.reconnectMaxMs ?? 30_000,
    });
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (this.closed) return;
      this.reconnects += 1;
      this.connectOnce().catch(() => this.scheduleReconnect());
    }, delay);
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const c = this.current;
    this.current = undefined;
    this.connected = false;
    if (c) {
      try {
        // a polite LOGOUT, bounded: a server or a command that never answers must not hold it
        if (c.usable) await within(c.logout(), LOGOUT_GRACE_MS);
        else c.close();
      } catch {
        c.close();
      }
    }
  }
}

/** How long close() waits for the server to answer LOGOUT before it drops the connection. */
const LOGOUT_GRACE_MS = 2_000;
