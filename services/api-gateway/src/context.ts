import type { EmailParser } from '@trawl/contracts';
import type { AuditTrail } from './audit-trail.ts';
import type { AccessVersions } from './auth/access-versions.ts';
import type { LoginThrottle } from './auth/login-throttle.ts';
import type { PasswordHasher } from './auth/password-hasher.ts';
import type { TokenService } from './auth/tokens.ts';
import type { CpuWork } from './cpu-work/cpu-work.ts';
import type { GatewayDeps } from './deps.ts';
import type { GatewayMetrics } from './plugins/metrics.ts';

/** Everything a route module needs, built once by buildApp. */
export interface GatewayContext extends GatewayDeps {
  now: () => Date;
  tokens: TokenService;
  throttle: LoginThrottle;
  /** Each user's current access version (revocation, checked on every request). */
  versions: AccessVersions;
  /** scrypt with bounded concurrency. */
  passwords: PasswordHasher;
  /** The audit log writer: single rows, aggregated failures, retention. */
  audit: AuditTrail;
  metrics: GatewayMetrics;
  /**
   * The Email schema with the configured limits (`.schema`) and its answers, cheap for plain valid
   * Emails (`emailParser` of @trawl/contracts).
   */
  emailParser: EmailParser;
  /** Raw-message parsing and the message view: inline when small, in worker threads when large. */
  cpu: CpuWork;
}
