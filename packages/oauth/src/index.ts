export { type ApiAnswer, type ApiClient, type ApiRequest, createApiClient } from './api-client.ts';
export { readApiAnswer, retryAfterMs } from './bounded.ts';
export {
  ApiAnswerTooLargeError,
  ApiThrottledError,
  ApiUnavailableError,
  OAUTH_ERRORS,
  OAuthError,
} from './errors.ts';
export { OAuthGrant, type OAuthGrantInput, ServiceAccountKeyJson } from './grants.ts';
export { base64url, certificateThumbprints, decodeJwt, signJwt, verifyJwt } from './jwt.ts';
export {
  CLIENT_ASSERTION_TYPE,
  classifyTokenError,
  createTokenSource,
  JWT_BEARER_GRANT,
  type TokenSource,
  type TokenSourceOptions,
} from './token-source.ts';
