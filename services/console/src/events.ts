import { send } from './api.ts';
import type { JobEvent } from './job-event.ts';

/** `connected`: the stream (re)opened; events may have been missed before it, so read again. */
type StreamEvent = JobEvent | { type: 'connected' };
type Handler = (e: StreamEvent) => void;
const handlers = new Set<Handler>();
let stop: AbortController | null = null;
let linger: number | undefined;

/** Reads GET /api/v1/events with fetch (the bearer header; never a token in a URL), reconnecting. */
async function run(ac: AbortController): Promise<void> {
  while (!ac.signal.aborted) {
    try {
      const res = await send('/api/v1/events', {
        headers: { accept: 'text/event-stream' },
        signal: ac.signal,
      });
      if (res.ok && res.body) {
        for (const h of handlers) h({ type: 'connected' });
        const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
        let buf = '';
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          buf += value;
          let cut = buf.indexOf('\n\n');
          while (cut !== -1) {
            const block = buf.slice(0, cut);
            buf = buf.slice(cut + 2);
            let data = '';
            for (const line of block.split('\n')) {
              if (line.startsWith('data: ')) data += line.slice(6);
            }
            if (data) {
              try {
                const e = JSON.parse(data) as JobEvent;
                for (const h of handlers) h(e);
              } catch {
                // a malformed event is skipped
              }
            }
            cut = buf.indexOf('\n\n');
          }
        }
      }
    } catch {
      // network error or aborted
    }
    if (ac.signal.aborted) return;
    await new Promise((r) => setTimeout(r, 3000));
  }
}

/** Calls `fn` for every job event while subscribed; one stream is shared by every subscriber. */
export function onJobEvent(fn: Handler): () => void {
  handlers.add(fn);
  window.clearTimeout(linger);
  if (!stop) {
    const ac = new AbortController();
    stop = ac;
    void run(ac);
  }
  return () => {
    handlers.delete(fn);
    // kept open a while: the next page usually subscribes at once, and must not miss an event
    if (handlers.size === 0) {
      window.clearTimeout(linger);
      linger = window.setTimeout(() => {
        if (handlers.size === 0 && stop) {
          stop.abort();
          stop = null;
        }
      }, 10_000);
    }
  };
}
