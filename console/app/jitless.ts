import { config } from "zod";

// zod compiles object parsers with `new Function` after probing whether eval is allowed; the
// console's CSP forbids eval, and Chromium reports even the caught probe as a violation. The
// console parses nothing with zod (the server does), so it is told not to try. Imported first
// by main.tsx: the probe runs when the first object schema is made.
config({ jitless: true });
