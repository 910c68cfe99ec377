import { deriveCredential, Party, PLATFORM_SERVICES } from '@trawl/contracts';
import { usageError } from '../errors.ts';
import type { CliIo } from '../io.ts';

/**
 * `trawl credentials <plugin|retriever|service> <id>`: prints the party's own credential, derived
 * from the platform key (INTERNAL_API_KEY in the environment, or on standard input with
 * --key-stdin). No server is asked: the gateway and the orchestrators derive the same one. Give it
 * to that party only (docs/security.md).
 */
export async function credentialsCommand(
  io: CliIo,
  opts: { kind: string; id: string; keyStdin: boolean },
): Promise<number> {
  const party = Party.safeParse({ kind: opts.kind, id: opts.id });
  if (!party.success) {
    throw usageError(
      'credentials: use plugin <id>, retriever <name> or service <name> (letters, digits, _ . -; 128 at most)',
    );
  }
  if (
    party.data.kind === 'service' &&
    !(PLATFORM_SERVICES as readonly string[]).includes(party.data.id)
  ) {
    throw usageError(
      `credentials: platform services with a credential: ${PLATFORM_SERVICES.join(', ')}`,
    );
  }
  const key = opts.keyStdin
    ? (await io.readStdin()).toString('utf8').replace(/\r?\n$/, '')
    : io.env.INTERNAL_API_KEY;
  if (!key) {
    throw usageError(
      'credentials: the platform key is needed: set INTERNAL_API_KEY, or pass it on standard input with --key-stdin',
    );
  }
  io.stdout.write(`${deriveCredential(key, party.data)}\n`);
  return 0;
}
