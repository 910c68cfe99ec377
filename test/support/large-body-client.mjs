// A hostile client in a process of its own (issue 28): POSTs a large body, generated as it is sent,
// to each URL given as JSON in argv[2] ([{name, url, bytes, headers}]), all at once, and prints one
// JSON line: [{name, status, ms, sentWhenAnswered}]. Run by test/hostile/*.test.ts so that the
// sending costs the process that times /health nothing.
import { request } from 'node:http';

function post(t) {
  const t0 = performance.now();
  const chunk = Buffer.from('{"a":[1,2,3],"b":"xxxxxxxx"},'.repeat(2048));
  return new Promise((resolve) => {
    let sent = 0;
    let answered = false;
    const req = request(t.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'content-length': String(t.bytes),
        ...t.headers,
      },
    });
    req.on('response', (res) => {
      const sentWhenAnswered = sent;
      res.resume();
      res.on('end', () => {
        answered = true;
        resolve({
          name: t.name,
          status: res.statusCode,
          ms: performance.now() - t0,
          sentWhenAnswered,
        });
        req.destroy();
      });
    });
    req.on('error', (err) => {
      if (!answered)
        resolve({
          name: t.name,
          status: 0,
          ms: performance.now() - t0,
          error: err.code ?? err.message,
          sentWhenAnswered: sent,
        });
    });
    const pump = () => {
      while (!answered && sent < t.bytes) {
        const n = Math.min(chunk.length, t.bytes - sent);
        sent += n;
        if (!req.write(n === chunk.length ? chunk : chunk.subarray(0, n))) {
          req.once('drain', pump);
          return;
        }
      }
      if (!answered) req.end();
    };
    // the body flows once the connection is up (writes before it would all be buffered at once)
    req.once('socket', (s) => (s.connecting ? s.once('connect', pump) : pump()));
  });
}

const targets = JSON.parse(process.argv[2] ?? '[]');
const results = await Promise.all(targets.map(post));
process.stdout.write(`${JSON.stringify(results)}\n`);
