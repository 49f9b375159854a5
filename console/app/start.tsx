import { render } from "preact";
import { App } from "./shell.tsx";
import { resume } from "./api.ts";
import { applyTheme } from "./theme.ts";

applyTheme();
await resume();
const root = document.getElementById("app")!;
root.textContent = "";
render(<App />, root);
