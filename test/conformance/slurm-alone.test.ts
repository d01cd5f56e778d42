import { slurm } from './backends.js';
import { runConformance } from './run.js';

runConformance(slurm, 'alone');
