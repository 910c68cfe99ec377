import { startInlineMilter } from '@trawl/retriever-smtp/testing';

/**
 * The inline milter as the benches run it (bench:smtp, bench:profile): every verdict delivered (a
 * bench measures the path, not the policy), no push path (the orchestrator URL is never called),
 * its jobs recorded as retriever `smtp-inline`; `settled()` resolves once every job is recorded.
 */
export async function benchInlineMilter(o: {
  analysis: Parameters<typeof startInlineMilter>[0]['analysis'];
  milterPort: number;
  httpPort: number;
}) {
  const milter = await startInlineMilter({
    smtp: {
      mail_orchestrator_url: 'http://127.0.0.1:9',
      policy: 'none=deliver,low=deliver,medium=deliver,high=deliver,critical=deliver',
      unanalyzed_action: 'deliver',
      deadline_ms: 60_000,
    },
    ...o,
    retriever: 'smtp-inline',
  });
  return {
    milter,
    settled: (): Promise<void> => milter.records?.settled() ?? Promise.resolve(),
  };
}
