// The dashboard's router: "#/<page>/<arg>?<params>" picks a page module, which renders into
// <main>. <main data-state> says loading, ready or error, and data-hash which address it is for,
// so a test (and a person) knows when a page is done.
import { el } from "./dom.js";
import * as runs from "./pages/runs.js";
import * as run from "./pages/run.js";
import * as pair from "./pages/pair.js";
import * as compare from "./pages/compare.js";
import * as history from "./pages/history.js";
import * as roofline from "./pages/roofline.js";
import * as ceilings from "./pages/ceilings.js";
import * as jobs from "./pages/jobs.js";

const pages = { runs, run, pair, compare, history, roofline, ceilings, jobs };

function parseHash() {
  const [path, query = ""] = location.hash.replace(/^#\/?/, "").split("?");
  const [name = "runs", ...args] = path.split("/").filter(Boolean).map(decodeURIComponent);
  return { name, args, params: new URLSearchParams(query) };
}

let renderCount = 0;

async function show() {
  const main = document.getElementById("page");
  const route = parseHash();
  const page = pages[route.name];
  const mine = ++renderCount;  // a slower render of an older hash must not overwrite a newer one
  main.dataset.page = route.name;
  main.dataset.hash = location.hash || "#/runs";
  main.dataset.state = "loading";
  main.replaceChildren(el("p", { class: "loading" }, "Loading…"));
  for (const a of document.querySelectorAll("header nav a")) {
    a.classList.toggle("current", a.getAttribute("href") === `#/${route.name}`);
  }
  try {
    if (!page) throw new Error(`no page '${route.name}'`);
    const content = await page.render(route);
    if (mine !== renderCount) return;
    document.title = `aisp · ${content.title || route.name}`;
    main.replaceChildren(...content.nodes);
    main.dataset.state = "ready";
  } catch (error) {
    if (mine !== renderCount) return;
    main.replaceChildren(el("div", { class: "error", role: "alert" }, error.message));
    main.dataset.state = "error";
  }
}

window.addEventListener("hashchange", show);
show();
