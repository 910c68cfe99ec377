/**
 * The V8 flags the embedded process runs with (`pnpm start`; ADR 027). `--no-wasm-dynamic-tiering`:
 * PGlite's WebAssembly (PostgreSQL, on Trawl's own thread) is optimised in the background from the
 * start instead of function by function once each is hot, which left much of it in baseline code
 * after thousands of messages. The start script must carry each of them (a test checks it).
 */
export const EMBEDDED_NODE_FLAGS: readonly string[] = ['--no-wasm-dynamic-tiering'];
