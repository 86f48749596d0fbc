#!/usr/bin/env node
// `npx authcap …`: runs the TypeScript CLI through tsx's loader (no build step).
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../client/cli.ts');
process.exitCode = await main(process.argv.slice(2));
