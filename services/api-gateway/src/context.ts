import type { EmailParser } from '@trawl/contracts';
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
  /**
   * The Email schema with the configured limits (`.schema`) and its answers, cheap for plain valid
   * Emails (`emailParser` of @trawl/contracts).
   */
  emailParser: EmailParser;
}
