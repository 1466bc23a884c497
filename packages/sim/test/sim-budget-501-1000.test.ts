import { describeSeedBudget } from "./sim-budget.js";

describeSeedBudget(501, 1_000);
