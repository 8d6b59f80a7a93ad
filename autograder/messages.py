"""Plain-text reports of check results, as students and instructors read them."""


def points(x: float) -> str:
    return f"{x:g}"


def part_text(result) -> str:
    """One part: a header line, then one line per check, with the diagnosis under a failure."""
    lines = [f"{result.name}: {points(result.score)} / {points(result.max_score)}"
             + ("" if result.status == "graded" else f"  [{result.status}]")]
    for c in result.checks:
        mark = {"passed": "✔", "failed": "✘", "not credited": "○"}.get(c.status, "·")
        lines.append(f"  {mark} {c.title} ({points(c.score)}/{points(c.max_score)})")
        if c.message:
            lines.append(f"      {c.message}")
        if c.diagnosis:
            lines.append(f"      likely cause: {c.diagnosis}")
    return "\n".join(lines)
