import { TransientError } from '@trawl/contracts';
import type { SenderHistoryRepository, SenderStats } from '@trawl/platform';
import { defineContextProvider } from '@trawl/plugin-sdk';
import { z } from 'zod';
import { SENDER_HISTORY_ERROR_CODES } from './errors.ts';

const SenderHistorySettings = z.object({
  /** Cache hint returned to the platform. */
  ttl_seconds: z.number().int().nonnegative().default(60),
});

/** History of one address or domain, as the provider answers it. */
export interface HistoryFacts {
  known: boolean;
  first_seen: string | null;
  last_seen: string | null;
  message_count: number;
  phishing_count: number;
  /** Days between first_seen and the email's date; null when unknown. */
  days_known: number | null;
}

/** `data` of the provider's answer. */
interface SenderHistoryData {
  available: boolean;
  address: string;
  domain: string;
  sender: HistoryFacts;
  domain_history: HistoryFacts;
  first_time_sender: boolean;
  first_time_domain: boolean;
}

function facts(s: SenderStats | null, at: Date): HistoryFacts {
  if (!s) {
    return {
      known: false,
      first_seen: null,
      last_seen: null,
      message_count: 0,
      phishing_count: 0,
      days_known: null,
    };
  }
  const first = Date.parse(s.first_seen);
  return {
    known: s.message_count > 0,
    first_seen: s.first_seen,
    last_seen: s.last_seen,
    message_count: s.message_count,
    phishing_count: s.phishing_count,
    days_known: Number.isFinite(first)
      ? Math.max(0, Math.floor((at.getTime() - first) / 86_400_000))
      : null,
  };
}

export interface SenderHistoryDeps {
  /** The sender history store; without one the provider answers `available: false`. */
  senders?: SenderHistoryRepository | undefined;
}

/**
 * The `sender-history` context provider: first seen, message count and past phishing verdicts of
 * the sender address and of its domain. The orchestrator records each verdict; this only reads.
 */
export function createSenderHistoryProvider(deps: SenderHistoryDeps = {}) {
  return defineContextProvider({
    id: 'sender-history',
    version: '1.0.0',
    description:
      'First seen, message count and past phishing verdicts of the sender address and its domain',
    settings: SenderHistorySettings,
    async enrich(req, { settings }) {
      const address = req.email.headers.sender.toLowerCase();
      const domain = address.slice(address.lastIndexOf('@') + 1);
      const parsedDate = Date.parse(req.email.headers.date);
      const at = Number.isFinite(parsedDate) ? new Date(parsedDate) : new Date();
      if (!deps.senders) {
        const none = facts(null, at);
        const data: SenderHistoryData = {
          available: false,
          address,
          domain,
          sender: none,
          domain_history: none,
          first_time_sender: false,
          first_time_domain: false,
        };
        return { data: { ...data }, ttl_seconds: settings.ttl_seconds };
      }
      let got: { sender: SenderStats | null; domain: SenderStats | null };
      try {
        got = await deps.senders.get(address);
      } catch (e) {
        throw new TransientError(
          SENDER_HISTORY_ERROR_CODES.unavailable,
          'the sender history cannot be read',
          { cause: e },
        );
      }
      const sender = facts(got.sender, at);
      const domainHistory = facts(got.domain, at);
      const data: SenderHistoryData = {
        available: true,
        address,
        domain,
        sender,
        domain_history: domainHistory,
        first_time_sender: !sender.known,
        first_time_domain: !domainHistory.known,
      };
      return { data: { ...data }, ttl_seconds: settings.ttl_seconds };
    },
  });
}
