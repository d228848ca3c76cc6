"""doctor: which validation runs, and whether the real MDX compiler is at hand."""

from __future__ import annotations

import shutil
from pathlib import Path

from gitpub.config import Config
from gitpub.ops.doctor.report import OK, PROBLEM, Report

# In a source checkout of gitpub, contrib/ sits beside the package.
CONTRIB_COMPILER = Path(__file__).resolve().parents[2] / "contrib" / "mdx-validate"


def check_validation(report: Report, cfg: Config, compiler: Path = CONTRIB_COMPILER) -> None:
    spec = cfg.steps.validate
    if not spec:
        report.add("validate", OK, "validation is off ([steps] validate = [])")
        return
    if isinstance(spec, tuple):
        if shutil.which(spec[0]) is None:
            report.add(
                "validate",
                PROBLEM,
                f"the validate command {spec[0]!r} is not found",
                "install it, or set [steps] validate to a command that exists",
            )
        else:
            report.add("validate", OK, f"validate runs {' '.join(spec)}")
        return
    report.add("validate", OK, f"{spec}: .md front matter; .mdx front matter and JSX balance")
    script = compiler / "validate.mjs"
    node = shutil.which("node")
    installed = (compiler / "node_modules" / "@mdx-js" / "mdx" / "package.json").is_file()
    if ".mdx" in cfg.publish.suffixes and node and script.is_file() and installed:
        report.add(
            "validate",
            OK,
            f"Node and the MDX compiler are here; to validate with the compiler itself: "
            f'[steps] validate = ["{node}", "{script}"]',
        )
