import { render } from "preact";
import { App } from "./shell.tsx";
import { resume } from "./api.ts";
import { applyTheme } from "./theme.ts";

applyTheme();
await resume();
render(<App />, document.getElementById("app")!);
