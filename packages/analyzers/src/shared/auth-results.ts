export { type AuthResults, readAuthResults } from '@trawl/mail';
