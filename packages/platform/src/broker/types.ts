/**
 * The broker adapter: one interface, two implementations (RabbitMQ via amqplib, in-process), one
 * conformance suite both pass (src/testing/broker-conformance.ts).
 *
 * Semantics both implementations keep:
 *  - publish() resolves only once the broker confirmed the message (publisher confirms), rejects with
 *    a TransientError (code TRAWL_ERR_BROKER_UNAVAILABLE) when it cannot be confirmed;
 *  - consume() delivers at most `prefetch` unacked messages at once; a message is removed only by ack();
 *    nack({requeue:true}) or a lost consumer/connection redelivers it with `redelivered: true`;
 *  - quorum queues count deliveries; past `deliveryLimit` a message goes to the queue's dead-letter
 *    exchange, as does nack({requeue:false});
 *  - after a connection loss the RabbitMQ adapter reconnects with backoff, re-declares the topology it
 *    declared, and resumes its consumers.
 */
export type ExchangeType = 'direct' | 'topic' | 'fanout';

export interface QueueOptions {
  /** quorum (durable, replicated; the default for work queues) or classic. */
  type?: 'quorum' | 'classic';
  durable?: boolean;
  /** Exclusive to this connection and deleted with it (classic only): per-replica event queues. */
  exclusive?: boolean;
  autoDelete?: boolean;
  deadLetterExchange?: string;
  deadLetterRoutingKey?: string;
  /** Deliveries after which a message is dead-lettered (quorum x-delivery-limit). */
  deliveryLimit?: number;
  /** Message TTL in ms. */
  messageTtlMs?: number;
}

export interface PublishOptions {
  messageId?: string;
  headers?: Record<string, string | number | boolean>;
  persistent?: boolean;
  contentType?: string;
}

export interface Delivery {
  /** Parsed JSON body (the adapters publish and consume JSON). */
  body: unknown;
  routingKey: string;
  exchange: string;
  messageId: string | undefined;
  headers: Record<string, unknown>;
  redelivered: boolean;
  /** 1 on first delivery; counted by the broker where it can (quorum x-delivery-count + 1). */
  deliveryCount: number;
  ack(): Promise<void>;
  nack(opts?: { requeue?: boolean }): Promise<void>;
}

export type DeliveryHandler = (delivery: Delivery) => Promise<void>;

export interface ConsumeOptions {
  prefetch: number;
  consumerTag?: string;
}

export interface Consumer {
  /** Stops new deliveries; unacked ones stay with the handler until acked or nacked. */
  cancel(): Promise<void>;
}

export interface Broker {
  readonly kind: 'rabbitmq' | 'memory';
  assertExchange(name: string, type: ExchangeType): Promise<void>;
  assertQueue(name: string, opts?: QueueOptions): Promise<void>;
  bindQueue(queue: string, exchange: string, routingKey: string): Promise<void>;
  deleteQueue(name: string): Promise<void>;
  deleteExchange(name: string): Promise<void>;
  publish(
    exchange: string,
    routingKey: string,
    body: unknown,
    opts?: PublishOptions,
  ): Promise<void>;
  consume(queue: string, handler: DeliveryHandler, opts: ConsumeOptions): Promise<Consumer>;
  /** Messages ready in a queue (not counting unacked ones). */
  queueDepth(name: string): Promise<number>;
  /** Round-trip to the broker, in ms; rejects when it is down. */
  ping(): Promise<number>;
  isConnected(): boolean;
  close(): Promise<void>;
}
