import { brokerNotFound, brokerUnavailable } from '../errors.ts';
import { errorInfo, type PlatformLogger, silentLogger } from '../logger.ts';
import { topicMatches } from './topic-match.ts';
import type {
  Broker,
  ConsumeOptions,
  Consumer,
  Delivery,
  DeliveryHandler,
  ExchangeType,
  PublishOptions,
  QueueOptions,
} from './types.ts';

/**
 * In-process broker with the semantics of the RabbitMQ adapter: direct/topic/fanout routing, the
 * default exchange (''), prefetch, manual ack, nack with requeue (redelivered), quorum delivery
 * counts and delivery limits, dead-letter exchanges, message TTL, exclusive queues, and "confirms"
 * (publish resolves once the message is enqueued).
 *
 * `connect()` opens another handle on the same in-process server (another "connection"): closing
 * a handle returns its unacked messages and deletes its exclusive queues. `dropConnection()`
 * simulates a connection loss followed by a reconnect, for tests.
 */
export interface MemoryBroker extends Broker {
  readonly kind: 'memory';
  /** Another connection to the same in-process server. */
  connect(): MemoryBroker;
  /**
   * Simulates a server-side connection close: unacked deliveries go back to their queues
   * (redelivered), acks of old deliveries reject, publishes reject until the handle reconnects
   * after `reconnectMs`; then consumers are re-attached.
   */
  dropConnection(reconnectMs?: number): Promise<void>;
}

interface StoredMessage {
  body: string;
  exchange: string;
  routingKey: string;
  messageId: string | undefined;
  headers: Record<string, unknown>;
  /** Returns to the queue so far (quorum x-delivery-count). */
  returns: number;
  redelivered: boolean;
  expiresAt: number | null;
}

interface MemQueue {
  name: string;
  type: 'quorum' | 'classic';
  opts: QueueOptions;
  ready: StoredMessage[];
  consumers: MemConsumer[];
  rr: number;
  owner: Handle | null;
}

interface MemExchange {
  name: string;
  type: ExchangeType;
  bindings: { queue: string; key: string }[];
}

interface Inflight {
  msg: StoredMessage;
  /** acked/nacked by the handler, or returned to the queue (cancel, connection loss). */
  state: 'pending' | 'settled' | 'returned';
}

interface MemConsumer {
  queue: MemQueue;
  handler: DeliveryHandler;
  prefetch: number;
  handle: Handle;
  /** Bumped on connection loss: deliveries of an older generation can no longer be acked. */
  generation: number;
  inflight: Set<Inflight>;
  running: Set<Promise<void>>;
  attached: boolean;
  cancelled: boolean;
}

class Server {
  readonly exchanges = new Map<string, MemExchange>();
  readonly queues = new Map<string, MemQueue>();
  private readonly scheduled = new Set<MemQueue>();

  constructor(readonly logger: PlatformLogger) {}

  route(exchange: string, routingKey: string): MemQueue[] {
    if (exchange === '') {
      const q = this.queues.get(routingKey);
      return q ? [q] : [];
    }
    const ex = this.exchanges.get(exchange);
    if (!ex) throw brokerNotFound(`exchange ${exchange} does not exist`);
    const out = new Set<MemQueue>();
    for (const b of ex.bindings) {
      const matches =
        ex.type === 'fanout' ||
        (ex.type === 'direct' && b.key === routingKey) ||
        (ex.type === 'topic' && topicMatches(b.key, routingKey));
      const q = matches ? this.queues.get(b.queue) : undefined;
      if (q) out.add(q);
    }
    return [...out];
  }

  enqueue(q: MemQueue, msg: StoredMessage): void {
    q.ready.push(msg);
    this.schedule(q);
  }

  /** A delivery came back unsettled: count it, dead-letter it past the delivery limit. */
  returnMessage(q: MemQueue, msg: StoredMessage): void {
    if (!this.queues.has(q.name)) return;
    msg.returns += 1;
    msg.redelivered = true;
    const limit = q.opts.deliveryLimit;
    if (q.type === 'quorum' && limit !== undefined && msg.returns > limit) {
      this.deadLetter(q, msg, 'delivery_limit');
      return;
    }
    q.ready.unshift(msg);
    this.schedule(q);
  }

