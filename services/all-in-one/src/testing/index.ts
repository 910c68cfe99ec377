// `@trawl/all-in-one/testing`: what stacks of services started by tests and benches share.
export {
  /** What shippedConfig answers. */
  type ShippedConfig,
  /** The shipped configuration's state, source and built-in invoker on the test servers. */
  shippedConfig,
} from './shipped-config.ts';
