import type {
  LaunchMode,
  LaunchOutcome,
  LaunchPlan,
  Preview,
  PreviewRequest,
  SubmitRequest,
  SubmitResult,
} from '../backend.js';

/**
 * The launch contract of a cluster backend from its `submit` and `preview`: a dry run previews the scheduler
 * commands from the same plan the submission uses; a submission that throws has reached nothing (the backend
 * withdraws a partial one before it throws) and its launch is undone.
 */
export function clusterLaunch(
  submit: (req: SubmitRequest) => Promise<SubmitResult> | SubmitResult,
  preview: (req: PreviewRequest) => Preview,
): (plan: LaunchPlan, mode: LaunchMode) => Promise<LaunchOutcome> {
  return async (plan, mode) => {
    const tasks = plan.tasks();
    if (mode === 'dry-run') {
      const p = preview({
        job: plan.job.name,
        tasks,
        request: plan.request,
        config: plan.config,
        dir: plan.dir,
      });
      return {
        summary: `${tasks.length} task(s) in ${p.commands.length} submission(s)`,
        commands: p.commands,
        warnings: p.warnings,
      };
    }
    const launch = plan.launch!;
    const r = await submit({
      ledger: plan.ledger,
      paths: plan.paths,
      launch,
      tasks,
      settings: { ...plan.settings, termState: 'killed' },
      request: plan.request,
      config: plan.config,
      drover: plan.drover,
    });
    return { handles: r.handles, summary: r.summary, warnings: r.warnings };
  };
}
