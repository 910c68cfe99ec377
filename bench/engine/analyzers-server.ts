/**
 * Six trivial analyzers for the engine benchmark, in one HTTP server process on loopback:
 * /a1 … /a6 answer at once. Prints {"port":N} when listening; exits on SIGTERM or when its parent's
 * stdin closes.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

const answers = new Map<string, string>();
for (let i = 1; i <= 6; i++) {
  answers.set(
    `/a${i}/internal/analyze`,
    JSON.stringify({
      is_phishing: i % 2 === 0,
      confidence: 0.6 + i / 20,
      indicators: i % 2 === 0 ? [{ type: 'rule_match', value: `a${i}`, confidence: 0.7 }] : [],
    }),
  );
}

const server = createServer((req, res) => {
  const body = answers.get(req.url ?? '');
  req.resume();
  req.on('end', () => {
    if (!body) {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end('{}');
      return;
    }
    res.writeHead(200, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(body),
    });
    res.end(body);
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ port: (server.address() as AddressInfo).port })}\n`);
});
const quit = () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
};
process.on('SIGTERM', quit);
process.stdin.on('end', quit);
process.stdin.resume();
