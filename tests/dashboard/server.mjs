// `aisp serve` on a free port of 127.0.0.1, for the dashboard test; resolves with its base URL
// once it printed where it listens.
import { spawn } from "node:child_process";

export function startServer(aisp, { db, jobsDir, expectationsDir, token }) {
  const child = spawn(aisp, ["serve", "--port", "0", "--db", db, "--jobs-dir", jobsDir, "--expectations-dir", expectationsDir,
                             "--token", token], { stdio: ["ignore", "ignore", "pipe"] });
  return new Promise((resolve, reject) => {
    let said = "";
    const timer = setTimeout(() => reject(new Error(`aisp serve did not start in 20 s: ${said}`)), 20000);
    child.stderr.on("data", (chunk) => {
      said += chunk;
      const found = said.match(/listening on (http:\/\/127\.0\.0\.1:\d+)/);
      if (found) {
        clearTimeout(timer);
        resolve({ base: found[1], stop: () => child.kill("SIGTERM") });
      }
    });
    child.on("exit", (code) => reject(new Error(`aisp serve exited (${code}): ${said}`)));
  });
}
