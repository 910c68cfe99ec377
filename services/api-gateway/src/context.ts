import type { Email } from '@trawl/contracts';
import type { z } from 'zod';
import type { LoginThrottle } from './auth/login-throttle.ts';
import type { TokenService } from './auth/tokens.ts';
import type { GatewayDeps } from './deps.ts';
import type { GatewayMetrics } from './plugins/metrics.ts';

/** Everything a route module needs, built once by buildApp. */
export interface GatewayContext extends GatewayDeps {
  now: () => Date;
  tokens: TokenService;
  throttle: LoginThrottle;
  metrics: GatewayMetrics;
  /** The Email schema with the configured limits. */
  emailSchema: z.ZodType<Email>;
}
