"""The Kubernetes Job template of docs/src/workers.md against the Kubernetes API's own schemas
(kubernetes-validate's copies), strictly: no unknown field, every required one, on each version
from 1.27 (podFailurePolicy's DisruptionTarget condition, beta) to the newest it knows.
No cluster can be started on this machine; this is the part of the template that can be checked.
Usage: <venv>/bin/python .ci/kube_template.py [markdown file]"""
import re
import sys

import kubernetes_validate
from kubernetes_validate.utils import all_versions
import yaml

DOC = sys.argv[1] if len(sys.argv) > 1 else "docs/src/workers.md"
HEADING = "## A Kubernetes Job"


def template(text: str) -> str:
    """The first ```yaml block after the heading."""
    section = text.split(HEADING, 1)
    if len(section) < 2:
        sys.exit(f"{DOC}: no section '{HEADING}'")
    block = re.search(r"```yaml\n(.*?)```", section[1], re.S)
    if not block:
        sys.exit(f"{DOC}: no yaml block under '{HEADING}'")
    return block.group(1)


def main() -> int:
    job = yaml.safe_load(template(open(DOC, encoding="utf-8").read()))
    versions = sorted({v for v in all_versions() if tuple(map(int, v.split("."))) >= (1, 27)},
                      key=lambda v: tuple(map(int, v.split("."))))
    failed = 0
    for v in versions:
        try:
            kubernetes_validate.validate(job, v, strict=True)
        except kubernetes_validate.ValidationError as e:
            path = ".".join(str(p) for p in e.path)
            print(f"{DOC}: the Kubernetes Job is not valid for {v}: {path}: {e.message}")
            failed += 1
    if failed:
        return 1
    print(f"{DOC}: the Kubernetes Job is valid for Kubernetes {versions[0]} to {versions[-1]} (strict)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
