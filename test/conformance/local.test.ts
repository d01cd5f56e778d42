import { local } from './backends.js';
import { runConformance } from './run.js';

runConformance(local);
