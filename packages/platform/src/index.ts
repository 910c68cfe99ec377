export type * from './broker/types.ts';
export type * from './cache/types.ts';
export type * from './store/types.ts';
export type * from './store/repositories.ts';
export { ROLES } from './store/repositories.ts';
