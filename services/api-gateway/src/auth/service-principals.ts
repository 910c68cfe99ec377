import { type Party, partyLabel, verifyCredential } from '@trawl/contracts';
import { secretMatcher } from './passwords.ts';

/**
 * What a service credential may do at the gateway: each route names the scopes that let a service
 * call it (`config.access.service`), each caller holds the scopes of its kind (SCOPES_OF below).
 * See docs/security.md, "Credentials: who holds what".
 */
export const SERVICE_SCOPES = [
  /** GET /auth/me. */
  'self',
  /** GET /config, /workflows, /system/health. */
  'config:read',
  /** GET /config/analyzers/<id> of its own id only (secrets included: they are its own). */
  'settings:own',
  /** POST /analyze and /analyze/raw, without an origin (no retriever gets the verdict). */
  'jobs:submit',
  /** POST /analyze/raw as itself: the origin is the credential's retriever. */
  'mail:submit',
  /** GET /analyze/<job_id>. */
  'jobs:read',
  /** GET /analyze (every job). */
  'jobs:list',
  /** POST /quarantine: the SMTP filter records the original of a message it quarantined. */
  'quarantine:record',
] as const;
export type ServiceScope = (typeof SERVICE_SCOPES)[number];

/** Who holds a service credential: the platform key itself, or a party with a derived credential. */
type ServiceCaller = { kind: 'platform' } | Party;

const SCOPES_OF = {
  // The platform key (operators' scripts, the benchmarks): submit and read, never speak as a
  // retriever, read a plugin's settings or list every job. Trawl's own services use derived
  // credentials instead.
  platform: ['self', 'config:read', 'jobs:submit', 'jobs:read'],
  plugin: ['self', 'settings:own'],
  retriever: ['self', 'mail:submit', 'quarantine:record'],
} as const satisfies Record<string, readonly ServiceScope[]>;

/** Platform services with a credential of their own, and what it grants. */
const SERVICE_SCOPES_OF: Record<string, readonly ServiceScope[]> = {
  // submits each message with its retriever's credential; reads verdicts (single job, and the job
  // list to catch up after a restart)
  'mail-orchestrator': ['self', 'jobs:read', 'jobs:list'],
};

export interface ServicePrincipal {
  kind: 'service';
  /** `platform`, `plugin:<id>`, `retriever:<name>`, `service:<name>` (logs, audit, submitted_by). */
  username: string;
  roles: [];
  caller: ServiceCaller;
  scopes: ReadonlySet<ServiceScope>;
}

function principalOf(caller: ServiceCaller): ServicePrincipal | null {
  let scopes: readonly ServiceScope[] | undefined;
  if (caller.kind === 'platform') scopes = SCOPES_OF.platform;
  else if (caller.kind === 'plugin') scopes = SCOPES_OF.plugin;
  else if (caller.kind === 'retriever') scopes = SCOPES_OF.retriever;
  else scopes = SERVICE_SCOPES_OF[caller.id];
  if (!scopes) return null;
  return {
    kind: 'service',
    username: caller.kind === 'platform' ? 'platform' : partyLabel(caller),
    roles: [],
    caller,
    scopes: new Set(scopes),
  };
}

/**
 * Checks an `X-Internal-API-Key` value: the platform key itself, or a credential derived from it.
 * Null when it is neither (or names an unknown platform service). Constant time in the secret.
 */
export function serviceAuthenticator(
  platformKey: string | undefined,
): (presented: string) => ServicePrincipal | null {
  if (!platformKey) return () => null;
  const isPlatformKey = secretMatcher(platformKey);
  const platform = principalOf({ kind: 'platform' });
  return (presented) => {
    if (isPlatformKey(presented)) return platform;
    const party = verifyCredential(platformKey, presented);
    return party ? principalOf(party) : null;
  };
}
