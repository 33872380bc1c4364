// The history the dashboard test serves: real host runs recorded by the aisp binary (as
// tests/integration/host_history.hpp records them): labs/host:transpose, then the whole labs/host
// group (its strided sum does FLOPs, so run #2 has a roofline), and an expectations file made from
// the first run whose transpose passed, so the history page has a band to draw.
import { spawnSync } from "node:child_process";
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";

export const target = "labs/host:transpose";

// Exit 1 is a run whose pair failed a check (on a loaded CI core, a host pair's outliers can):
// it is still recorded, and the dashboard shows it as it is. Anything else is an error.
function aispRun(aisp, args) {
  const run = spawnSync(aisp, args, { stdio: ["ignore", "pipe", "inherit"], timeout: 600000, encoding: "utf8" });
  if (run.status !== 0 && run.status !== 1) throw new Error(`aisp ${args.join(" ")} exited ${run.status}: ${run.stdout}`);
  if (run.status === 1) console.log(`note: aisp ${args.slice(0, 4).join(" ")} recorded a failed check:\n${run.stdout}`);
  return run.stdout;
}

// Two runs, 5 and 15 s on a CI core; returns the paths the server needs.
export function recordHistory(aisp, sourceDir, work) {
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  const db = join(work, "aisp.db");
  for (const [name, targets] of [["run1", target], ["run2", "labs/host"]]) {
    aispRun(aisp, ["bench", "run", "--targets", targets, "--size", "rows=1024", "--size", "cols=1024", "--max-time", "1",
                   "--min-time", "0.1", "--quiet", "--golden-file", join(sourceDir, "expectations", "goldens.json"),
                   "--artifacts-dir", join(work, name), "--history", db]);
  }
  // The expectation comes from the first run whose transpose passed (a failed one writes none).
  const expectationsDir = join(work, "expectations");
  for (const name of ["run1", "run2"]) {
    const said = aispRun(aisp, ["bench", "expectations", "--hardware", "host", "--file", join(expectationsDir, "host.json"),
                                "--run", join(work, name), "--update", "--min-speedup", "1"]);
    if (!said.startsWith("0 entries")) break;
  }
  return { db, expectationsDir, jobsDir: join(work, "jobs") };
}
