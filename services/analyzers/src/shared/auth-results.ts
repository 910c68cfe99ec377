export { type AuthOutcome, type AuthResults, authservIdOf, readAuthResults } from '@trawl/mail';
