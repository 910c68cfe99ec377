export { isSpaceCode } from '@trawl/contracts';
