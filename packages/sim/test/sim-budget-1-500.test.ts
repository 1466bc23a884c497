import { describeSeedBudget } from "./sim-budget.js";

describeSeedBudget(1, 500);
