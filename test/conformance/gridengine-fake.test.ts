import { gridengineFake } from './backends.js';
import { runConformance } from './run.js';

runConformance(gridengineFake, 'shared');
