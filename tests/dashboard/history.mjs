// The history the dashboard test serves: real host runs recorded by the aisp binary (as
// tests/integration/host_history.hpp records them): labs/host:transpose, then the whole labs/host
// group (its strided sum does FLOPs, so run #2 has a roofline), and an expectations file made from
// the first run, so the history page has a band to draw.
import { execFileSync } from "node:child_process";
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";

export const target = "labs/host:transpose";

function aispRun(aisp, args) {
  execFileSync(aisp, args, { stdio: ["ignore", "pipe", "inherit"], timeout: 600000 });
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
  const expectationsDir = join(work, "expectations");
  aispRun(aisp, ["bench", "expectations", "--hardware", "host", "--file", join(expectationsDir, "host.json"),
                 "--run", join(work, "run1"), "--update", "--min-speedup", "1"]);
  return { db, expectationsDir, jobsDir: join(work, "jobs") };
}
