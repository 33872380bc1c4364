#!/usr/bin/env python3
"""Fill the chapter READMEs from device results: each section's `Measured on H100: ...` line
(the section is the `## <pair>:` heading above it) and a results table between
`<!-- results:begin -->` and `<!-- results:end -->` at the end of the README.
Usage: readme_measured.py RESULTS.json [RESULTS.json ...]  (later files win for a target)"""
import gzip
import json
import pathlib
import re
import sys

root = pathlib.Path(__file__).resolve().parent.parent
pairs, runs = {}, {}

# Where results shape nothing in the timings, the README leaves them out of the command it shows.
WHERE_TO = {"--artifacts-dir", "--json", "--history", "--golden-file", "--quarantine-file", "--trace"}
# A resumed run is the one run it continues (Note [resumed runs]): its command is that run's.
DROPPED = {"--resume"}


def command_of(doc):
    """The run's command as recorded (aisp records it since 2026-11-26), without the output
    paths; older results only have their targets and sampling limit."""
    words = doc.get("command", "").split()
    if not words:
        config = doc["config"]
        line = "aisp bench run --targets " + " ".join(config.get("targets", []))
        if config.get("max_time_s", 15) != 15:
            line += f' --max-time {config["max_time_s"]:g}'
        return line
    kept, skip = ["aisp"], False
    for word in words[1:]:
        if skip:
            skip = False
        elif word in WHERE_TO:
            skip = True
        elif word in DROPPED:
            continue
        else:
            kept.append(word)
    return " ".join(kept)


for path in sys.argv[1:]:
    doc = json.load((gzip.open if path.endswith('.gz') else open)(path, 'rt'))  # raw results are stored gzipped
    gpu = doc["device"]["gpus"][0] if doc["device"].get("gpus") else {}
    run = {"card": gpu.get("name", "?"), "uuid": gpu.get("uuid", "?")[:12], "date": doc["started_at"][:10],
           "mode": doc["config"].get("mode", "cold"), "command": command_of(doc)}
    for p in doc["pairs"]:
        pairs[p["target"]] = p
        runs[p["target"]] = run


def us(seconds):
    return f"{seconds * 1e6:,.1f} µs" if seconds < 1e-2 else f"{seconds * 1e3:,.2f} ms"


# The bandwidth ceiling a pair's SOL % divides by (results' roofline.data_path; "pcie" is the
# name both directions had before one-direction copies got their own ceiling).
CEILING_NAMES = {"pcie": "both PCIe directions", "pcie_both_directions": "both PCIe directions",
                 "pcie_one_direction": "one PCIe direction"}


def sol_ci(v):
    """The SOL % at the ends of the median's 95% CI: results' sol_memory_pct_ci, or for older
    results the same arithmetic on median_ci_s (SOL scales with 1 / time)."""
    if v.get("sol_memory_pct_ci"):
        return v["sol_memory_pct_ci"]["low"], v["sol_memory_pct_ci"]["high"]
    ci = v.get("median_ci_s") or {}
    if not ci.get("low") or not ci.get("high") or not v.get("sol_memory_pct"):
        return None
    at_median = v["sol_memory_pct"] * v["median_s"]
    return at_median / ci["high"], at_median / ci["low"]


def ceiling_source(p):
    """Where the pair's bandwidth ceiling came from, as its results record it: "datasheet h100"
    (no probe ran on that machine) or a measured one."""
    return p.get("roofline", {}).get("ceilings", {}).get("source", "")


def memory_ceiling_name(source):
    return "the datasheet's memory bandwidth" if source.startswith("datasheet") else "the copy ceiling"


def ceilings_sentence(chapter_pairs):
    """What the SOL % column divides by: each distinct source and bandwidth of the pairs' device-memory ceilings."""
    seen = {}
    for p in chapter_pairs:
        roofline = p.get("roofline", {})
        if roofline.get("data_path", "device_memory") == "device_memory" and roofline.get("bandwidth_ceiling_bytes_per_s"):
            seen.setdefault((ceiling_source(p) or "unrecorded", roofline["bandwidth_ceiling_bytes_per_s"]), None)
    if not seen:
        return ""
    named = ", ".join(f"{source} {bandwidth / 1e9:,.0f} GB/s" for source, bandwidth in seen)
    return f" SOL % is against the device-memory ceiling the results record ({named})."


