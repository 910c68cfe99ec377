import { backoffDelay, errorText } from '@trawl/contracts';
import amqp, {
  type Channel,
  type ChannelModel,
  type ConfirmChannel,
  type ConsumeMessage,
} from 'amqplib';
import { brokerNotFound, brokerUnavailable, PLATFORM_ERRORS } from '../errors.ts';
import { errorInfo, type PlatformLogger, silentLogger } from '../logger.ts';
import type {
  Broker,
  ConsumeOptions,
  Delivery,
  DeliveryHandler,
  ExchangeType,
  QueueOptions,
} from './types.ts';

/** How to reach RabbitMQ: URL, connection name, reconnect back-off, publish and drain timeouts. */
export interface RabbitBrokerOptions {
  url: string;
  /** Shown by RabbitMQ (management UI, rabbitmqctl list_connections). */
  connectionName?: string;
  logger?: PlatformLogger;
  reconnect?: { initialMs: number; maxMs: number };
  /** A publish not confirmed within this time rejects (default 10 s). */
  publishTimeoutMs?: number;
  /** How long close() and cancel() wait for running handlers (default 10 s). */
  drainTimeoutMs?: number;
}

/** The broker over RabbitMQ (amqplib). */
export interface RabbitBroker extends Broker {
  readonly kind: 'rabbitmq';
  /** Queues and exchanges this broker declared (re-declared after a reconnect). */
  declared(): { queues: string[]; exchanges: string[] };
  /** Resolves once connected (after start or a reconnect); rejects after `timeoutMs`. */
  waitConnected(timeoutMs?: number): Promise<void>;
}

type Declaration =
  | { kind: 'exchange'; name: string; type: ExchangeType }
  | { kind: 'queue'; name: string; opts: QueueOptions }
  | { kind: 'binding'; queue: string; exchange: string; key: string };

interface ConsumerRecord {
  queue: string;
  handler: DeliveryHandler;
  opts: ConsumeOptions;
  channel: Channel | null;
  tag: string | null;
  cancelled: boolean;
  running: Set<Promise<void>>;
  retryTimer: NodeJS.Timeout | null;
}

function queueArgs(opts: QueueOptions): { options: amqp.Options.AssertQueue; quorum: boolean } {
  const classic = opts.type === 'classic' || opts.exclusive === true || opts.autoDelete === true;
  const args: Record<string, unknown> = { 'x-queue-type': classic ? 'classic' : 'quorum' };
  if (opts.deadLetterExchange !== undefined)
    args['x-dead-letter-exchange'] = opts.deadLetterExchange;
  if (opts.deadLetterRoutingKey !== undefined)
    args['x-dead-letter-routing-key'] = opts.deadLetterRoutingKey;
  if (opts.deliveryLimit !== undefined && !classic) args['x-delivery-limit'] = opts.deliveryLimit;
  if (opts.messageTtlMs !== undefined) args['x-message-ttl'] = opts.messageTtlMs;
  return {
    quorum: !classic,
    options: {
      durable: classic ? (opts.durable ?? !opts.exclusive) : true,
      exclusive: opts.exclusive ?? false,
      autoDelete: opts.autoDelete ?? false,
      arguments: args,
    },
  };
}

function isNotFound(err: unknown): boolean {
  return err instanceof Error && /NOT_FOUND|404/.test(err.message);
}

/** The error a channel was closed with (set before its pending confirms fail). */
const channelErrors = new WeakMap<Channel, Error>();

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

interface Corkable {
  cork(): void;
  uncork(): void;
}

/** The connection's socket (amqplib keeps it as `connection.stream`); undefined if that changes. */
function socketOf(c: ChannelModel): Corkable | undefined {
  const stream = (c.connection as unknown as { stream?: Partial<Corkable> }).stream;
  return typeof stream?.cork === 'function' && typeof stream.uncork === 'function'
    ? (stream as Corkable)
    : undefined;
}

/**
 * RabbitMQ broker (amqplib): one connection; a confirm channel for publishing; one channel per
 * consumer (prefetch, manual ack). After a connection loss it reconnects with exponential backoff
 * and jitter, re-declares everything it declared and re-attaches its consumers. Publishes while
 * disconnected reject at once (TRAWL_ERR_BROKER_UNAVAILABLE): nothing is buffered.
 */
