// `npm run docs:errors`: regenerates docs/errors.md from domain/errorCatalog.ts.
import { errorsDocument } from '../api/errorTable.js';
import { writeGenerated } from './generatedFile.js';

writeGenerated(new URL('../docs/errors.md', import.meta.url), errorsDocument());