def rate(v, path="device_memory", source=""):
    parts = []
    if v["achieved_bytes_per_s"] > 0:
        ceiling = CEILING_NAMES.get(path, memory_ceiling_name(source))
        ci = sol_ci(v)
        spread = f" [{ci[0]:.1f}, {ci[1]:.1f}]" if ci else ""
        parts.append(f'{v["achieved_bytes_per_s"] / 1e9:,.0f} GB/s, {v["sol_memory_pct"]:.1f}%{spread} of {ceiling}')
    if v["achieved_flops_per_s"] > 1e11:
        unit = v.get("math_unit", "fp32")
        parts.append(f'{v["achieved_flops_per_s"] / 1e12:.1f} TFLOP/s, {v["sol_compute_pct"]:.1f}% of the {unit} peak')
    if v.get("sol_special_function_pct", 0) > 0:  # exp-bound pairs: the MUFU peak is their limit
        ops = v["achieved_special_function_ops_per_s"]
        parts.append(f'{ops / 1e12:.2f} T special-function ops/s, {v["sol_special_function_pct"]:.1f}% of the SFU peak')
    if v.get("vs_peer"):
        parts.append(f'{100 * v["vs_peer"]["point"]:.1f}% of the peer')
    return "; ".join(parts)


def sentence(p, run):
    if p["status"] != "pass":
        return f'Measured on H100: **{p["status"]}** ({p["message"][:200]}).'
    variants = {v["name"]: v for v in p["variants"]}
    base = variants["baseline"]
    path = p.get("roofline", {}).get("data_path", "device_memory")
    mode = p.get("timing_mode") or run["mode"]  # a pair may be timed in its own mode (Note [short calls])
    text = (f'Measured on {run["card"]} ({run["uuid"]}…, {run["date"]}, {mode} mode, '
            f'`{run["command"]}`): baseline {us(base["median_s"])} (IQR {us(base["iqr_s"])}; {rate(base, path, ceiling_source(p))})')
    for s in p["speedups"]:
        v = variants[s["variant"]]
        sp = s["speedup"]
        text += (f'; {s["variant"]} {us(v["median_s"])} (IQR {us(v["iqr_s"])}; {rate(v, path, ceiling_source(p))}), speedup '
                 f'**{sp["point"]:.3f}x [{sp["low"]:.3f}, {sp["high"]:.3f}]**, `{s["verdict"]}`')
    return text + ". Every variant verified; the baseline against its twin sets the noise floor."


def table(chapter_pairs):
    rows = ["| pair | variant | median | speedup [95% CI] | verdict | GB/s (SOL %) | TFLOP/s | vs peer | card |",
            "|---|---|---|---|---|---|---|---|---|"]
    for p in chapter_pairs:
        speed = {s["variant"]: s for s in p["speedups"]}
        for v in p["variants"]:
            if v["name"] == "baseline_twin" or not v.get("sample_count"):
                continue
            s = speed.get(v["name"])
            sp = f'{s["speedup"]["point"]:.3f}x [{s["speedup"]["low"]:.3f}, {s["speedup"]["high"]:.3f}]' if s else "—"
            gbs = f'{v["achieved_bytes_per_s"] / 1e9:,.0f} ({v["sol_memory_pct"]:.1f}%)'
            tf = f'{v["achieved_flops_per_s"] / 1e12:.2f}' if v["achieved_flops_per_s"] > 0 else "—"
            peer = f'{100 * v["vs_peer"]["point"]:.1f}%' if v.get("vs_peer") else "—"
            rows.append(f'| {p["target"].split(":")[1]} | {v["name"]} | {us(v["median_s"])} | {sp} | '
                        f'{s["verdict"] if s else "—"} | {gbs} | {tf} | {peer} | {runs[p["target"]]["uuid"]}… |')
    return "\n".join(rows)


by_chapter = {}
for target, p in sorted(pairs.items()):
    by_chapter.setdefault(target.split(":")[0], []).append(p)
for chapter, chapter_pairs in by_chapter.items():
    readme = root / (chapter if chapter.startswith("labs/") else "chapters/" + chapter) / "README.md"
    if not readme.exists():
        continue
    text = readme.read_text()
    for p in chapter_pairs:
        name = p["target"].split(":")[1]
        # The section's own line: never past the next "## " heading.
        pattern = re.compile(r"(## " + re.escape(name) + r":(?:(?!\n## ).)*?\n)(Measured on (?:NVIDIA )?H\d00[^\n]*)", re.S)
        match = pattern.search(text)
        if match is None:
            print(f"{p['target']}: no section with a 'Measured on H100' line", file=sys.stderr)
            continue
        text = text[:match.start(2)] + sentence(p, runs[p["target"]]) + text[match.end(2):]
    run = runs[chapter_pairs[0]["target"]]
    block = (f"<!-- results:begin -->\n## Results on {run['card']}\n\n"
             f"Generated by `scripts/readme_measured.py` from the device runs of {run['date']} ({run['mode']} mode; "
             f"the card column names each row's GPU); raw results in `docs/results/raw/`.{ceilings_sentence(chapter_pairs)}\n\n{table(chapter_pairs)}\n<!-- results:end -->")
    if "<!-- results:begin -->" in text:
        text = re.sub(r"<!-- results:begin -->.*?<!-- results:end -->", lambda _: block, text, flags=re.S)
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    readme.write_text(text)
    print(f"{readme.relative_to(root)}: {len(chapter_pairs)} pairs")