  deadLetter(
    q: MemQueue,
    msg: StoredMessage,
    reason: 'rejected' | 'delivery_limit' | 'expired',
  ): void {
    const dlx = q.opts.deadLetterExchange;
    if (dlx === undefined) return;
    const headers: Record<string, unknown> = { ...msg.headers };
    if (headers['x-first-death-reason'] === undefined) {
      headers['x-first-death-reason'] = reason;
      headers['x-first-death-queue'] = q.name;
      headers['x-first-death-exchange'] = msg.exchange;
    }
    headers['x-last-death-reason'] = reason;
    headers['x-last-death-queue'] = q.name;
    const key = q.opts.deadLetterRoutingKey ?? msg.routingKey;
    let targets: MemQueue[];
    try {
      targets = this.route(dlx, key);
    } catch {
      this.logger.warn({ queue: q.name, dlx }, 'dead-letter exchange missing; message dropped');
      return;
    }
    for (const t of targets) {
      this.enqueue(t, {
        ...msg,
        exchange: dlx,
        routingKey: key,
        headers,
        returns: 0,
        redelivered: false,
        expiresAt: expiry(t),
      });
    }
  }

  schedule(q: MemQueue): void {
    if (this.scheduled.has(q)) return;
    this.scheduled.add(q);
    setImmediate(() => {
      this.scheduled.delete(q);
      this.dispatch(q);
    });
  }

  dropExpired(q: MemQueue): void {
    if (q.opts.messageTtlMs === undefined) return;
    const now = Date.now();
    const keep: StoredMessage[] = [];
    for (const m of q.ready) {
      if (m.expiresAt !== null && m.expiresAt <= now) this.deadLetter(q, m, 'expired');
      else keep.push(m);
    }
    q.ready = keep;
  }

  private dispatch(q: MemQueue): void {
    if (!this.queues.has(q.name)) return;
    this.dropExpired(q);
    while (q.ready.length > 0) {
      const consumer = this.nextConsumer(q);
      if (!consumer) return;
      const msg = q.ready.shift() as StoredMessage;
      this.deliver(consumer, msg);
    }
  }

  private nextConsumer(q: MemQueue): MemConsumer | undefined {
    const n = q.consumers.length;
    for (let i = 0; i < n; i++) {
      const c = q.consumers[(q.rr + i) % n] as MemConsumer;
      if (c.attached && !c.cancelled && c.inflight.size < c.prefetch) {
        q.rr = (q.rr + i + 1) % n;
        return c;
      }
    }
    return undefined;
  }

  private deliver(c: MemConsumer, msg: StoredMessage): void {
    const entry: Inflight = { msg, state: 'pending' };
    const generation = c.generation;
    c.inflight.add(entry);
    const settle = (): boolean => {
      if (entry.state === 'returned' || generation !== c.generation || !c.handle.connected) {
        throw brokerUnavailable(
          'the connection this delivery came from is gone; it will be redelivered',
        );
      }
      if (entry.state === 'settled') return false;
      entry.state = 'settled';
      c.inflight.delete(entry);
      this.schedule(c.queue);
      return true;
    };
    const delivery: Delivery = {
      body: JSON.parse(msg.body) as unknown,
      routingKey: msg.routingKey,
      exchange: msg.exchange,
      messageId: msg.messageId,
      headers: { ...msg.headers },
      redelivered: msg.redelivered,
      deliveryCount: msg.returns + 1,
      ack: async () => {
        settle();
      },
      nack: async (opts) => {
        if (!settle()) return;
        if (opts?.requeue === false) this.deadLetter(c.queue, msg, 'rejected');
        else this.returnMessage(c.queue, msg);
      },
    };
    const run = (async () => {
      try {
        await c.handler(delivery);
      } catch (err) {
        this.logger.warn(
          { queue: c.queue.name, messageId: msg.messageId, err: errorInfo(err) },
          'delivery handler failed; message requeued',
        );
        if (entry.state === 'pending')
          await delivery.nack({ requeue: true }).catch(() => undefined);
      }
    })();
    c.running.add(run);
    void run.finally(() => c.running.delete(run));
  }

  /** Gives back every unsettled delivery of a consumer (cancel, close, connection loss). */
  returnUnsettled(c: MemConsumer): void {
    for (const entry of c.inflight) {
      entry.state = 'returned';
      this.returnMessage(c.queue, entry.msg);
    }
    c.inflight.clear();
  }
}

function expiry(q: MemQueue): number | null {
  return q.opts.messageTtlMs === undefined ? null : Date.now() + q.opts.messageTtlMs;
}

class Handle implements MemoryBroker {
  readonly kind = 'memory' as const;
  connected = true;
  private closed = false;
  private readonly consumers = new Set<MemConsumer>();

  constructor(private readonly server: Server) {}

  connect(): MemoryBroker {
    return new Handle(this.server);
  }

  private check(): void {
    if (!this.connected) throw brokerUnavailable('broker connection is closed');
  }

  async assertExchange(name: string, type: ExchangeType): Promise<void> {
    this.check();
    if (!this.server.exchanges.has(name))
      this.server.exchanges.set(name, { name, type, bindings: [] });
  }

