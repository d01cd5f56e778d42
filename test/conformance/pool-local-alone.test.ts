import { poolLocal } from './backends.js';
import { runConformance } from './run.js';

runConformance(poolLocal, 'alone');
