// Start a run from the dashboard: the job's progress streams in (server-sent events from
// GET /api/v1/jobs/{job}/events) and its result lands in the history like a CLI run's. Starting
// needs the server's token, which stays in this tab's session storage only.
import { getJson, sendJson } from "../api.js";
import { badge, el, link, pageHref, section, table } from "../dom.js";

const tokenKey = "aisp-token";

function cancelButton(job, token, outcome) {
  const button = el("button", { type: "button", class: "cancel" }, "Cancel");
  button.addEventListener("click", async () => {
    button.disabled = true;
    try {
      await sendJson("DELETE", `jobs/${job.job}`, token);
    } catch (error) {
      outcome.replaceChildren(el("p", { class: "error" }, error.message));
    }
  });
  return button;
}

function follow(job, token, view) {
  const bar = el("progress", { max: 1, value: 0 });
  const state = el("span", {}, badge("running"));
  const log = el("pre", { class: "log" });
  const outcome = el("div", { class: "outcome" });
  const cancel = cancelButton(job, token, outcome);
  view.replaceChildren(el("h3", {}, `Job ${job.job} `, state, cancel), bar, log, outcome);
  const events = new EventSource(`/api/v1/jobs/${job.job}/events`);
  events.addEventListener("progress", (event) => {
    const p = JSON.parse(event.data);
    bar.max = Math.max(1, p.pairs_total);
    bar.value = p.pairs_done;
    state.replaceChildren(badge(p.state), ` ${p.pairs_done}/${p.pairs_total} pairs`);
  });
  events.addEventListener("line", (event) => {
    log.append(`${JSON.parse(event.data).text}\n`);
    log.scrollTop = log.scrollHeight;
  });
  events.addEventListener("end", async (event) => {
    events.close();
    cancel.remove();
    const status = JSON.parse(event.data);
    state.replaceChildren(badge(status.state), ` exit ${status.exit_code}`);
    if (status.state === "cancelled") {
      outcome.replaceChildren(el("p", { class: "warning" }, "The job was cancelled: nothing was recorded."));
      return;
    }
    bar.value = bar.max;
    const { runs } = await getJson("runs", { limit: 20 });
    const recorded = runs.find((r) => r.artifacts_dir === status.artifacts_dir);
    outcome.replaceChildren(recorded
      ? el("p", { class: "done" }, "Recorded in the history as ", link(pageHref(`run/${recorded.id}`), `run #${recorded.id}`), ".")
      : el("p", { class: "warning" }, "The job ended without a recorded run (see its output above)."));
  });
  events.onerror = () => { if (events.readyState === EventSource.CLOSED) state.append(" (stream closed)"); };
}

// The jobs this server started before the page opened: any of them can be followed again.
function earlierJobs(jobs, token, view) {
  return table([
    { title: "job", cell: (j) => `#${j.job}` },
    { title: "state", cell: (j) => badge(j.state) },
    { title: "pairs", cell: (j) => `${j.pairs_done}/${j.pairs_total}`, numeric: true },
    { title: "artifacts", cell: (j) => el("code", {}, j.artifacts_dir) },
    { title: "", cell: (j) => el("button", { type: "button", class: "follow", onclick: () => follow(j, token(), view) }, "Follow") },
  ], [...jobs].reverse(), { emptyText: "This server has started no job yet." });
}

export async function render() {
  const [{ targets }, { jobs }] = await Promise.all([getJson("targets"), getJson("jobs")]);
  const view = el("div", { class: "job" });
  const message = el("p", { class: "error", hidden: true, role: "alert" });
  const form = el("form", { class: "start" },
    el("label", {}, "targets", el("input", { name: "targets", required: true, list: "job-targets", placeholder: "labs/host:transpose", size: 30 })),
    el("label", {}, "max time per pair (s)", el("input", { name: "max_time_s", type: "number", min: 0, step: "any", value: 1, size: 6 })),
    el("label", {}, el("input", { name: "verify", type: "checkbox" }), " verify only"),
    el("label", {}, "token", el("input", { name: "token", type: "password", autocomplete: "off", value: sessionStorage.getItem(tokenKey) || "" })),
    el("button", { type: "submit" }, "Start"),
    el("datalist", { id: "job-targets" }, targets.map((t) => el("option", { value: t.target }))));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const data = new FormData(form);
    sessionStorage.setItem(tokenKey, data.get("token"));
    message.hidden = true;
    try {
      const job = await sendJson("POST", "jobs", data.get("token"),
        { targets: data.get("targets"), verify: data.get("verify") === "on", max_time_s: Number(data.get("max_time_s") || 0) });
      follow(job, data.get("token"), view);
    } catch (error) {
      message.textContent = error.message;
      message.hidden = false;
    }
  });
  return {
    title: "start a run",
    nodes: [section("Start a run", el("p", { class: "muted" },
      "The server must have been started with --token; the run is recorded in its history like `aisp bench run --history`."),
      form, message, view),
      section("Jobs of this server", earlierJobs(jobs, () => form.elements.token.value, view))],
  };
}
