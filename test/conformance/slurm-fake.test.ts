import { slurmFake } from './backends.js';
import { runConformance } from './run.js';

runConformance(slurmFake, 'shared');
