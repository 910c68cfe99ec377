#!/usr/bin/env node
// The `trawl` command: runs the TypeScript source through tsx (packages are consumed as source).
import { register } from 'tsx/esm/api';

register();
await import('../src/main.ts');