  async assertQueue(name: string, opts: QueueOptions = {}): Promise<void> {
    this.check();
    if (this.server.queues.has(name)) return;
    const classic = opts.type === 'classic' || opts.exclusive === true || opts.autoDelete === true;
    this.server.queues.set(name, {
      name,
      type: classic ? 'classic' : 'quorum',
      opts,
      ready: [],
      consumers: [],
      rr: 0,
      owner: opts.exclusive === true ? this : null,
    });
  }

  async bindQueue(queue: string, exchange: string, routingKey: string): Promise<void> {
    this.check();
    const ex = this.server.exchanges.get(exchange);
    if (!ex) throw brokerNotFound(`exchange ${exchange} does not exist`);
    if (!this.server.queues.has(queue)) throw brokerNotFound(`queue ${queue} does not exist`);
    if (!ex.bindings.some((b) => b.queue === queue && b.key === routingKey)) {
      ex.bindings.push({ queue, key: routingKey });
    }
  }

  async deleteQueue(name: string): Promise<void> {
    this.check();
    const q = this.server.queues.get(name);
    if (!q) return;
    this.server.queues.delete(name);
    for (const c of q.consumers) {
      c.cancelled = true;
      c.inflight.clear();
    }
    q.consumers = [];
    q.ready = [];
    for (const ex of this.server.exchanges.values()) {
      ex.bindings = ex.bindings.filter((b) => b.queue !== name);
    }
  }

  async deleteExchange(name: string): Promise<void> {
    this.check();
    this.server.exchanges.delete(name);
  }

  async publish(
    exchange: string,
    routingKey: string,
    body: unknown,
    opts: PublishOptions = {},
  ): Promise<void> {
    this.check();
    const text = JSON.stringify(body) ?? 'null';
    for (const q of this.server.route(exchange, routingKey)) {
      this.server.enqueue(q, {
        body: text,
        exchange,
        routingKey,
        messageId: opts.messageId,
        headers: { ...(opts.headers ?? {}) },
        returns: 0,
        redelivered: false,
        expiresAt: expiry(q),
      });
    }
  }

  async consume(queue: string, handler: DeliveryHandler, opts: ConsumeOptions): Promise<Consumer> {
    this.check();
    const q = this.server.queues.get(queue);
    if (!q) throw brokerNotFound(`queue ${queue} does not exist`);
    const c: MemConsumer = {
      queue: q,
      handler,
      prefetch: opts.prefetch > 0 ? opts.prefetch : Number.POSITIVE_INFINITY,
      handle: this,
      generation: 0,
      inflight: new Set(),
      running: new Set(),
      attached: true,
      cancelled: false,
    };
    q.consumers.push(c);
    this.consumers.add(c);
    this.server.schedule(q);
    return { cancel: () => this.cancel(c) };
  }

  private async cancel(c: MemConsumer): Promise<void> {
    if (c.cancelled && !this.consumers.has(c)) return;
    c.cancelled = true;
    c.queue.consumers = c.queue.consumers.filter((x) => x !== c);
    this.consumers.delete(c);
    await Promise.allSettled([...c.running]);
    this.server.returnUnsettled(c);
  }

  async queueDepth(name: string): Promise<number> {
    this.check();
    const q = this.server.queues.get(name);
    if (!q) throw brokerNotFound(`queue ${name} does not exist`);
    this.server.dropExpired(q);
    return q.ready.length;
  }

  async ping(): Promise<number> {
    this.check();
    return 0;
  }

  isConnected(): boolean {
    return this.connected;
  }

  async dropConnection(reconnectMs = 50): Promise<void> {
    if (!this.connected) return;
    this.connected = false;
    for (const c of this.consumers) {
      c.generation += 1;
      c.attached = false;
      this.server.returnUnsettled(c);
    }
    for (const q of this.server.queues.values()) {
      if (q.owner === this) q.ready = [];
    }
    setTimeout(() => {
      if (this.closed) return;
      this.connected = true;
      for (const c of this.consumers) {
        c.attached = true;
        this.server.schedule(c.queue);
      }
    }, reconnectMs).unref();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all([...this.consumers].map((c) => this.cancel(c)));
    for (const q of [...this.server.queues.values()]) {
      if (q.owner === this) await this.deleteQueue(q.name);
    }
    this.connected = false;
  }
}

/** The in-process broker of embedded mode, with RabbitMQ's semantics (ack, redelivery, dead letters). */
export function createMemoryBroker(opts: { logger?: PlatformLogger } = {}): MemoryBroker {
  return new Handle(new Server(opts.logger ?? silentLogger));
}
