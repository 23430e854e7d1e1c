"""spmd-bench collectives --plot: bus bandwidth and latency against message size, one line per
implementation of the run (a one-thread memcpy and a two-process shared-memory exchange as the
ceilings of the bandwidth panel), one row of panels per collective.

  plot_collectives.py ROWS.jsonl OUT.png     (ROWS: the run's result rows, one JSON per line)
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def size_label(nbytes):
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if nbytes >= 1 << shift:
            return f"{nbytes / (1 << shift):g} {unit}"
    return f"{nbytes} B"


def main():
    rows_file, png = sys.argv[1:3]
    with open(rows_file) as f:
        rows = [json.loads(line) for line in f if line.strip()]
    references = {
        op: sorted((r for r in rows if r["op"] == op), key=lambda r: r["bytes"])
        for op in ("memcpy", "exchange")
    }
    ops = sorted({r["op"] for r in rows if r["op"] not in references})
    if not ops:
        raise SystemExit("plot_collectives.py: no collective rows to draw")
    fig, axes = plt.subplots(len(ops), 2, figsize=(12, 4.2 * len(ops)), squeeze=False)
    for (bw, lat), op in zip(axes, ops):
        lines = {}
        for r in rows:
            if r["op"] == op:
                lines.setdefault(f"{r['impl']} ({r['transport']})", []).append(r)
        for name, points in sorted(lines.items()):
            points.sort(key=lambda r: r["bytes"])
            sizes = [r["bytes"] for r in points]
            bw.plot(sizes, [r["busbw_GBps"] for r in points], marker="o", label=name)
            lat.plot(sizes, [r["p50_us"] for r in points], marker="o", label=name)
        for op_name, style, label in (
            ("memcpy", "--", "memcpy (one thread)"),
            ("exchange", ":", "two-copy exchange, 2 processes (per direction)"),
        ):
            ref = references[op_name]
            if ref:
                bw.plot([r["bytes"] for r in ref], [r["busbw_GBps"] for r in ref],
                        linestyle=style, color="grey", label=label)
        processes = max(r["processes"] for r in rows if r["op"] == op)
        for ax, what in ((bw, "bus bandwidth, GB/s"), (lat, "p50 latency, µs")):
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_xlabel("message size")
            ax.set_ylabel(what)
            ax.set_title(f"{op}, {processes} processes: {what.split(',')[0]}")
            ticks = sorted({r["bytes"] for r in rows if r["op"] == op})
            ax.set_xticks(ticks, [size_label(t) for t in ticks], rotation=45)
            ax.grid(True, which="major", alpha=0.3)
            ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    print(f"plot_collectives.py: wrote {png}")


if __name__ == "__main__":
    main()