export function createRabbitBroker(opts: RabbitBrokerOptions): RabbitBroker {
  const log = opts.logger ?? silentLogger;
  const reconnect = opts.reconnect ?? { initialMs: 200, maxMs: 10_000 };
  const publishTimeoutMs = opts.publishTimeoutMs ?? 10_000;
  const drainTimeoutMs = opts.drainTimeoutMs ?? 10_000;
  const connectionName = opts.connectionName ?? 'trawl';

  let conn: ChannelModel | null = null;
  let pub: ConfirmChannel | null = null;
  let pubOpening: Promise<ConfirmChannel> | null = null;
  let connecting: Promise<void> | null = null;
  let closing = false;
  let attempt = 0;
  let reconnectTimer: NodeJS.Timeout | null = null;
  const declarations: Declaration[] = [];
  const consumers = new Set<ConsumerRecord>();
  let waiters: (() => void)[] = [];
  /** The socket corked for this event-loop turn's writes, if any (see coalesceWrites). */
  let corked: Corkable | undefined;

  /**
   * Publishes and acks of one event-loop turn (e.g. every submission of a group-committed batch)
   * leave in one socket write instead of one each. amqplib writes a channel's frames from a
   * setImmediate, scheduled on the tick after the first write; the socket is corked on that tick,
   * after it, and uncorked by a setImmediate queued behind amqplib's: one writev for the turn.
   */
  function coalesceWrites(c: ChannelModel | null): void {
    if (!c || corked) return;
    const sock = socketOf(c);
    if (!sock) return;
    corked = sock;
    process.nextTick(() => {
      sock.cork();
      setImmediate(() => {
        corked = undefined;
        sock.uncork();
      });
    });
  }

  const connected = (): boolean => conn !== null && !closing;

  async function openPublishChannel(c: ChannelModel): Promise<ConfirmChannel> {
    const ch = await c.createConfirmChannel();
    ch.on('error', (err: Error) => {
      channelErrors.set(ch, err);
      log.warn({ err: errorInfo(err) }, 'broker publish channel error');
    });
    ch.on('close', () => {
      if (pub === ch) pub = null;
    });
    pub = ch;
    return ch;
  }

  async function publishChannel(): Promise<ConfirmChannel> {
    if (pub) return pub;
    const c = conn;
    if (!c || closing) throw brokerUnavailable('broker is not connected');
    if (!pubOpening) {
      pubOpening = openPublishChannel(c).finally(() => {
        pubOpening = null;
      });
    }
    try {
      return await pubOpening;
    } catch (err) {
      throw brokerUnavailable('broker channel could not be opened', err);
    }
  }

  /** Runs one declaration or inspection on a short-lived channel (a failed one closes it). */
  async function withChannel<T>(fn: (ch: Channel) => Promise<T>): Promise<T> {
    const c = conn;
    if (!c || closing) throw brokerUnavailable('broker is not connected');
    let ch: Channel;
    try {
      ch = await c.createChannel();
    } catch (err) {
      throw brokerUnavailable('broker channel could not be opened', err);
    }
    ch.on('error', () => {});
    try {
      return await fn(ch);
    } catch (err) {
      if (isNotFound(err)) throw brokerNotFound(errorText(err), err);
      if (err instanceof Error && /PRECONDITION_FAILED/.test(err.message)) throw err;
      if (!conn) throw brokerUnavailable('broker connection lost', err);
      throw err;
    } finally {
      ch.close().catch(() => undefined);
    }
  }

  async function apply(ch: Channel, d: Declaration): Promise<void> {
    if (d.kind === 'exchange') await ch.assertExchange(d.name, d.type, { durable: true });
    else if (d.kind === 'queue') await ch.assertQueue(d.name, queueArgs(d.opts).options);
    else await ch.bindQueue(d.queue, d.exchange, d.key);
  }

  function remember(d: Declaration): void {
    const same = (x: Declaration): boolean =>
      x.kind === d.kind &&
      (d.kind === 'binding'
        ? x.kind === 'binding' &&
          x.queue === d.queue &&
          x.exchange === d.exchange &&
          x.key === d.key
        : (x as { name: string }).name === d.name);
    if (!declarations.some(same)) declarations.push(d);
  }

  async function attach(rec: ConsumerRecord): Promise<void> {
    const c = conn;
    if (!c || rec.cancelled || closing) return;
    const ch = await c.createChannel();
    rec.channel = ch;
    ch.on('error', (err) =>
      log.warn({ queue: rec.queue, err: errorInfo(err) }, 'broker consumer channel error'),
    );
    ch.on('close', () => {
      if (rec.channel !== ch) return;
      rec.channel = null;
      rec.tag = null;
      // the channel died but the connection lives on (e.g. the queue was deleted): retry
      if (!rec.cancelled && conn === c && !closing) scheduleAttach(rec);
    });
    await ch.prefetch(rec.opts.prefetch);
    const reply = await ch.consume(rec.queue, (msg) => onMessage(rec, ch, msg), {
      noAck: false,
      ...(rec.opts.consumerTag === undefined ? {} : { consumerTag: rec.opts.consumerTag }),
    });
    rec.tag = reply.consumerTag;
  }

  /** Re-attaches a consumer after `failures` failed attempts (0: the first try). */
  function scheduleAttach(rec: ConsumerRecord, failures = 0): void {
    if (rec.retryTimer) return;
    rec.retryTimer = setTimeout(
      () => {
        rec.retryTimer = null;
        if (rec.cancelled || !conn || rec.channel) return;
        attach(rec).catch((err) => {
          log.warn(
            { queue: rec.queue, err: errorInfo(err) },
            'broker consumer could not re-attach; retrying',
          );
          scheduleAttach(rec, failures + 1);
        });
      },
      backoffDelay(failures + 1, reconnect),
    );
    rec.retryTimer.unref();
  }

  function onMessage(rec: ConsumerRecord, ch: Channel, msg: ConsumeMessage | null): void {
    if (msg === null) {
      // cancelled by the server (queue deleted): the channel stays open; try again later
      if (rec.channel === ch) {
        rec.channel = null;
        ch.close().catch(() => undefined);
      }
      return;
    }
    let settled = false;
    const settle = (): boolean => {
      if (settled) return false;
      if (rec.channel !== ch) {
        throw brokerUnavailable(
          'the channel this delivery came from is gone; it will be redelivered',
        );
      }
      settled = true;
      return true;
    };
    let body: unknown;
    try {
      body = JSON.parse(msg.content.toString('utf8'));
    } catch {
      log.error(
        {
          queue: rec.queue,
          messageId: msg.properties.messageId,
          code: PLATFORM_ERRORS.brokerBadMessage,
        },
        'message body is not JSON; dead-lettered',
      );
      ch.nack(msg, false, false);
      return;
    }
    const headers = (msg.properties.headers ?? {}) as Record<string, unknown>;
    const count = Number(headers['x-delivery-count'] ?? 0);
    const delivery: Delivery = {
      body,
      routingKey: msg.fields.routingKey,
      exchange: msg.fields.exchange,
      messageId: msg.properties.messageId as string | undefined,
      headers,
      redelivered: msg.fields.redelivered,
      deliveryCount: (Number.isFinite(count) ? count : 0) + 1,
      ack: async () => {
        if (!settle()) return;
        ch.ack(msg);
        coalesceWrites(conn);
      },
      nack: async (o) => {
        if (!settle()) return;
        ch.nack(msg, false, o?.requeue !== false);
        coalesceWrites(conn);
      },
    };
    const run = (async () => {
      try {
        await rec.handler(delivery);
      } catch (err) {
        log.warn(
          { queue: rec.queue, messageId: delivery.messageId, err: errorInfo(err) },
          'delivery handler failed; message requeued',
        );
        if (!settled) await delivery.nack({ requeue: true }).catch(() => undefined);
      }
    })();
    rec.running.add(run);
    void run.finally(() => rec.running.delete(run));
  }

  async function connectOnce(): Promise<void> {
    const c = await amqp.connect(opts.url, {
      clientProperties: { connection_name: connectionName },
      timeout: 5000,
    });
    c.on('error', (err) => log.warn({ err: errorInfo(err) }, 'broker connection error'));
    c.on('close', () => {
      if (conn !== c) return;
      conn = null;
      pub = null;
      for (const rec of consumers) {
        rec.channel = null;
        rec.tag = null;
      }
      if (!closing) {
        log.warn({ connection: connectionName }, 'broker connection lost; reconnecting');
        scheduleReconnect();
      }
    });
    try {
      for (const d of declarations) {
        const ch = await c.createChannel();
        ch.on('error', () => {});
        try {
          await apply(ch, d);
        } catch (err) {
          log.error({ declaration: d, err: errorInfo(err) }, 'broker re-declaration failed');
        } finally {
          await ch.close().catch(() => undefined);
        }
      }
      conn = c;
      await openPublishChannel(c);
    } catch (err) {
      conn = null;
      await c.close().catch(() => undefined);
      throw err;
    }
    if (closing) {
      await c.close().catch(() => undefined);
      conn = null;
      return;
    }
    for (const rec of consumers) {
      if (rec.cancelled) continue;
      await attach(rec).catch((err) => {
        log.warn(
          { queue: rec.queue, err: errorInfo(err) },
          'broker consumer could not re-attach; retrying',
        );
        scheduleAttach(rec);
      });
    }
    attempt = 0;
    const w = waiters;
    waiters = [];
    for (const fn of w) fn();
    log.info({ connection: connectionName }, 'broker connected');
  }

  function scheduleReconnect(): void {
    if (closing || reconnectTimer || connecting) return;
    attempt++;
    const delay = backoffDelay(attempt, { ...reconnect, jitter: 0.5 });
    reconnectTimer = setTimeout(() => {
      reconnectTimer = null;
      connecting = connectOnce()
        .catch((err) => {
          log.warn({ err: errorInfo(err), attempt }, 'broker reconnect failed');
          connecting = null;
          scheduleReconnect();
        })
        .finally(() => {
          connecting = null;
        });
    }, delay);
  }

  // First connection: started at once; callers wait for it through every operation below.
  connecting = connectOnce()
    .catch((err) => {
      log.warn({ err: errorInfo(err) }, 'broker connection failed; retrying');
      connecting = null;
      scheduleReconnect();
    })
    .finally(() => {
      connecting = null;
    });
  const initial = connecting;

  async function ready(): Promise<void> {
    await initial;
    if (closing) throw brokerUnavailable('broker is closed');
  }

  const broker: RabbitBroker = {
    kind: 'rabbitmq',

    async assertExchange(name, type) {
      await ready();
      const d: Declaration = { kind: 'exchange', name, type };
      await withChannel((ch) => apply(ch, d));
      remember(d);
    },

    async assertQueue(name, qopts = {}) {
      await ready();
      const d: Declaration = { kind: 'queue', name, opts: qopts };
      await withChannel((ch) => apply(ch, d));
      remember(d);
    },

    async bindQueue(queue, exchange, key) {
      await ready();
      const d: Declaration = { kind: 'binding', queue, exchange, key };
      await withChannel((ch) => apply(ch, d));
      remember(d);
    },

    async deleteQueue(name) {
      await ready();
      for (let i = declarations.length - 1; i >= 0; i--) {
        const d = declarations[i] as Declaration;
        if ((d.kind === 'queue' && d.name === name) || (d.kind === 'binding' && d.queue === name)) {
          declarations.splice(i, 1);
        }
      }
      await withChannel((ch) => ch.deleteQueue(name));
    },

    async deleteExchange(name) {
      await ready();
      for (let i = declarations.length - 1; i >= 0; i--) {
        const d = declarations[i] as Declaration;
        if (
          (d.kind === 'exchange' && d.name === name) ||
          (d.kind === 'binding' && d.exchange === name)
        ) {
          declarations.splice(i, 1);
        }
      }
      await withChannel((ch) => ch.deleteExchange(name));
    },

    async publish(exchange, routingKey, body, popts = {}) {
      await ready();
      const ch = await publishChannel();
      const c = conn;
      const content = Buffer.from(JSON.stringify(body) ?? 'null', 'utf8');
      await new Promise<void>((resolve, reject) => {
        let done = false;
        const finish = (err: unknown) => {
          if (done) return;
          done = true;
          clearTimeout(timer);
          if (err === null || err === undefined) resolve();
          else if (isNotFound(err))
            reject(brokerNotFound(`exchange ${exchange} does not exist`, err));
          else reject(brokerUnavailable('broker did not confirm the message', err));
        };
        const timer = setTimeout(
          () => finish(new Error('publish confirm timed out')),
          publishTimeoutMs,
        );
        try {
          ch.publish(
            exchange,
            routingKey,
            content,
            {
              persistent: popts.persistent ?? true,
              contentType: popts.contentType ?? 'application/json',
              ...(popts.messageId === undefined ? {} : { messageId: popts.messageId }),
              ...(popts.headers === undefined ? {} : { headers: popts.headers }),
            },
            // a publish to a missing exchange closes the channel; its error (404) is recorded first
            (err) => finish(err ? (channelErrors.get(ch) ?? err) : null),
          );
          coalesceWrites(c);
        } catch (err) {
          finish(err);
        }
      });
    },

    async consume(queue, handler, copts) {
      await ready();
      const rec: ConsumerRecord = {
        queue,
        handler,
        opts: copts,
        channel: null,
        tag: null,
        cancelled: false,
        running: new Set(),
        retryTimer: null,
      };
      if (!conn) throw brokerUnavailable('broker is not connected');
      try {
        await attach(rec);
      } catch (err) {
        const ch = rec.channel as Channel | null;
        rec.channel = null;
        rec.cancelled = true;
        if (rec.retryTimer) clearTimeout(rec.retryTimer);
        ch?.close().catch(() => undefined);
        if (isNotFound(err)) throw brokerNotFound(`queue ${queue} does not exist`, err);
        throw brokerUnavailable('could not start consuming', err);
      }
      consumers.add(rec);
      const cancel = async (): Promise<void> => {
        if (rec.cancelled) return;
        rec.cancelled = true;
        consumers.delete(rec);
        if (rec.retryTimer) clearTimeout(rec.retryTimer);
        const ch = rec.channel;
        if (ch && rec.tag) await ch.cancel(rec.tag).catch(() => undefined);
        await Promise.race([Promise.allSettled([...rec.running]), sleep(drainTimeoutMs)]);
        rec.channel = null;
        // closing the channel returns every delivery still unacked: redelivered to other consumers
        if (ch) await ch.close().catch(() => undefined);
      };
      return { cancel };
    },

    async queueDepth(name) {
      await ready();
      return withChannel(async (ch) => (await ch.checkQueue(name)).messageCount);
    },

    async ping() {
      await ready();
      const t = performance.now();
      await withChannel((ch) => ch.checkExchange('amq.direct'));
      return performance.now() - t;
    },

    isConnected: () => connected(),

    declared() {
      return {
        queues: declarations.flatMap((d) => (d.kind === 'queue' ? [d.name] : [])),
        exchanges: declarations.flatMap((d) => (d.kind === 'exchange' ? [d.name] : [])),
      };
    },

    async waitConnected(timeoutMs = 30_000) {
      await initial;
      if (connected()) return;
      if (closing) throw brokerUnavailable('broker is closed');
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters = waiters.filter((w) => w !== done);
          reject(brokerUnavailable('broker did not reconnect in time'));
        }, timeoutMs);
        const done = () => {
          clearTimeout(timer);
          resolve();
        };
        waiters.push(done);
      });
    },

    async close() {
      if (closing) return;
      await initial;
      const recs = [...consumers];
      await Promise.all(
        recs.map(async (rec) => {
          rec.cancelled = true;
          if (rec.retryTimer) clearTimeout(rec.retryTimer);
          if (rec.channel && rec.tag) await rec.channel.cancel(rec.tag).catch(() => undefined);
          await Promise.race([Promise.allSettled([...rec.running]), sleep(drainTimeoutMs)]);
        }),
      );
      closing = true;
      consumers.clear();
      if (reconnectTimer) clearTimeout(reconnectTimer);
      if (pub) await pub.waitForConfirms().catch(() => undefined);
      const c = conn;
      conn = null;
      if (c) await c.close().catch(() => undefined);
      const w = waiters;
      waiters = [];
      for (const fn of w) fn();
    },
  };
  return broker;
}
