/**
 * A smaller TurboFan inlining budget for a first cook (V8's `--max-inlined-bytecode-size-cumulative`,
 * set at run time, like leanHeap.ts's flag).
 *
 * Why: a first cook is a few seconds of JavaScript per isolate (the main thread and each cook
 * worker), and each isolate optimizes the same hot functions again, on V8's background threads,
 * where `--cpu-prof` does not look. perf's on-CPU samples of a cold 20k-asset rgba8 cook
 * (`node --perf-basic-prof`): ~2.2 s of the process's ~12 s of CPU were TurboFan compile jobs on
 * those threads, the largest single item of the cook, most of it in the big graphs that inlining
 * builds (registry cache encoder, package table parser, cook cache record writer), a third of it
 * compiled again after a deoptimization. With a cumulative budget of 300 bytecodes instead of
 * 920, the compile threads took ~0.5-0.8 s less and the JavaScript threads no measurable more
 * (interleaved cold cooks, see the commit). A longer run amortizes its compiles: a very large
 * project (lean-heap mode) goes back to V8's budget for what it compiles after that.
 */
import v8 from 'node:v8';

/** The cumulative inlining budget (bytecodes) of a first cook. */
export const SHORT_RUN_INLINING = 300;
/** V8's own (Node 20). */
const V8_INLINING = 920;

let on = false;

/**
 * Whether the short-run budget is in force after this call: `true` sets it, `false` restores V8's.
 * `LUMINA_SHORT_RUN_JIT=0` never sets it. V8 flags are process-wide: every isolate's next compile
 * uses the budget in force then.
 */
export function shortRunInlining(want: boolean, env: NodeJS.ProcessEnv = process.env): boolean {
  const next = want && env.LUMINA_SHORT_RUN_JIT !== '0';
  if (next !== on) {
    v8.setFlagsFromString(`--max-inlined-bytecode-size-cumulative=${next ? SHORT_RUN_INLINING : V8_INLINING}`);
    on = next;
  }
  return on;
}

/** Whether the short-run budget is in force. */
export function shortRunInliningOn(): boolean {
  return on;
}
