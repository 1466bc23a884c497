// The reserver port belongs to the engine (DESIGN.md: the engine owns its ports); this module keeps
// the old import path working for the implementations beside it and for tests.
export { createMemoryTimestampReserver } from "../engine/timestamp-reserver.js";
export type { TimestampReserver } from "../engine/timestamp-reserver.js";
