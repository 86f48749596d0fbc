// `npm run docs:config`: regenerates docs/configuration.md from runtime/settings/catalog.ts and the deployment schema.
import { configurationReference } from '../runtime/settings/reference.js';
import { writeGenerated } from './generatedFile.js';

writeGenerated(new URL('../docs/configuration.md', import.meta.url), configurationReference());
