import { gridengine } from './backends.js';
import { runConformance } from './run.js';

runConformance(gridengine, 'alone');
