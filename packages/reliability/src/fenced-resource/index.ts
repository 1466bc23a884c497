export { FencedCounter } from "./fenced-counter.js";
export { UnfencedCounter } from "./unfenced-counter.js";
export type { CounterResource, OperationSink, ResourceAccess, ResourceAnswer } from "./counter-resource.js";
