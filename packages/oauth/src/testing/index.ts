export { readBody, sendJson, startTestHttpServer, type TestHttpServer } from './http.ts';
export { type TestCertificate, type TestKeyPair, testCertificate, testKeyPair } from './keys.ts';
export {
  type IssuedToken,
  startTestTokenServer,
  type TestTokenServer,
  type TokenServerStats,
} from './token-server.ts';
