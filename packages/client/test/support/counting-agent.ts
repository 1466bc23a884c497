import { Agent, type Dispatcher } from "undici";

/** An undici Agent that records the path of every request it dispatches, to count HTTP calls. */
export class CountingAgent extends Agent {
  readonly paths: string[] = [];

  override dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    this.paths.push(options.path);
    return super.dispatch(options, handler);
  }

  /** How many requests went to a path ending in `/${operation}`. */
  count(operation: string): number {
    return this.paths.filter((p) => p.endsWith(`/${operation}`)).length;
  }
}
